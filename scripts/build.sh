#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Set up and build h5shuf on Debian: installs the packages it needs when any is missing (as root, or
# through sudo), then configures and builds into build/ (or $H5SHUF_BUILD_DIR).  By default only what the
# tool and the library need (the README's first command); scripts/test.sh sets H5SHUF_BUILD_TESTS=ON for
# the test suites, their packages, h5shuf-mpi and the bench programs.
#   H5SHUF_CMAKE_FLAGS   extra flags for cmake's configure step (e.g. -DH5SHUF_WERROR=ON)
#   H5SHUF_BUILD_TESTS   ON: also the tests' packages and targets (default OFF)
set -euo pipefail
cd "$(dirname "$0")/.."
tests=${H5SHUF_BUILD_TESTS:-OFF}

# The tool and the library: a C compiler (gcc, make, the C library's headers: not build-essential's C++ and
# packaging tools), CMake, HDF5, and the codecs of the built-in filters (zstd, libdeflate for gzip, lzf, lzo
# for PyTables' LZO, lz4 for bitshuffle's LZ4 mode), xxhash (the journal's checksums).  zlib1g-dev: CMake's
# check of zlib (libhdf5-dev needs it too).
packages=(gcc make libc6-dev cmake pkg-config libhdf5-dev libzstd-dev libxxhash-dev libdeflate-dev zlib1g-dev
          liblzf-dev liblzo2-dev liblz4-dev)
if [ "$tests" = ON ]; then
  # The test suites: CUnit; HDF5's tools (h5dump, h5diff, h5repack) and the independent writers and readers
  # (h5py, netCDF4-python and ncdump, PyTables built with LZO, hdf5plugin, bitshuffle's reference plugin);
  # the HDF5 filter plugins users have (lz4, bzip2, blosc, zfp), which Debian installs where its HDF5
  # searches by default; time and strace (peak RSS, the calls a run makes); python3-tqdm (the Python
  # package's progress bar); openmpi-bin and libopenmpi-dev (h5shuf-mpi and its tests); setuptools, wheel,
  # venv and pip (the PEP 517 package from a clone, tests/python_venv.sh).  python3-torch (the readers
  # under a real DataLoader, tests/python_readers.py) unless H5SHUF_TEST_TORCH=OFF.
  packages+=(build-essential libcunit1-dev hdf5-tools python3-h5py python3-numpy time strace python3-netcdf4 python3-tables netcdf-bin
             python3-hdf5plugin bitshuffle hdf5-filter-plugin hdf5-filter-plugin-blosc-serial hdf5-filter-plugin-zfp-serial
             python3-tqdm openmpi-bin libopenmpi-dev python3-setuptools python3-wheel python3-venv python3-pip)
  [ "${H5SHUF_TEST_TORCH:-ON}" = OFF ] || packages+=(python3-torch)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "build.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  # (the tool's packages alone without their recommends: a smaller, faster first install; the tests'
  # with them, as Debian installs them for a user)
  norec=--no-install-recommends
  [ "$tests" = ON ] && norec=
  # (dpkg's unsafe-io: no sync after each file it unpacks, as Debian's installers and image builders do for
  # a fresh install: a crash mid-install is repaired by installing again)
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $norec -o Dpkg::Options::=--force-unsafe-io \
    "${missing[@]}" >/dev/null
fi

build="${H5SHUF_BUILD_DIR:-build}"
# shellcheck disable=SC2086  # H5SHUF_CMAKE_FLAGS is a list of flags
cmake -S . -B "$build" -DH5SHUF_BUILD_TESTS="$tests" ${H5SHUF_CMAKE_FLAGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
