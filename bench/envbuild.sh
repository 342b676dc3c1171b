#!/usr/bin/env bash
# envbuild benchmark on this machine: capture the distributions of an installed
# Python into a wheelhouse + hashed lock, then, on the same wheels, one run each:
#   pip:   python -m venv V && V/bin/pip install --no-index --find-links W -r LOCK   (default: bytecode compiled)
#   pip --no-compile (the same work envbuild does)
#   envbuild create cold (empty cache) and warm (cache filled by the cold run)
#   envbuild verify of the environment
# Usage: bench/envbuild.sh [PYTHON] [WORKDIR]
#   PYTHON: interpreter whose installed distributions are captured (default: the
#           pyenv 3.11 here if present, else python3); it should hold >= 90.
#   ENVBUILD: the binary (default build/bin/envbuild, then build-*/bin/envbuild).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
PY=${1:-}
if [[ -z $PY ]]; then
  PY=$(ls -d "$HOME"/.pyenv/versions/3.11*/bin/python3.11 2>/dev/null | tail -1 || true)
  [[ -n $PY ]] || PY=$(command -v python3)
fi
PY=$(readlink -f "$PY")
if [[ -z ${ENVBUILD:-} ]]; then
  for candidate in "$here"/build/bin/envbuild "$here"/build-*/bin/envbuild; do
    [[ -x $candidate ]] && ENVBUILD=$candidate && break
  done
fi
work=${2:-$(mktemp -d /tmp/envbuild-bench.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"/env-* "$work"/cache "$work"/venv-*' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

prefix=$("$PY" -c 'import sys; print(sys.prefix)')
echo "interpreter: $PY ($("$PY" -V 2>&1)), prefix $prefix" >&2
echo "envbuild:    $ENVBUILD ($("$ENVBUILD" --version))" >&2

t0=$(now)
"$ENVBUILD" capture "$prefix" --wheelhouse "$work/wheels" --lock "$work/lock.txt" >&2
t_capture=$(secs "$t0" "$(now)")
n=$(grep -c '^[A-Za-z0-9]' "$work/lock.txt")
size=$(du -sh "$work/wheels" | cut -f1)
echo "captured $n distributions ($size of wheels) in $t_capture s" >&2

# pip, as people run it (bytecode compiled), then without bytecode.
t0=$(now)
"$PY" -m venv "$work/venv-pip"
"$work/venv-pip/bin/python" -m pip install -q --disable-pip-version-check --no-index --find-links "$work/wheels" -r "$work/lock.txt"
t_pip=$(secs "$t0" "$(now)")
t0=$(now)
"$PY" -m venv "$work/venv-pipnc"
"$work/venv-pipnc/bin/python" -m pip install -q --disable-pip-version-check --no-compile --no-index --find-links "$work/wheels" -r "$work/lock.txt"
t_pip_nc=$(secs "$t0" "$(now)")

t0=$(now)
"$ENVBUILD" --cache-dir "$work/cache" create "$work/env-cold" --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels" >/dev/null
t_cold=$(secs "$t0" "$(now)")
t0=$(now)
"$ENVBUILD" --cache-dir "$work/cache" create "$work/env-warm" --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels" >/dev/null
t_warm=$(secs "$t0" "$(now)")
t0=$(now)
"$ENVBUILD" --cache-dir "$work/cache" create "$work/env-warm" --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels" >/dev/null
t_noop=$(secs "$t0" "$(now)")
t0=$(now)
"$ENVBUILD" --cache-dir "$work/cache" verify "$work/env-warm" --lock "$work/lock.txt" >/dev/null
t_verify=$(secs "$t0" "$(now)")
files=$(find "$work/env-warm" -type f | wc -l)
"$work/env-warm/bin/python" -m pip check >&2 || echo "pip check FAILED" >&2

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }
cat <<TABLE
$n distributions, $files files, $size of wheels captured from $prefix ($("$PY" -V 2>&1)); $(nproc) cores; one run each.

| step | seconds | pip / this |
|---|---|---|
| envbuild capture ($n wheels) | $t_capture | |
| python -m venv + pip install --no-index --find-links (bytecode) | $t_pip | 1.0x |
| python -m venv + pip install --no-compile | $t_pip_nc | $(ratio "$t_pip" "$t_pip_nc") |
| envbuild create, cold cache | $t_cold | $(ratio "$t_pip" "$t_cold") (vs --no-compile: $(ratio "$t_pip_nc" "$t_cold")) |
| envbuild create, warm cache | $t_warm | $(ratio "$t_pip" "$t_warm") (vs --no-compile: $(ratio "$t_pip_nc" "$t_warm")) |
| envbuild create, already matching | $t_noop | |
| envbuild verify --lock (every file hashed) | $t_verify | |
TABLE
