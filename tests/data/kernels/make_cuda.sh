#!/bin/sh
# Builds the CUDA test libraries of tests/data/kernels with nvcc (13.0 made the
# committed ones: `nvcc --version` is in nvcc-version.txt). Not run by the suite:
# CI has no nvcc; the .so files are committed, and cuobjdump.txt is
# `cuobjdump --list-elf --list-ptx` of each, run on the GPU host.
set -eu
cd "$(dirname "$0")"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
common="-shared -Xcompiler -fPIC -O2 -cudart shared"
# sm_80, sm_90a, compute_90 (PTX), sm_120, sm_100f: every kind of target.
$NVCC $common -o libk_multi.so saxpy.cu \
  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a \
  -gencode arch=compute_90,code=compute_90 -gencode arch=compute_120,code=sm_120 \
  -gencode arch=compute_100f,code=sm_100f
# No sm_90 and no PTX at or below 9.0: nothing runs on an H100/H200.
$NVCC $common -o libk_no_sm90.so saxpy.cu \
  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
  -gencode arch=compute_120,code=sm_120 -gencode arch=compute_100,code=compute_100
# Every entry compressed (the flag CUDA's own libraries are built with).
$NVCC $common -o libk_compressed.so saxpy.cu -Xfatbin=-compress-all \
  -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90
# Relocatable device code: __nv_relfatbin beside the device-linked .nv_fatbin.
$NVCC $common -rdc=true -o libk_rdc.so saxpy.cu \
  -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=compute_89
strip --strip-unneeded libk_*.so
$NVCC --version > nvcc-version.txt
# Fatbins kept as data, as cuFFT keeps ~24000 in .ldata: libk_no_sm90.so with a
# .ldata of other bytes around two copies of libk_compressed.so's fatbin.
objcopy -O binary --only-section=.nv_fatbin libk_compressed.so fatbin.tmp
{ head -c 100 /dev/zero | tr '\0' 'x'; cat fatbin.tmp; head -c 20000 /dev/zero | tr '\0' 'y'; cat fatbin.tmp; } > ldata.tmp
objcopy --add-section .ldata=ldata.tmp --set-section-flags .ldata=alloc,data libk_no_sm90.so libk_ldata.so
rm -f fatbin.tmp ldata.tmp
# A module with no kernel at all, for sm_75 only (cuFFTW's one cubin is such a module).
$NVCC $common -o libk_empty.so empty.cu -gencode arch=compute_75,code=sm_75
strip --strip-unneeded libk_empty.so
