#!/usr/bin/env bash
# Lint: (1) fails on any C++ file clang-format (.clang-format) would change; (2) runs clang-tidy (.clang-tidy) on
# every lib/, tools/ and shims/ source in parallel and fails on a finding not in scripts/lint-baseline.txt.
# Baseline lines are "file<TAB>check<TAB>the flagged line's text (trimmed)", so edits elsewhere in a file do not
# break them. --update-baseline rewrites the baseline from the current findings.
# Needs a build directory configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ($PROVKIT_BUILD, default build/).
set -euo pipefail
# A step that fails unexpectedly says where, rather than ending the test with no output.
trap 'echo "lint: $BASH_COMMAND failed (scripts/lint.sh line $LINENO)" >&2' ERR
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROVKIT_BUILD:-$root/build}
baseline=$root/scripts/lint-baseline.txt
jobs=${PROVKIT_LINT_JOBS:-$(nproc)}
update=0
[[ ${1:-} == --update-baseline ]] && update=1
cd "$root"

status=0
# Each file against its formatted self, so parallel output never interleaves.
unformatted=$(git ls-files '*.cpp' '*.hpp' |
  xargs -P "$jobs" -I{} sh -c 'clang-format-14 "$1" | cmp -s - "$1" || echo "$1"' _ {} | sort)
if [[ -n $unformatted ]]; then
  echo "lint: clang-format would change these files (apply: git ls-files '*.cpp' '*.hpp' | xargs clang-format-14 -i):"
  echo "$unformatted" | sed 's/^/  /'
  status=1
fi

if [[ ! -f $build/compile_commands.json ]]; then
  echo "lint: $build/compile_commands.json missing (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
git ls-files 'lib/*.cpp' 'tools/*.cpp' 'shims/*.cpp' |
  xargs -P "$jobs" -n 4 clang-tidy-14 -p "$build" --quiet >"$raw" 2>/dev/null || true
# "path:line:col: warning: text [check]" -> "relpath<TAB>check<TAB>source line", one per finding.
# grep finds nothing when clang-tidy finds nothing: that is success, not an error for pipefail.
findings=$({ grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): .*\[[a-z0-9.,-]+\]$' "$raw" || true; } | sort -u |
  while IFS= read -r line; do
    file=${line%%:*}; rest=${line#*:}; lineno=${rest%%:*}
    check=$(sed -E 's/.*\[([^]]+)\]$/\1/' <<<"$line")
    text=$(sed -n "${lineno}p" "$file" | sed -E 's/^[[:space:]]+|[[:space:]]+$//g')
    printf '%s\t%s\t%s\n' "${file#"$root"/}" "$check" "$text"
  done | sort -u)
if ((update)); then
  printf '%s\n' "$findings" | sed '/^$/d' >"$baseline"
  echo "lint: wrote $(wc -l <"$baseline") findings to $baseline"
  exit "$status"
fi
new=$(comm -23 <(printf '%s\n' "$findings" | sed '/^$/d') <(sort -u "$baseline" 2>/dev/null || true))
if [[ -n $new ]]; then
  echo "lint: clang-tidy findings not in scripts/lint-baseline.txt:"
  echo "$new" | sed 's/^/  /'
  grep -F -f <(cut -f1 <<<"$new" | sort -u) "$raw" | grep -E ': (warning|error): ' | head -50 || true
  status=1
fi
exit "$status"
