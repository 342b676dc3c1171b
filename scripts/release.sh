#!/usr/bin/env bash
# Makes the release archive of a portable build (cmake/portable.cmake):
#   provkit-<version>-linux-<arch>/{bin,lib,share/man/man1,share/doc/provkit}
# bin/ holds the four tools, lib/ every shared library they load beyond glibc
# (found through their RPATH $ORIGIN/../lib), share/doc/provkit/ the
# copyright files of everything inside and BUNDLED (each library with the
# Debian package and version it came from). Then checks it with
# scripts/release_check.py against the glibc floor of docs/installing.md and
# its table of what each tool loads.
# Usage: release.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, build/release)
# Prints the archive's path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${2:-$build/release}
fail() { echo "release.sh: $*" >&2; exit 1; }

grep -q '^PROVKIT_PORTABLE:BOOL=ON' "$build/CMakeCache.txt" ||
  fail "$build is not a portable build: configure it with -DPROVKIT_PORTABLE=ON"
cmake --build "$build" --target hf-fetch envcheck envbuild cc-shim manpages >/dev/null
version=$(grep -oP '^CMAKE_PROJECT_VERSION:STATIC=\K.*' "$build/CMakeCache.txt")
arch=$(uname -m)
name=provkit-$version-linux-$arch
stage=$(mktemp -d "${TMPDIR:-/tmp}/provkit-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
dest=$stage/$name
cmake --install "$build" --prefix "$dest" --strip >/dev/null
mkdir -p "$dest/lib" "$dest/share/doc/provkit"

# glibc's own libraries come from the host (release_check.py's GLIBC set).
glibc='^(linux-vdso\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libanl\.so|ld-linux)'
declare -A from
for bin in "$dest"/bin/*; do
  ldd "$bin" >/dev/null 2>&1 || continue  # static (cc-shim)
  while read -r soname path; do
    [[ $soname =~ $glibc ]] && continue
    [[ -n $path && -f $path ]] || fail "$(basename "$bin") needs $soname, not found on this host"
    from[$soname]=$path
  done < <(ldd "$bin" | awk '/=>/ {print $1, $3}')
done
for soname in "${!from[@]}"; do
  cp -L "${from[$soname]}" "$dest/lib/$soname"
  chmod 0644 "$dest/lib/$soname"
done

# Where each part came from: the bundled .so files and what is linked in
# statically (the C++ runtime, yaml-cpp, libarchive, toml++, CLI11, nlohmann-json).
# dpkg knows a file by the path its package ships (/lib or /usr/lib: merged /usr).
package_of() {
  local p
  for p in "$@" "${1/#\/usr\/lib\//\/lib\/}" "${1/#\/lib\//\/usr\/lib\/}"; do
    dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1 | grep . && return 0
  done
  return 0
}
declare -A packages
{
  echo "# Shared libraries in lib/ (Debian package, version):"
  for soname in $(printf '%s\n' "${!from[@]}" | sort); do
    real=$(readlink -f "${from[$soname]}")
    pkg=$(package_of "$real" "${from[$soname]}")
    [[ -n $pkg ]] || fail "no Debian package owns ${from[$soname]}"
    packages[$pkg]=1
    echo "lib/$soname $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
  done
  echo "# Linked into the binaries statically:"
  for f in "$(g++ -print-file-name=libstdc++.a)" "$(g++ -print-file-name=libgcc_eh.a)" \
           "$(grep -oP '^PROVKIT_YAML_CPP_STATIC:FILEPATH=\K.*' "$build/CMakeCache.txt")" \
           "$(grep -oP '^PROVKIT_ARCHIVE_STATIC:FILEPATH=\K.*' "$build/CMakeCache.txt")" \
           "$(grep -oP '^PROVKIT_CRYPTO_STATIC:FILEPATH=\K.*' "$build/CMakeCache.txt")" /usr/include/toml++/toml.h \
           /usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp; do
    [[ -e $f ]] || continue
    pkg=$(package_of "$(readlink -f "$f")"); [[ -n $pkg ]] || continue
    packages[$pkg]=1
    echo "$(basename "$f") $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
  done
} >"$dest/share/doc/provkit/BUNDLED"
for pkg in "${!packages[@]}"; do
  base=${pkg%%:*}
  if [[ -f /usr/share/doc/$base/copyright ]]; then
    mkdir -p "$dest/share/doc/provkit/third-party/$base"
    cp /usr/share/doc/"$base"/copyright "$dest/share/doc/provkit/third-party/$base/"
  fi
done

# The floor docs/installing.md states holds for archives built on Debian 12;
# PROVKIT_GLIBC_FLOOR names another (a build on a newer distribution can only
# run on its own glibc and newer: test_release.sh passes that one there).
floor=${PROVKIT_GLIBC_FLOOR:-$(grep -oP 'glibc floor: \*\*\K[0-9.]+' "$root/docs/installing.md")} ||
  fail "docs/installing.md states no glibc floor"
python3 "$root/scripts/release_check.py" "$dest" --floor "$floor" --needed "$root/docs/installing.md" >"$stage/check.txt" ||
  { cat "$stage/check.txt" >&2; fail "the archive breaks the glibc floor $floor or docs/installing.md's NEEDED lists"; }
cp "$stage/check.txt" "$dest/share/doc/provkit/release-check.txt"

mkdir -p "$out"
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
