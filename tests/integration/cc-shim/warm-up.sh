#!/usr/bin/env bash
# `cc-shim --shim-warm` builds ahead of time what zig otherwise builds on the
# first C++ link (libc++, libc++abi: minutes). With the cache the fixture
# cc-shim-shim-warm filled by --shim-warm alone (kept in the build tree across
# runs, see shim-warm-cache.sh), a first `c++ -x c++ hello.cpp -o hello`
# through the shim's own c++ link adds no libc++ artefact to zig's cache and
# costs about what a second, warm compile costs. In a fresh cache the same
# compile does build libc++: that side is watched until zig writes its first
# libc++ object, then stopped (the test would otherwise prove nothing). A link
# of objects compiled apart, as a project's build links, builds none either.
source "$(dirname "$0")/lib.sh"
WARMED=$PROVKIT_BUILD_DIR/tests/cc-shim/zig-cache-shim-warm
[[ -f $WARMED.stamp ]] || fail "no cache warmed by --shim-warm at $WARMED (fixture cc-shim-shim-warm)"
unset ZIG_LOCAL_CACHE_DIR
"$SHIM" install "$WORK/bin" || fail "cc-shim install failed"
printf '#include <iostream>\n#include <string>\nint main() { std::cout << std::string("hello") << std::endl; }\n' >hello.cpp

# What zig builds for libc++: an object per source of zig's lib/libcxx/src and
# libcxxabi/src, and the archives.
LIBCXX=$(dirname "$ZIG")/lib
ls "$LIBCXX/libcxx/src" "$LIBCXX/libcxxabi/src" | sed -n 's/\.cpp$/.o/p' | sort -u >libcxx.names
printf 'libc++.a\nlibc++abi.a\n' >>libcxx.names
(($(wc -l <libcxx.names) > 40)) || fail "zig's libc++ sources not found under $LIBCXX"
# libcxx_artefacts CACHE: the libc++ files in zig's cache, one path a line.
libcxx_artefacts() {
  { [[ ! -d $1/o ]] || find "$1/o" -type f 2>/dev/null || true; } | awk -F/ 'NR == FNR { n[$0] = 1; next } ($NF in n)' libcxx.names - | sort
}
# compile NAME: the shim's c++ builds and runs hello; prints the seconds it took.
compile() {
  local t0 t1
  t0=$(date +%s.%N)
  "$WORK/bin/c++" -x c++ hello.cpp -o "$1" 2>"$1.err" || { cat "$1.err" >&2; fail "c++ hello.cpp ($1) failed"; }
  t1=$(date +%s.%N)
  expect_eq "$1 output" "$(./"$1")" hello
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

# 1. The cache --shim-warm filled: nothing of libc++ is built again.
export ZIG_GLOBAL_CACHE_DIR=$WARMED
libcxx_artefacts "$WARMED" >before
(($(wc -l <before) > 40)) || fail "the warmed cache holds no libc++ ($(wc -l <before) artefacts): --shim-warm built none"
first=$(compile hello1)
libcxx_artefacts "$WARMED" >after
if ! diff -u before after >&2; then
  fail "the first C++ compile after --shim-warm built libc++ again (new artefacts above)"
fi
second=$(compile hello2)
echo "after --shim-warm: first C++ compile+link ${first} s, second ${second} s; libc++ artefacts $(wc -l <before), none added"
# No libc++ build hides in the time either: the first costs about what the
# warm second does (a libc++ build costs minutes, 50x a compile or more).
awk -v f="$first" -v s="$second" 'BEGIN { exit !(f <= 4 * s + 3) }' ||
  fail "the first C++ compile after --shim-warm took ${first} s, a warm one ${second} s: more than 4x + 3 s"
ok "after --shim-warm the first C++ compile builds no libc++ (${first} s, warm ${second} s)"

# A project's build compiles objects and links them apart (make, ninja); zig keeps the runtime of such a link
# as another cache entry than the runtime of a link that also compiles (expat's first build after a warm-up
# built libc++ again, 60 s). Optimised and shared, as CMake's Release and RelWithDebInfo builds link.
"$WORK/bin/c++" -O2 -g -c hello.cpp -o hello.o || fail "c++ -O2 -c hello.cpp failed"
"$WORK/bin/c++" -O2 -g -fPIC -c hello.cpp -o hello_pic.o || fail "c++ -O2 -fPIC -c hello.cpp failed"
"$WORK/bin/c++" -O2 -g hello.o -o hello4 || fail "c++ -O2 hello.o failed"
expect_eq "hello4 output" "$(./hello4)" hello
"$WORK/bin/c++" -shared -O2 -g hello_pic.o -o hello.so || fail "c++ -shared hello_pic.o failed"
libcxx_artefacts "$WARMED" >after
if ! diff -u before after >&2; then
  fail "a link of objects after --shim-warm built libc++ again (new artefacts above)"
fi
ok "after --shim-warm a link of compiled objects (-O2, -shared) builds no libc++"

# 2. A fresh cache: the same first compile builds libc++ (watched, then stopped).
export ZIG_GLOBAL_CACHE_DIR=$WORK/fresh-cache
mkdir "$ZIG_GLOBAL_CACHE_DIR"
"$WORK/bin/c++" -x c++ hello.cpp -o hello3 >fresh.log 2>&1 &
pid=$!
# 120 s times the load per core (1 to 8), as the real-projects steps scale theirs.
limit=$((120 * $(awk -v c="$(nproc)" '{ f = int($1 / c + 0.999); print (f < 1 ? 1 : (f > 8 ? 8 : f)) }' /proc/loadavg)))
t0=$SECONDS found=
while ((SECONDS - t0 < limit)) && kill -0 "$pid" 2>/dev/null; do
  found=$(libcxx_artefacts "$ZIG_GLOBAL_CACHE_DIR" | sed -n 1p)
  [[ -n $found ]] && break
  sleep 1
done
[[ -n $found ]] || found=$(libcxx_artefacts "$ZIG_GLOBAL_CACHE_DIR" | sed -n 1p)
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[[ -n $found ]] || { cat fresh.log >&2; fail "in a fresh cache the first C++ compile built no libc++ within ${limit} s"; }
ok "without --shim-warm the same first compile builds libc++: ${found#"$ZIG_GLOBAL_CACHE_DIR"/} after $((SECONDS - t0)) s (stopped there)"
