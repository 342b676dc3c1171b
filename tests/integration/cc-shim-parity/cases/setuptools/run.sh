#!/usr/bin/env bash
# setuptools' build_ext with CC=gcc and with CC=cc-shim (setuptools puts CC in
# place of the compiler in the Python's own CFLAGS/LDSHARED), then imported,
# for each of $PYTHONS (lib.sh): the same results from the module, the same
# exported symbols and needed libraries, a build as silent on stderr as gcc's.
source "$(dirname "$0")/../../lib.sh"
for i in "${!PYTHONS[@]}"; do
  py=${PYTHONS[i]}
  "$py" -c 'import setuptools' 2>/dev/null || fail "$py has no setuptools (scripts/deps.sh installs python3-setuptools)"
  ext=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  for c in "${COMPILERS[@]}"; do
    use_compiler "$c"
    out=py$i-$c
    cp -r "$CASE_DIR/project" "$out"
    (cd "$out" && "$py" setup.py -q build_ext --inplace >../"$out.build.out" 2>../"$out.build.err") ||
      { cat "$out.build.out" "$out.build.err"; fail "build_ext for $py with $c failed"; }
    [[ -f $out/parity_ext$ext ]] || fail "build_ext for $py with $c wrote no parity_ext$ext"
    (cd "$out" && "$py" -c '
import parity_ext as m
print(m.add(40, 2), m.glibc_headers(), m.fp16_bits(1.5), m.sorted_digits("31415926"))
print(sorted(n for n in dir(m) if not n.startswith("__")))') >"$out.import" 2>&1 ||
      { cat "$out.import"; fail "importing the module built for $py with $c failed"; }
    # What the module exports and which libraries it needs (by name).
    nm -D --defined-only "$out/parity_ext$ext" | awk '{print $NF}' | sort >"$out.symbols"
    readelf -d "$out/parity_ext$ext" | awk '/\(NEEDED\)/{print $NF}' | tr -d '[]' | sort >"$out.needed"
  done
  expect_line "gcc's import ($py)" "py$i-gcc.import" "['add', 'fp16_bits', 'glibc_headers', 'sorted_digits']"
  expect_same "import result ($py)" "py$i-gcc.import" "py$i-shim.import"
  expect_same "exported symbols ($py)" "py$i-gcc.symbols" "py$i-shim.symbols"
  expect_same "needed libraries ($py)" "py$i-gcc.needed" "py$i-shim.needed"
  expect_quiet_like_gcc "build_ext stderr ($py)" "py$i-gcc.build.err" "py$i-shim.build.err"
done
