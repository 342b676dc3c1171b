#!/usr/bin/env bash
# zstd 1.5.4 (Debian's libzstd source): its own Makefiles and `make check`
# (tests/playTests.sh, the short run), with gcc and with cc-shim. Its
# Makefiles probe the compiler with `-x c -c - -o /dev/null` in every
# directory; the shim once left ./-.o there, and in tests/ playTests.sh then
# failed ("zstd: ./-.o: unsupported format").
source "$(dirname "$0")/lib.sh"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack libzstd "$c"
  step "zstd make check ($c)" 1200 "$c.test" make -C "$c" -j2 check
done
expect_warnings_like_gcc "zstd build" gcc.test shim.test
for c in "${COMPILERS[@]}"; do grep -c -E '^PASS|: PASS|OK$' "$c.test" >"$c.result" || true; done
grep -q 'playTests.sh' gcc.test || fail "gcc's make check did not run playTests.sh"
expect_same "make check (lines saying PASS/OK)" gcc.result shim.result
expect_same_files "zstd tree" gcc shim
