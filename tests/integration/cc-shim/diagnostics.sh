#!/usr/bin/env bash
# Issue 24 items 1 and 3: diagnostics as gcc gives them, on every compile.
# zig 0.11 caches C objects by name, content and flags: a second compile of
# the same file anywhere was a cache hit with no diagnostics, and ccache in
# front of the shim stored that silence. lld warns on version scripts where
# GNU ld is silent. Each is compared with gcc's own stderr.
source "$(dirname "$0")/lib.sh"
GCC=$(command -v gcc) || fail "gcc is not on PATH"
export LC_ALL=C  # gcc quotes with ASCII quotes, as clang does
count() { grep -c "warning: unused variable 'unused'" "$1" || true; }
printf 'int main(void) { int unused; return 0; }\n' >w.c
for d in a b; do mkdir "$d" && cp w.c "$d/"; done

# The same file, twice, in two directories: gcc warns both times, so must the shim.
for d in a b; do
  (cd "$d" && "$GCC" -Wall -c w.c -o w.o) 2>"gcc.$d"
  (cd "$d" && "$SHIM" -Wall -c w.c -o w.o) 2>"shim.$d"
done
expect_eq "gcc's warnings, first compile" "$(count gcc.a)" 1
expect_eq "gcc's warnings, the same compile again elsewhere" "$(count gcc.b)" 1
expect_eq "the shim's warnings, first compile" "$(count shim.a)" 1
expect_eq "the shim's warnings, the same compile again elsewhere (zig's cache hit)" "$(count shim.b)" 1
ok "warnings on every compile, as gcc"

# Through ccache: its first compile stores what the shim printed; the second replays it.
if command -v ccache >/dev/null; then
  export CCACHE_DIR=$WORK/ccache CCACHE_NOHASHDIR=1
  mkdir c && cp w.c c/
  for n in 1 2; do (cd c && ccache "$SHIM" -Wall -c w.c -o w.o) 2>"ccache.$n"; done
  expect_eq "ccache + shim: warnings of the first build" "$(count ccache.1)" 1
  expect_eq "ccache + shim: warnings replayed on ccache's hit" "$(count ccache.2)" 1
  expect_contains "ccache's statistics" "$(ccache -s -v 2>/dev/null || ccache -s)" "1"
  ok "ccache stores and replays the shim's warnings"
else
  fail "ccache is not installed (scripts/deps.sh installs it)"
fi

# A version script naming a local and a global that are not defined (zlib's
# gz_intmax): GNU ld is silent, lld warned twice.
printf 'int f(void) { return 1; }\n' >lib.c
printf 'V1 { global: f; nosuch; local: gz_intmax; *; };\n' >v.map
"$GCC" -shared -fPIC lib.c -Wl,--version-script,v.map -o libgcc-v.so 2>gcc.ld
expect_eq "GNU ld's stderr" "$(cat gcc.ld)" ""
"$SHIM" -shared -fPIC lib.c -Wl,--version-script,v.map -o libshim-v.so 2>shim.ld || fail "the shim's link failed: $(cat shim.ld)"
expect_eq "the shim's stderr on that link" "$(cat shim.ld)" ""
expect_contains "the version script still applies" "$(readelf --dyn-syms -W libshim-v.so)" "f@@V1"
# Other linker diagnostics still come through.
printf 'int g(void);\nint main(void) { return g(); }\n' >u.c
if "$SHIM" u.c -o u 2>shim.undef; then fail "an undefined symbol linked"; fi
expect_contains "lld's error on an undefined symbol" "$(cat shim.undef)" "undefined symbol: g"
ok "lld's version-script warnings left out, other diagnostics kept"
