#!/usr/bin/env bash
# Set up and build h5shuf on Debian: installs the packages it needs when any is missing (as root, or
# through sudo), then configures and builds into build/ (or $H5SHUF_BUILD_DIR).
#   H5SHUF_CMAKE_FLAGS   extra flags for cmake's configure step (e.g. -DH5SHUF_WERROR=ON)
set -euo pipefail
cd "$(dirname "$0")/.."

# liblzf-dev, liblzo2-dev, liblz4-dev: the codecs of the built-in lzf, lzo (PyTables') and bitshuffle
# filters (python3-tables, PyTables built with LZO, is the tests' independent LZO writer and reader).  The
# third line: the tests' independent writers and readers (python3-hdf5plugin; bitshuffle, the reference
# plugin) and the HDF5 filter plugins users have (lz4, bzip2, blosc), which Debian installs in the directory
# its HDF5 searches by default (/usr/lib/<triplet>/hdf5/serial/plugins), so they work with no
# HDF5_PLUGIN_PATH.  python3-tqdm: the Python package's progress bar (tests/python_api.py draws it;
# python3-torch is optional: the DataLoader test runs when it is installed).  openmpi-bin, libopenmpi-dev:
# h5shuf-mpi, the distributed run (built when CMake finds MPI).  python3-setuptools, python3-wheel,
# python3-venv, python3-pip: the PEP 517 package (pyproject.toml: pip install --no-build-isolation . into a
# venv; tests/python_venv.sh).
packages=(build-essential cmake pkg-config libhdf5-dev hdf5-tools libzstd-dev libxxhash-dev libdeflate-dev zlib1g-dev libcunit1-dev
          liblzf-dev liblzo2-dev liblz4-dev python3-h5py python3-numpy time strace python3-netcdf4 python3-tables netcdf-bin
          python3-hdf5plugin bitshuffle hdf5-filter-plugin hdf5-filter-plugin-blosc-serial hdf5-filter-plugin-zfp-serial
          python3-tqdm openmpi-bin libopenmpi-dev python3-setuptools python3-wheel python3-venv python3-pip)
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
