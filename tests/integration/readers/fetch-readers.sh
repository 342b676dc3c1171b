#!/usr/bin/env bash
# Test set-up (ctest fixture "readers"): the formats' own readers as Debian
# unstable ships them: gguf-py (llama.cpp's GGUF reader and writer,
# python3-gguf) and safetensors (its Rust reader, python3-safetensors), through an apt
# configuration of the test's own (its own sources, lists and cache: the
# system's apt is never touched), unpacked with dpkg-deb under the build tree.
# A rerun finds it there and does not go to the network. The archive
# unreachable fails the set-up loudly, and with it every test that needs it.
# numpy (gguf-py needs it) is Debian 12's python3-numpy (scripts/deps.sh).
set -euo pipefail
: "${PROVKIT_BUILD_DIR:?set by ctest}"
STORE=$PROVKIT_BUILD_DIR/tests/readers
PACKAGES=(python3-gguf python3-safetensors)
SITE=$STORE/root/usr/lib/python3/dist-packages
if [[ -f $SITE/gguf/constants.py && -f $SITE/safetensors/_safetensors_rust.abi3.so ]]; then
  echo "already in $STORE: $(paste -sd, "$STORE/versions")"
  exit 0
fi
command -v apt-get >/dev/null || { echo "fetch-gguf-py.sh: apt-get is not installed" >&2; exit 1; }
APT_DIR=$STORE/.apt
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
echo "deb ${PROVKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian} unstable main" >"$APT_DIR/sources.list"
APT=(-o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
     -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o "APT::Sandbox::User=root")
if ! apt-get "${APT[@]}" update -qq >"$APT_DIR/update.log" 2>&1 || grep -q '^[WE]: Failed to fetch' "$APT_DIR/update.log"; then
  cat "$APT_DIR/update.log" >&2
  echo "FAIL: Debian's archive (unstable) is unreachable; the readers tests need ${PACKAGES[*]} from it once" >&2
  exit 1
fi
rm -rf "$STORE/deb" && mkdir -p "$STORE/deb"
(cd "$STORE/deb" && apt-get "${APT[@]}" download "${PACKAGES[@]}") >"$STORE/download.log" 2>&1 ||
  { cat "$STORE/download.log" >&2; echo "FAIL: apt-get download ${PACKAGES[*]} failed" >&2; exit 1; }
rm -rf "$STORE/root.part" && : >"$STORE/versions"
for deb in "$STORE"/deb/*.deb; do
  dpkg-deb -x "$deb" "$STORE/root.part"
  echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$STORE/versions"
done
# Debian's python3.11 (bookworm) does not look for the multiarch-tagged abi3 name unstable installs.
ln -sf _safetensors_rust.abi3-x86_64-linux-gnu.so "$STORE/root.part/usr/lib/python3/dist-packages/safetensors/_safetensors_rust.abi3.so"
rm -rf "$STORE/root" && mv "$STORE/root.part" "$STORE/root"
echo "fetched: $(paste -sd, "$STORE/versions")"
