#!/bin/sh
# Builds the HIP test libraries of tests/data/kernels with Debian 12's hipcc
# (5.2, clang 15: apt-get install hipcc). Not run by the suite (CI does not
# install hipcc); the .so files are committed. clang 15's bundler does not
# compress, so the CCOB forms (LLVM 18+, ROCm 6) are made from the real bundle
# by make_ccob.py, byte for byte as OffloadBundler.cpp lays them out.
set -eu
cd "$(dirname "$0")"
hipcc -shared -fPIC -O2 -o libh_multi.so vadd.hip \
  --offload-arch=gfx90a:xnack- --offload-arch=gfx908:sramecc+:xnack- --offload-arch=gfx1030
# Two translation units: two bundles, one after the other, in one .hip_fatbin.
hipcc -shared -fPIC -O2 -o libh_two.so vadd.hip vscale.hip --offload-arch=gfx906 --offload-arch=gfx1031
strip --strip-unneeded libh_multi.so libh_two.so
objcopy -O binary --only-section=.hip_fatbin libh_multi.so bundle.tmp
for v in 2 3; do
  python3 make_ccob.py bundle.tmp ccob.tmp --version $v --method zstd
  objcopy --update-section .hip_fatbin=ccob.tmp libh_multi.so libh_ccob_v$v.so
done
python3 make_ccob.py bundle.tmp ccob.tmp --version 3 --method zlib
objcopy --update-section .hip_fatbin=ccob.tmp libh_multi.so libh_ccob_zlib.so
rm -f bundle.tmp ccob.tmp
hipcc --version > hipcc-version.txt 2>&1 || true
