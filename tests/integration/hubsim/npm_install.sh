#!/bin/bash
# Installs the npm package @huggingface/hub into the build tree (once; later runs reuse it),
# for the interop tests that run the official JS client against the Hub simulator.
# Usage: npm_install.sh [DIR]   (default $PROVKIT_BUILD_DIR/npm/hf-hub)
set -euo pipefail
version="${PROVKIT_HF_JS_VERSION:-2.17.5}"
dir="${1:-${PROVKIT_BUILD_DIR:?PROVKIT_BUILD_DIR is not set}/npm/hf-hub}"
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
flock -w 600 9 || { echo "npm_install.sh: timed out waiting for $dir/.install.lock" >&2; exit 1; }
pkg="$dir/node_modules/@huggingface/hub/package.json"
installed_version() { node -p "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).version" "$pkg" 2>/dev/null || true; }
installed="$(installed_version)"
if [ "$installed" = "$version" ]; then
  echo "@huggingface/hub $installed already in $dir"
  exit 0
fi
command -v npm >/dev/null || { echo "npm_install.sh: npm is not installed (scripts/deps.sh installs it)" >&2; exit 1; }
[ -f "$dir/package.json" ] || echo '{"name": "provkit-hf-hub-js", "private": true}' > "$dir/package.json"
cd "$dir"
timeout 300 npm install --no-audit --no-fund --loglevel=error "@huggingface/hub@$version"
installed="$(installed_version)"
[ "$installed" = "$version" ] || { echo "npm_install.sh: npm did not install @huggingface/hub $version" >&2; exit 1; }
echo "@huggingface/hub $installed installed in $dir"
