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
