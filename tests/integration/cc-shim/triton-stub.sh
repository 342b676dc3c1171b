#!/usr/bin/env bash
# The Triton launcher stub, built exactly as triton/runtime/build.py does it,
# with CC naming the shim: the 32-bit decoy dir comes FIRST among the -L dirs,
# so linking works only because the shim skips the wrong-class library.
source "$(dirname "$0")/lib.sh"
py_include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
decoy=$HELPERS/cuda32 real=$HELPERS/cuda64
[[ $(readelf -h "$decoy/libcuda.so.1" | awk '/Class:/{print $2}') == ELF32 ]] || fail "decoy is not ELF32"
[[ $(readelf -h "$real/libcuda.so.1" | awk '/Class:/{print $2}') == ELF64 ]] || fail "stand-in is not ELF64"

cp "$HERE/triton_stub.c" cuda_utils.c
# zig alone fails on this command line: lld takes the decoy and stops.
if "$ZIG" cc cuda_utils.c -O3 -shared -fPIC -Wno-psabi -o direct"$ext" -l:libcuda.so.1 -L"$decoy" -L"$real" -I"$py_include" 2>direct.err; then
  fail "plain zig cc linked against the decoy order; the test no longer shows the shim's ELF check"
fi
expect_contains "plain zig's error" "$(cat direct.err)" "incompatible"

CC=$SHIM "$SHIM" cuda_utils.c -O3 -shared -fPIC -Wno-psabi -o cuda_utils"$ext" \
  -l:libcuda.so.1 -L"$decoy" -L"$real" -I"$py_include" 2>build.err || fail "shim build failed: $(cat build.err)"
[[ ! -s build.err ]] || fail "shim printed something on success: $(cat build.err)"

needed=$(readelf -d cuda_utils"$ext" | awk '/NEEDED/{print $NF}' | tr -d '[]' | tr '\n' ' ')
expect_contains "DT_NEEDED" "$needed" "libcuda.so.1 "
[[ $needed != *"/"* ]] || fail "a library is needed by path, not by name: $needed"
ok "stub NEEDs libcuda.so.1 by name ($needed)"

got=$(LD_LIBRARY_PATH=$real python3 -c "
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
print(lib.stub_init(3))" "$PWD/cuda_utils$ext")
expect_eq "stub_init(3) through the stand-in libcuda" "$got" 45
ok "stub loads and calls cuInit of the stand-in"
