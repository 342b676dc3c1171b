#!/usr/bin/env bash
# Issue 12: with CC naming the shim, it answers as gcc does. Each check runs the
# same thing through plain zig cc first, to show what the shim fixes.
source "$(dirname "$0")/lib.sh"
export CC=$SHIM   # as Triton, CMake and ./configure run it
host_glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')

# 1. The host's glibc: its version in the headers, and functions newer than 2.19 link.
cat > glibc.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
  char b[4];
  struct statx st;
  if (getrandom(b, sizeof b, 0) != sizeof b) return 1;
  int fd = memfd_create("x", 0);
  if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &st) != 0) return 2;
  free(reallocarray(NULL, 2, 2));
  if (close_range(1000, 1001, 0) != 0) return 3;
  printf("%d.%d\n", __GLIBC__, __GLIBC_MINOR__);
  return 0;
}
C
set +e; "$ZIG" cc -fno-sanitize=all glibc.c -o glibc-zig >zig.log 2>&1; zrc=$?; set -e
[[ $zrc -ne 0 ]] || fail "plain zig cc (its own libc detection refused) linked glibc $host_glibc functions"
"$SHIM" glibc.c -o glibc-shim 2>shim.err || fail "shim: $(cat shim.err)"
[[ ! -s shim.err ]] || fail "shim printed something on success: $(cat shim.err)"
expect_eq "__GLIBC__.__GLIBC_MINOR__" "$(./glibc-shim)" "$host_glibc"
ok "glibc $host_glibc: getrandom, memfd_create, statx, reallocarray, close_range link (plain zig: $(grep -m1 error zig.log | cut -c1-60))"

# 1b. A host glibc newer than zig can build stubs for (2.36 here, 2.39 on
# Ubuntu 24.04; zig 0.11 stops at 2.34), linked against zig's own stubs
# (-nostdinc keeps the host's libc6-dev out, as on a host without it): zig
# warns whenever it builds the stubs (each fresh cache: Triton's launcher
# builds on Ubuntu 24.04 all printed it) when told the host's release; the
# shim names the newest zig knows, and nothing is printed, as with gcc.
# Each with a cache of its own, so that the stubs are really built.
zig_newest=$(sed -n 's/^ *"\(2\.[0-9]*\)\.[0-9]*",\{0,1\}$/\1/p' <("$ZIG" targets) | sort -t. -k2,2n | tail -1)
[[ -n $zig_newest ]] || fail "no glibc version in zig targets"
if [[ $(printf '%s\n' "$host_glibc" "$zig_newest" | sort -t. -k2,2n | tail -1) != "$zig_newest" ]]; then
  printf 'int main(void) { return 0; }\n' > newer.c
  ZIG_GLOBAL_CACHE_DIR=$PWD/zig-cache-zig ZIG_LOCAL_CACHE_DIR=$PWD/zig-cache-zig \
    "$ZIG" cc -target "x86_64-linux-gnu.$host_glibc" -nostdinc newer.c -o newer-zig 2>zig.err || fail "plain zig: $(cat zig.err)"
  grep -q "zig cannot build new glibc version $host_glibc" zig.err || fail "plain zig did not warn about glibc $host_glibc: $(cat zig.err)"
  ZIG_GLOBAL_CACHE_DIR=$PWD/zig-cache-shim ZIG_LOCAL_CACHE_DIR=$PWD/zig-cache-shim \
    "$SHIM" -nostdinc newer.c -o newer-shim 2>shim.err || fail "shim: $(cat shim.err)"
  [[ ! -s shim.err ]] || fail "the shim's build printed: $(cat shim.err)"
  ./newer-shim || fail "the program built against zig's glibc $zig_newest stubs did not run"
  ok "host glibc $host_glibc newer than zig's $zig_newest: silent (plain zig: $(head -c 70 zig.err))"
else
  echo "skip: host glibc $host_glibc is not newer than zig's $zig_newest"
fi
# Headers from the system dirs still come after zig's libc ones, as gcc's do.
printf '#include <zlib.h>\nint main(void) { return zlibVersion()[0] == 0; }\n' > z.c
if [[ -e /usr/include/zlib.h ]]; then
  "$SHIM" z.c -lz -o z 2>shim.err || fail "shim with <zlib.h> and -lz: $(cat shim.err)"
  ./z || fail "zlib program failed"
  ok "system headers and libraries found (/usr/include/zlib.h, -lz)"
fi

# 2. -dumpmachine / -print-multiarch: the multiarch triple, answered without zig.
want=x86_64-linux-gnu
if command -v gcc >/dev/null; then want=$(gcc -dumpmachine); fi
expect_eq "zig's -dumpmachine (what the shim must not say)" "$("$ZIG" cc -dumpmachine)" x86_64-unknown-linux-musl
expect_eq "-dumpmachine" "$("$SHIM" -dumpmachine)" "$want"
expect_eq "-print-multiarch" "$("$SHIM" -print-multiarch)" "$want"
expect_eq "-dumpmachine with no zig at all" "$(CC_SHIM_ZIG=$WORK/no-zig "$SHIM" -dumpmachine)" "$want"
ok "-dumpmachine: $want"

# 3. -Wl,-rpath DIR as two arguments (triton-cpu's build.py), and -lgcc.
printf 'int main(void) { return 0; }\n' > m.c
set +e; "$ZIG" cc -fno-sanitize=all m.c -o m-zig -Wl,-rpath "$WORK/rp" >zig.log 2>&1; zrc=$?; set -e
[[ $zrc -ne 0 ]] || fail "plain zig cc takes -Wl,-rpath DIR now"
"$SHIM" m.c -o m-shim -Wl,-rpath "$WORK/rp" -lgcc 2>shim.err || fail "shim: $(cat shim.err)"
expect_contains "RUNPATH" "$(readelf -d m-shim)" "[$WORK/rp]"
set +e; "$ZIG" cc -fno-sanitize=all m.c -o m-zig -lgcc >zig.log 2>&1; zrc=$?; set -e
[[ $zrc -ne 0 ]] || fail "plain zig cc links -lgcc now"
ok "-Wl,-rpath DIR and -lgcc (plain zig: $(grep -m1 error zig.log | cut -c1-70))"

# 4. -lNAME with a 32-bit libNAME.so in the first -L dir: skipped, as GNU ld does.
mkdir d32 d64
ln -s "$HELPERS/cuda32/libcuda.so.1" d32/libcuda.so
ln -s "$HELPERS/cuda64/libcuda.so.1" d64/libcuda.so
printf 'int cuInit(unsigned); int main(void) { return cuInit(0) == 0 ? 0 : 0; }\n' > c.c
set +e; "$ZIG" cc -fno-sanitize=all c.c -o c-zig -Ld32 -Ld64 -lcuda >zig.log 2>&1; zrc=$?; set -e
[[ $zrc -ne 0 ]] || fail "plain zig cc skipped the 32-bit libcuda.so by itself"
expect_contains "plain zig's error" "$(cat zig.log)" "incompatible"
"$SHIM" c.c -o c-shim -Ld32 -Ld64 -lcuda 2>shim.err || fail "shim: $(cat shim.err)"
expect_contains "DT_NEEDED" "$(readelf -d c-shim)" "[libcuda.so.1]"
ok "-lcuda past a 32-bit libcuda.so"

# 5. No warning gcc would not give: Triton's stub passes unsigned char * to PyFloat_Pack2.
py_include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
# zig replays no warnings for a cached object: a source of this run's own.
{ cat "$HERE/triton_stub.c"; echo "/* $WORK */"; } > stub.c
"$ZIG" cc -fno-sanitize=all -c stub.c -O3 -fPIC -Wno-psabi -I"$py_include" -o stub-zig.o 2>zig.log
expect_contains "plain zig's warning" "$(cat zig.log)" "-Wpointer-sign"
"$SHIM" -c stub.c -O3 -fPIC -Wno-psabi -I"$py_include" -o stub-shim.o 2>shim.err
[[ ! -s shim.err ]] || fail "shim printed a warning gcc does not give: $(cat shim.err)"
"$SHIM" -Wall -c stub.c -O3 -fPIC -I"$py_include" -o stub-wall.o 2>shim.err
expect_contains "-Wall asks for it, as in gcc" "$(cat shim.err)" "-Wpointer-sign"
ok "no -Wpointer-sign by default, one with -Wall"
