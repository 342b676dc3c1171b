#!/usr/bin/env bash
# Lists every read of the environment in the library outside its one registry (lib/src/util/environment.cpp):
# getenv and secure_getenv, in the library, the tools and the shims. Exit 1 when there is one. (Handing `environ`
# on to a child is not a read.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
found=$(grep -rnE '\b(secure_)?getenv[[:space:]]*\(' "$root/lib" "$root/tools" "$root/shims" \
  --include='*.cpp' --include='*.hpp' --include='*.c' --include='*.h' |
  grep -v "^$root/lib/src/util/environment.cpp:" || true)
[[ -z $found ]] && exit 0
echo "reads of the environment outside lib/src/util/environment.cpp (add the variable to its table instead):"
echo "${found//$root\//}"
exit 1
