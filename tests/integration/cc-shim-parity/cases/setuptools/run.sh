#!/usr/bin/env bash
# setuptools' build_ext with CC=gcc and with CC=cc-shim (setuptools puts CC in
# place of the compiler in this Python's own CFLAGS/LDSHARED), then imported:
# the same results from the module, the same exported symbols and needed
# libraries, and a build as silent on stderr as gcc's.
source "$(dirname "$0")/../../lib.sh"
python3 -c 'import setuptools' 2>/dev/null || fail "python3 has no setuptools (scripts/deps.sh installs python3-setuptools)"
ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  cp -r "$CASE_DIR/project" "$c"
  (cd "$c" && python3 setup.py -q build_ext --inplace >../"$c.build.out" 2>../"$c.build.err") ||
    { cat "$c.build.out" "$c.build.err"; fail "build_ext with $c failed"; }
  [[ -f $c/parity_ext$ext ]] || fail "build_ext with $c wrote no parity_ext$ext"
  (cd "$c" && python3 -c '
import parity_ext as m
print(m.add(40, 2), m.glibc_headers(), m.fp16_bits(1.5), m.sorted_digits("31415926"))
print(sorted(n for n in dir(m) if not n.startswith("__")))') >"$c.import" 2>&1 || { cat "$c.import"; fail "importing the module built with $c failed"; }
  # What the module exports and which libraries it needs (by name).
  nm -D --defined-only "$c/parity_ext$ext" | awk '{print $NF}' | sort >"$c.symbols"
  readelf -d "$c/parity_ext$ext" | awk '/\(NEEDED\)/{print $NF}' | tr -d '[]' | sort >"$c.needed"
done
expect_line "gcc's import" gcc.import "['add', 'fp16_bits', 'glibc_headers', 'sorted_digits']"
expect_same "import result" gcc.import shim.import
expect_same "exported symbols" gcc.symbols shim.symbols
expect_same "needed libraries" gcc.needed shim.needed
expect_quiet_like_gcc "build_ext stderr" gcc.build.err shim.build.err
