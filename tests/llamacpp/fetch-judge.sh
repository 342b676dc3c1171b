#!/bin/sh
# Fetches llama.cpp (Debian unstable's llama.cpp-tools, libllama0, libggml0 and
# the unstable C/C++ runtime they need) and python3-gguf into a private sysroot,
# leaving the system's apt alone: private Dir:: options, apt-get download, dpkg-deb -x.
# Usage: fetch-judge.sh DIR  (a cache: run again, it does nothing once DIR/ok exists)
# Exit 1 with the reason when it cannot (no network, a package gone): the test fails, never skips.
set -eu
dir=$1
mkdir -p "$dir"
# Tests run side by side: one fetches, the others wait for it.
exec 9>"$dir/lock"
flock 9
[ -f "$dir/ok" ] && exit 0
rm -rf "$dir/root" "$dir/debs"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/parts" "$dir/debs" "$dir/root"
# One deb822 source for suite $1 in the private apt directory.
write_source() {
  cat >"$dir/apt/parts/$1.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: $1
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}
write_source unstable
apt_opts="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$dir/apt/parts
  -o Dir::State::Lists=$dir/apt/lists -o Dir::Cache=$dir/apt/cache -o Dir::State::Status=/dev/null
  -o Debug::NoLocking=1 -o APT::Architecture=amd64 -o APT::Architectures::=amd64"
# shellcheck disable=SC2086
apt-get $apt_opts -q update >"$dir/apt/update.log" 2>&1 || { cat "$dir/apt/update.log" >&2; exit 1; }
packages="llama.cpp-tools libllama0 libggml0 libc6 libstdc++6 libgcc-s1 libgomp1 libssl3t64 python3-gguf"
cd "$dir/debs"
# shellcheck disable=SC2086
for p in $packages; do
  apt-get $apt_opts -q download "$p" >>"$dir/apt/download.log" 2>&1 || { echo "cannot download $p" >&2; exit 1; }
done
for deb in *.deb; do dpkg-deb -x "$deb" "$dir/root"; done
# gguf-py runs in Debian 12's python3; its numpy (and BLAS) from bookworm when the host has none.
rm -rf "$dir/pyroot"
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  mkdir -p "$dir/pydebs" "$dir/pyroot"
  write_source bookworm
  # shellcheck disable=SC2086
  apt-get $apt_opts -q update >>"$dir/apt/update.log" 2>&1 || { cat "$dir/apt/update.log" >&2; exit 1; }
  cd "$dir/pydebs"
  for p in python3-numpy libblas3 liblapack3 libgfortran5 libquadmath0; do
    # shellcheck disable=SC2086
    apt-get $apt_opts -q download "$p/bookworm" >>"$dir/apt/download.log" 2>&1 || { echo "cannot download $p" >&2; exit 1; }
  done
  for deb in *.deb; do dpkg-deb -x "$deb" "$dir/pyroot"; done
  rm -f "$dir/apt/parts/bookworm.sources"
fi
touch "$dir/ok"
