#!/usr/bin/env bash
# Installs the Debian 12 packages provkit builds, tests and benchmarks with,
# or their equivalents on Ubuntu 24.04 and Debian 13 (the names that differ
# are swapped below; Ubuntu needs its universe component for catch2, CLI11 and toml++).
# Does nothing when everything is already present (no apt call at all).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libcurl4-openssl-dev libssl-dev libarchive-dev nlohmann-json3-dev
  libyaml-cpp-dev libcli11-dev catch2 libtomlplusplus-dev libzstd-dev zlib1g-dev
  clang libclang-rt-14-dev help2man dpkg-dev
  python3 python3-venv python3-pip python3-dev python3-setuptools-whl python3-pip-whl
  nginx-light iproute2 binutils zstd xz-utils curl openssl
  autoconf automake libtool meson python3-setuptools python3-jsonschema python3-pytest
  ccache python3-tqdm valgrind clang-format clang-tidy
  patchelf python3-numpy python3-packaging
)
# Other releases name two of them differently: clang's runtime libraries
# (libFuzzer, sanitizers) follow the default clang, and nginx-light is gone.
distro=$(. /etc/os-release && echo "${ID:-}:${VERSION_ID:-}")
if [[ $distro != debian:12 ]]; then
  packages=("${packages[@]/#libclang-rt-14-dev/libclang-rt-dev}")
  packages=("${packages[@]/#nginx-light/nginx}")
fi
# Benchmarks only (bench/): deps.sh --bench adds these.
if [[ ${1:-} == --bench ]]; then packages+=(aria2 hyperfine); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# node and npm may come from another repository (nodesource ships npm inside nodejs).
if ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "deps.sh: missing Debian packages: ${missing[*]} (run as root, or install them with apt-get)" >&2
  exit 2
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
