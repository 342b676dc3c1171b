#!/usr/bin/env bash
# Every library module, lib/src/<domain>/<module>.cpp, has its unit tests in tests/unit/<domain>/test_<module>.cpp,
# or a line in tests/unit/modules-tested-elsewhere.txt saying where its behaviours are tested instead.
#
#   scripts/list-untested-modules.sh          exit 1 naming each module with neither, and each line of the list
#                                             whose module has a test file of its own now or no longer exists
#   scripts/list-untested-modules.sh --list   every module without a test file of its own, with the list's reason
#
# Run by ctest as "layout: every library module has its unit tests" (tests/integration/layout.cmake).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
list=$root/tests/unit/modules-tested-elsewhere.txt

declare -A reason=()
while IFS= read -r line; do
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
  module=${line%%[[:space:]]*}
  why=$(sed -E 's/^[^[:space:]]+[[:space:]]+//' <<<"$line")
  [[ $why == "$line" ]] && why=""
  reason[$module]=$why
done <"$list"

# The functions a module's source defines at the start of a line (namespace scope, members as Class::name),
# less names too common to tell a module by.
module_symbols() {
  grep -oE '^[A-Za-z][A-Za-z0-9_:<>,*& ]*[ *&]([A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*\(' "$1" |
    grep -vE '^(if|for|while|switch|return|namespace|else) ' | sed -E 's/\($//; s/.*[ *&:]//' |
    grep -vxE 'run|to_json|main|parse|read|write|open|close|size|name|str|value' | sort -u || true
}

# A line of the list must name test files that exist, and when it names C++ unit tests, one of them must use
# one of the module's functions, or the entry point the line says it is tested "through": a credit to a file
# that never reaches the module is no credit. (Integration tests, .py, are checked for existence only.)
check_credit() {
  local module=$1 where=$2 files=() f cpp=() syms
  read -r -a words <<<"${where//,/ }"
  for f in "${words[@]}"; do
    [[ $f == *.cpp || $f == *.py ]] || continue
    [[ $f == tests/* ]] || f=tests/unit/$f
    if [[ ! -f $root/$f ]]; then
      echo "tests/unit/modules-tested-elsewhere.txt: $module: $f does not exist" >&2
      return 1
    fi
    files+=("$f")
    [[ $f == *.cpp ]] && cpp+=("$root/$f")
  done
  if ((${#files[@]} == 0)); then
    echo "tests/unit/modules-tested-elsewhere.txt: $module: name the test files (DOMAIN/test_x.cpp or tests/...py)" >&2
    return 1
  fi
  ((${#cpp[@]} == 0)) && return 0
  # A private module tested through its domain's entry point says so: "through host::run", and the files call it.
  if [[ $where =~ through\ ([A-Za-z_][A-Za-z0-9_:]*) ]]; then
    grep -qF "${BASH_REMATCH[1]}" "${cpp[@]}" && return 0
    echo "tests/unit/modules-tested-elsewhere.txt: $module: none of ${cpp[*]#"$root/"} uses ${BASH_REMATCH[1]}" >&2
    return 1
  fi
  syms=$(module_symbols "$root/lib/src/$module.cpp")
  [[ -z $syms ]] && return 0
  if ! grep -qwF -f <(printf '%s\n' "$syms") "${cpp[@]}"; then
    echo "tests/unit/modules-tested-elsewhere.txt: $module: none of ${cpp[*]#"$root/"} uses a function of" \
      "lib/src/$module.cpp ($(tr '\n' ' ' <<<"$syms" | sed 's/ $//')): name the test that does, or add its own" >&2
    return 1
  fi
}

status=0
for source in "$root"/lib/src/*/*.cpp; do
  domain=$(basename "$(dirname "$source")")
  module=$domain/$(basename "$source" .cpp)
  test=tests/unit/$domain/test_$(basename "$source" .cpp).cpp
  if [[ -f $root/$test ]]; then
    if [[ -v reason[$module] ]]; then
      echo "tests/unit/modules-tested-elsewhere.txt: $module has $test now: remove its line" >&2
      status=1
    fi
  elif [[ -v reason[$module] ]]; then
    if [[ -z ${reason[$module]} ]]; then
      echo "tests/unit/modules-tested-elsewhere.txt: $module: say where it is tested" >&2
      status=1
    elif ! check_credit "$module" "${reason[$module]}"; then
      status=1
    fi
    [[ ${1:-} == --list ]] && printf '%-28s %s\n' "$module" "${reason[$module]}"
  else
    echo "lib/src/$module.cpp has no $test: add it, or a line for $module in tests/unit/modules-tested-elsewhere.txt" >&2
    status=1
  fi
  unset "reason[$module]"
done
for module in "${!reason[@]}"; do
  echo "tests/unit/modules-tested-elsewhere.txt: $module: there is no lib/src/$module.cpp: remove its line" >&2
  status=1
done
exit $status
