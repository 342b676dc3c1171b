#!/usr/bin/env bash
# Packs built provkit binaries with every shared library they need beyond
# glibc and the C++ runtime into one folder, so they run on a host with other
# library versions (the lent GPU host is Ubuntu 24.04: no libarchive,
# yaml-cpp 0.8). Usage: pack.sh OUTDIR BINARY...
# On the other host: LD_LIBRARY_PATH=OUTDIR/lib OUTDIR/bin/<tool>.
set -euo pipefail
out=$1; shift
mkdir -p "$out/bin" "$out/lib"
skip='^(linux-vdso|libc\.so|libm\.so|ld-linux|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s)'
for bin in "$@"; do
  cp -L "$bin" "$out/bin/"
  strip --strip-debug "$out/bin/$(basename "$bin")"
  ldd "$bin" | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    cp -L "$path" "$out/lib/$name"
  done
done
du -sh "$out"
