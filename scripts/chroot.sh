#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and test h5shuf in a Debian chroot of another release, so that every HDF5 users have is tested on
# one machine: bookworm (HDF5 1.10.8, the host), trixie (1.14.5) and forky or sid (2.x).
#
#   scripts/chroot.sh SUITE [CTEST_ARGS...]
#
# Makes the chroot with debootstrap --variant=minbase SUITE DIR http://deb.debian.org/debian (the mirror
# this machine's apt uses; forky and sid through debootstrap's sid script, which bookworm's debootstrap
# uses for both), mounts /proc, /sys, /dev, /dev/pts and /dev/shm in it, clones this checkout's HEAD into
# it, and there runs the README's test command (scripts/test.sh: the packages, the -Werror build, ctest)
# with CTEST_ARGS added to ctest's (e.g. -E '^(kill_sweep|fault_sweep)$').  Every mount is undone on
# every exit, error and signal included.  Needs root.
#   H5SHUF_CHROOT_DIR   where the chroot lives (default /var/tmp/h5shuf-chroot-SUITE); an existing one is
#                       reused as it is (CI starts without one)
#   H5SHUF_CMAKE_FLAGS  the configure flags there (default -DH5SHUF_WERROR=ON)
#   H5SHUF_TEST_TORCH   ON: install python3-torch there too (default OFF: about 1 GB more to install for the
#                       readers' DataLoader test, which does not depend on HDF5's version; the host's runs it)
#   H5SHUF_SHARED       a directory bind-mounted read-only beside the clone as ../shared (default: ../shared
#                       of this checkout, when it exists), so the tests of ../shared/real run there too
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:?usage: scripts/chroot.sh SUITE [CTEST_ARGS...]}
shift
[ "$(id -u)" -eq 0 ] || { echo "chroot.sh: needs root (debootstrap, mount, chroot)" >&2; exit 1; }
dir=${H5SHUF_CHROOT_DIR:-/var/tmp/h5shuf-chroot-$suite}
mirror=http://deb.debian.org/debian
shared=${H5SHUF_SHARED:-$(cd .. && pwd)/shared}

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
if [ ! -x "$dir/usr/bin/apt-get" ]; then
  script=()
  # bookworm's debootstrap has no script for forky; sid's fits every suite after trixie
  [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=(/usr/share/debootstrap/scripts/sid)
  echo "chroot.sh: debootstrap $suite into $dir" >&2
  rm -rf "$dir"
  debootstrap --variant=minbase "$suite" "$dir" "$mirror" "${script[@]}" >"$dir.debootstrap.log" 2>&1 ||
    { tail -20 "$dir.debootstrap.log" >&2; exit 1; }
fi

mounted=()
# undo every mount, innermost first, whatever ends the script
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
mnt() { # mnt TARGET MOUNT-ARGS...: mount under the chroot, recorded for cleanup
  local target=$dir$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}
mnt /proc -t proc proc
mnt /sys -t sysfs sysfs
mnt /dev --bind /dev
mnt /dev/pts -t devpts devpts
mnt /dev/shm -t tmpfs -o mode=1777 shm
cp /etc/resolv.conf "$dir/etc/resolv.conf"
# the mirror's testing and unstable Release files may be past their Valid-Until on a machine whose clock
# is ahead of the mirror's last push; the archive's signatures are still checked
echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99h5shuf-valid-until"

# the code under test: this checkout's HEAD, cloned (as CI's fresh clone is), beside an optional ../shared
work=/h5shuf/main
rm -rf "$dir/h5shuf"
mkdir -p "$dir/h5shuf"
git clone -q . "$dir$work"
if [ -d "$shared" ]; then
  mkdir -p "$dir/h5shuf/shared"
  mnt /h5shuf/shared --bind -o ro "$shared"
fi

quoted=$(printf ' %q' "$@")
stamp() { echo "=== chroot.sh: $* (at ${SECONDS} s)"; }
stamp "$suite ready: the packages, the build and the suite"
chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 CI="${CI:-}" DEBIAN_FRONTEND=noninteractive H5SHUF_CMAKE_FLAGS="${H5SHUF_CMAKE_FLAGS:--DH5SHUF_WERROR=ON}" \
  H5SHUF_TEST_TORCH="${H5SHUF_TEST_TORCH:-OFF}" \
  /bin/bash -c "set -euo pipefail; cd $work; . /etc/os-release; echo \"=== chroot: \$PRETTY_NAME\";
    bash scripts/test.sh$quoted"
