#!/usr/bin/env bash
# Test set-up (ctest fixture "cc-shim-sources"): the real projects' sources
# from Debian's archive, as `apt-get source` gives them, through an apt
# configuration of the test's own (a deb-src entry for bookworm, its own
# lists and cache), so the system's apt is never touched. Downloads are kept
# under the build tree: a rerun finds them and does not go to the network.
# The archive unreachable, or a package missing from it, fails the set-up
# loudly, and with it every project case (they require this fixture).
set -euo pipefail
: "${PROVKIT_BUILD_DIR:?set by ctest}"
STORE=$PROVKIT_BUILD_DIR/tests/cc-shim-projects/sources
# Source package -> the upstream tarball the case builds (the orig tarball:
# the project's own source, its own build system and tests).
PACKAGES=(zlib json-c xz-utils libzstd expat lua5.4 libsodium pixman markupsafe)
mkdir -p "$STORE"
missing=()
for p in "${PACKAGES[@]}"; do
  compgen -G "$STORE/$p/*.orig.tar.*" >/dev/null || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "all sources already in $STORE"
  exit 0
fi
command -v apt-get >/dev/null || { echo "fetch-sources.sh: apt-get is not installed" >&2; exit 1; }
APT_DIR=$STORE/.apt
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
echo "deb-src ${PROVKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm main" >"$APT_DIR/sources.list"
APT=(-o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
     -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o "APT::Sandbox::User=root")
if ! apt-get "${APT[@]}" update -qq >"$APT_DIR/update.log" 2>&1 || grep -q '^[WE]: Failed to fetch' "$APT_DIR/update.log"; then
  cat "$APT_DIR/update.log" >&2
  echo "FAIL: Debian's archive (bookworm deb-src) is unreachable; the real-projects cases need it once, then run from $STORE" >&2
  exit 1
fi
# orig_verified DIR: apt-get source failed, but only on the Debian diff (a
# mirror may lack pixman's .diff.gz, which the cases never use): the .dsc and
# the orig tarball came, and the tarball's SHA-256 is the one the .dsc names.
orig_verified() {
  local dsc orig
  dsc=$(compgen -G "$1/*.dsc" | head -n 1) || return 1
  orig=$(compgen -G "$1/*.orig.tar.*" | grep -v '\.asc$' | head -n 1) || return 1
  awk '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 "  " $3 }' "$dsc" |
    grep -F -- " $(basename "$orig")" | (cd "$1" && sha256sum --check --status)
}
for p in "${missing[@]}"; do
  rm -rf "$STORE/$p.part" && mkdir -p "$STORE/$p.part"
  if ! (cd "$STORE/$p.part" && apt-get "${APT[@]}" source --download-only "$p") >"$STORE/$p.log" 2>&1 &&
    ! orig_verified "$STORE/$p.part"; then
    cat "$STORE/$p.log" >&2
    echo "FAIL: apt-get source $p failed (log above)" >&2
    exit 1
  fi
  compgen -G "$STORE/$p.part/*.orig.tar.*" >/dev/null || { echo "FAIL: apt-get source $p gave no orig tarball" >&2; exit 1; }
  rm -rf "$STORE/$p" && mv "$STORE/$p.part" "$STORE/$p"
  echo "fetched $(cd "$STORE/$p" && ls *.dsc)"
done
