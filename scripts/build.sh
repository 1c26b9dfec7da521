#!/usr/bin/env bash
# Set up and build h5shuf on Debian: installs the packages it needs when any is missing (as root, or
# through sudo), then configures and builds into build/ (or $H5SHUF_BUILD_DIR).
#   H5SHUF_CMAKE_FLAGS   extra flags for cmake's configure step (e.g. -DH5SHUF_WERROR=ON)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libhdf5-dev hdf5-tools libzstd-dev libxxhash-dev libdeflate-dev libcunit1-dev
          python3-h5py python3-numpy time)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "build.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build="${H5SHUF_BUILD_DIR:-build}"
# shellcheck disable=SC2086  # H5SHUF_CMAKE_FLAGS is a list of flags
cmake -S . -B "$build" ${H5SHUF_CMAKE_FLAGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
