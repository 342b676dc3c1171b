#!/usr/bin/env bash
# MarkupSafe 2.1.2 (Debian's markupsafe source): its C extension _speedups
# built by Debian's setuptools (`setup.py build_ext --inplace`, CC in place of
# the compiler of Debian's python3 sysconfig flags), then its own pytest suite
# (Debian's python3-pytest), which runs every test against the pure-Python
# module and against _speedups, with gcc and with cc-shim. Its setup.py falls
# back to a pure-Python build when the compiler fails, so the case checks that
# _speedups was built and is what markupsafe.escape is. Compared: the test
# results, the diagnostics, what the module exports and needs, the files left.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import setuptools' 2>/dev/null || fail "$PY has no setuptools (scripts/deps.sh installs python3-setuptools)"
"$PY" -c 'import pytest' 2>/dev/null || fail "$PY has no pytest (scripts/deps.sh installs python3-pytest)"
ext=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack markupsafe "$c"
  cd "$c"
  step "markupsafe build_ext ($c)" 120 "../$c.make" "$PY" setup.py build_ext --inplace
  if grep -q 'The C extension could not be compiled' "../$c.make"; then
    tail -n 30 "../$c.make" >&2
    fail "markupsafe's setup.py fell back to pure Python with $c (log above)"
  fi
  so=src/markupsafe/_speedups$ext
  [[ -f $so ]] || fail "build_ext with $c wrote no $so"
  PYTHONPATH=src "$PY" -c '
import markupsafe, markupsafe._speedups as s
print(markupsafe.escape is s.escape, markupsafe.escape("<a href=\"x\">&</a>"), s.soft_str(42))' >"../$c.import" 2>&1 ||
    { cat "../$c.import" >&2; fail "importing _speedups built with $c failed"; }
  # Its own suite; -p no:cacheprovider: no .pytest_cache, so the trees compare by the build alone.
  step "markupsafe pytest ($c)" 120 "../$c.test" env PYTHONPATH=src PYTHONDONTWRITEBYTECODE=1 \
    "$PY" -m pytest -p no:cacheprovider -v tests
  nm -D --defined-only "$so" | awk '{print $NF}' | sort >"../$c.symbols"
  readelf -d "$so" | awk '/\(NEEDED\)/{print $NF}' | tr -d '[]' | sort >"../$c.needed"
  cd ..
done
expect_line "gcc's import" gcc.import "True &lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt; 42"
expect_same "what the imported _speedups returns" gcc.import shim.import
expect_warnings_like_gcc "markupsafe build_ext" gcc.make shim.make
# Each test by name (the module it ran against in the name) and its outcome.
for c in "${COMPILERS[@]}"; do
  sed -n -E 's/^(tests\/.*) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)( +\[ *[0-9]+%\])?$/\1 \2/p' "$c.test" | sort >"$c.result"
done
grep -q '_speedups.* PASSED$' gcc.result || fail "gcc's pytest ran no test against _speedups: $(head -n 5 gcc.result)"
grep -q -E ' (FAILED|ERROR|SKIPPED)$' gcc.result && fail "gcc's pytest did not pass every test: $(grep -E ' (FAILED|ERROR|SKIPPED)$' gcc.result)"
echo "pytest: gcc $(grep -c ' PASSED$' gcc.result) passed, of them $(grep -c '_speedups.* PASSED$' gcc.result) against _speedups"
expect_same "pytest results (each test)" gcc.result shim.result
expect_same "exported symbols" gcc.symbols shim.symbols
expect_same "needed libraries" gcc.needed shim.needed
expect_same_files "markupsafe tree" gcc shim
