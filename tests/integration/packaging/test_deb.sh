#!/usr/bin/env bash
# Builds the .deb with cpack, checks what it holds and depends on, installs it
# into a fresh dpkg root and runs --version of every installed tool.
set -euo pipefail
work=$(mktemp -d /tmp/provkit-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$PROVKIT_BUILD_DIR" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/out/provkit_*.deb)
echo "built $(basename "$deb")"

contents=$(dpkg-deb -c "$deb")
for f in usr/bin/hf-fetch usr/bin/envcheck usr/bin/envbuild usr/bin/cc-shim \
         usr/share/man/man1/hf-fetch.1 usr/share/man/man1/envcheck.1 \
         usr/share/man/man1/envbuild.1 usr/share/man/man1/cc-shim.1; do
  grep -q "\./$f\(\.gz\)\?\$" <<<"$contents" || fail "$f is not in the package"
done

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for p in libc6 libcurl4 libssl3; do
  grep -Eq "(^|, )$p( |,|$)" <<<"$depends" || fail "Depends lacks $p"
done
# A portable build (cmake/portable.cmake) links the C++ runtime, yaml-cpp and
# libarchive statically: the package must not ask for them.
for p in "libstdc\\+\\+6" libarchive13 "libyaml-cpp0\\.[0-9]+" libtomlplusplus3; do
  if grep -Eq "(^|, )$p( |,|$)" <<<"$depends"; then fail "Depends names $p, linked statically"; fi
done

# A fresh dpkg root: an empty database, nothing else installed. The runtime
# libraries come from this host (the Depends check above covers the rest).
root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg --root="$root" --force-depends --force-not-root -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }
dpkg --root="$root" -s provkit | grep -q "^Status: install ok installed" || fail "dpkg does not list provkit as installed"

version=$(grep -oP 'project\(provkit VERSION \K[0-9.]+' "$PROVKIT_SOURCE_DIR/CMakeLists.txt")
for tool in hf-fetch envcheck envbuild; do
  out=$("$root/usr/bin/$tool" --version) || fail "$tool --version failed"
  grep -q "$version" <<<"$out" || fail "$tool --version says '$out', not $version"
done
out=$("$root/usr/bin/cc-shim" --shim-version) || fail "cc-shim --shim-version failed"
grep -q "$version" <<<"$out" || fail "cc-shim --shim-version says '$out', not $version"
zcat "$root/usr/share/man/man1/hf-fetch.1.gz" 2>/dev/null | grep -q "manifest" || \
  grep -q "manifest" "$root/usr/share/man/man1/hf-fetch.1" || fail "hf-fetch man page lacks its options"
echo "ok: package installs into a fresh root and its four tools run"
