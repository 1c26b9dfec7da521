#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# python_venv.sh - the PEP 517 package (pyproject.toml, setup.py) installed as a user installs it: a fresh
# clone of the source tree, a fresh virtual environment of /usr/bin/python3 (--system-site-packages, for
# Debian's numpy and h5py), `pip install --no-build-isolation .`, no root, no LD_LIBRARY_PATH, no network.
#
# usage: tests/python_venv.sh SOURCE_DIR H5SHUF
#   SOURCE_DIR: a git checkout (its committed HEAD is cloned: uncommitted changes are not tested; skipped,
#   77, when it is not a git checkout); H5SHUF: the build tree's tool, the reference for the bytes.
# Checks: pip install builds and installs; `import h5shuf` comes from the venv and loads the library bundled
# in it; h5shuf.shuffle writes the build tree's tool's bytes; the venv's `h5shuf` command is first on PATH,
# prints its version and writes the same bytes; `pip wheel` makes a py3-none-<platform> wheel that installs
# in a second venv and works there; `pip uninstall` leaves the venv as it was, file for file; nothing was
# written outside the temporary directory (HOME is a fresh directory; /usr/local and Debian's Python
# directories gain no h5shuf file).  Each check prints PASS or FAIL; the last line is "N passed, M failed",
# with the seconds of each step.
set -uo pipefail
src=$(cd "$1" && pwd)
tool=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
if ! git -C "$src" rev-parse --verify -q HEAD >/dev/null; then
  echo "SKIP: $src is not a git checkout (this test clones it)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/python_venv.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1
  shift
  if "$@" >"$tmp/last.log" 2>&1; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $(tail -8 "$tmp/last.log" | tr '\n' ' ')"
    failed=$((failed + 1))
  fi
}
t_start=$SECONDS
step() { # step NAME: the seconds since the last step
  echo "  ($1: $((SECONDS - t_last)) s)"
  t_last=$SECONDS
}
t_last=$SECONDS

# (cloned with the user's own git configuration, which may name the checkout a safe.directory)
echo "cloning $src at $(git -C "$src" rev-parse --short HEAD)"
check "git clone of the source tree" git clone -q "$src" "$tmp/src"

# A user's environment: nothing of the build tree, no cache, no index (Debian's setuptools, wheel, numpy).
unset PYTHONPATH H5SHUF_LIBRARY LD_LIBRARY_PATH LD_PRELOAD PYTHONHOME HDF5_PLUGIN_PATH
mkdir "$tmp/home" "$tmp/run"
export HOME=$tmp/home PATH=/usr/bin:/bin PIP_NO_CACHE_DIR=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  PIP_NO_INPUT=1 H5SHUF_BUILD_JOBS=2
touch "$tmp/marker"
sleep 1 # (find -newer compares whole seconds on some file systems)
check "a fresh venv (--system-site-packages)" /usr/bin/python3 -m venv --system-site-packages "$tmp/v"
listing() { (cd "$1" && find . | LC_ALL=C sort); }
export -f listing
listing "$tmp/v" >"$tmp/before.txt"
step "clone and venv"
check "pip install --no-build-isolation . (in the clone)" bash -c "cd '$tmp/src' && '$tmp/v/bin/pip' install -q --no-build-isolation ."
step "pip install (the CMake build)"

# The acceptance's one-liner, from another directory, then where the package and library came from.
ex=$tmp/src/testdata/example.h5
check "python -c 'import h5shuf; h5shuf.shuffle([example.h5], \"o.h5\", seed=1)'" bash -c \
  "cd '$tmp/run' && '$tmp/v/bin/python' -c 'import h5shuf; h5shuf.shuffle([\"$ex\"], \"o.h5\", seed=1)'"
check "import h5shuf is the venv's, and loads the library bundled in it" bash -c \
  "cd '$tmp/run' && '$tmp/v/bin/python' -c 'import h5shuf; print(h5shuf.__file__); print(h5shuf.library_path())' >where.txt && \
   site=\$('$tmp/v/bin/python' -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])') && \
   [ \"\$(sed -n 1p where.txt)\" = \"\$site/h5shuf/__init__.py\" ] && \
   [ \"\$(sed -n 2p where.txt)\" = \"\$site/h5shuf/_bin/libh5shuf.so.1\" ]"
check "the bundled library needs no LD_LIBRARY_PATH (ldd: nothing not found)" bash -c \
  "! ldd '$tmp/v'/lib/python3*/site-packages/h5shuf/_bin/libh5shuf.so.1 | grep -q 'not found'"
check "h5shuf.shuffle wrote the build tree's tool's bytes (h5shuf -s 1, same input)" bash -c \
  "cd '$tmp/run' && mkdir ref && cd ref && '$tool' -q -s 1 '$ex' o.h5 && cmp o.h5 ../o.h5"
check "the venv's h5shuf command is first on PATH and prints its version" bash -c \
  "cd '$tmp/run' && PATH='$tmp/v/bin':\$PATH && [ \"\$(command -v h5shuf)\" = '$tmp/v/bin/h5shuf' ] && \
   h5shuf --version | grep -q '^h5shuf 0\\.'"
check "the venv's h5shuf command shuffles: the same bytes" bash -c \
  "cd '$tmp/run' && mkdir cli && cd cli && '$tmp/v/bin/h5shuf' -q -s 1 '$ex' o.h5 && cmp o.h5 ../o.h5"
check "the command's exit status and message are the tool's (a missing input: 1, one line)" bash -c \
  "cd '$tmp/run' && '$tmp/v/bin/h5shuf' nothing.h5 x.h5 2>err.txt; [ \$? -eq 1 ] && [ \$(wc -l <err.txt) -eq 1 ] && \
   grep -q '^h5shuf: .*nothing.h5' err.txt"
step "checks in the venv"

# pip wheel (the CMake build of the clone is reused), installed in a second venv.
check "pip wheel --no-deps --no-build-isolation . makes one py3-none-<platform> wheel" bash -c \
  "cd '$tmp/src' && '$tmp/v/bin/pip' wheel -q --no-deps --no-build-isolation -w '$tmp/wheels' . && \
   ls '$tmp/wheels' | grep -qx 'h5shuf-0\\.[0-9.]*-py3-none-linux_[a-z0-9_]*\\.whl' && [ \$(ls '$tmp/wheels' | wc -l) -eq 1 ]"
check "the wheel installs in another venv, which shuffles and has the command" bash -c \
  "/usr/bin/python3 -m venv --system-site-packages '$tmp/v2' && '$tmp/v2/bin/pip' install -q '$tmp'/wheels/*.whl && \
   cd '$tmp/run' && mkdir w && cd w && '$tmp/v2/bin/python' -c 'import h5shuf, sys; \
   assert h5shuf.library_path().startswith(\"$tmp/v2/\"), h5shuf.library_path(); \
   h5shuf.shuffle([\"$ex\"], \"o.h5\", seed=1)' && cmp o.h5 ../o.h5 && '$tmp/v2/bin/h5shuf' --version"
step "pip wheel and a second venv"

check "pip uninstall -y h5shuf leaves the venv as it was before the install, file for file" bash -c \
  "'$tmp/v/bin/pip' uninstall -q -y h5shuf && diff '$tmp/before.txt' <(listing '$tmp/v')"
check "nothing written outside the test's directory (HOME empty; no new h5shuf file in /usr/local, /usr/lib/python3*)" \
  bash -c "[ -z \"\$(ls -A '$tmp/home')\" ] && \
   [ -z \"\$(find /usr/local /usr/lib/python3* -newer '$tmp/marker' -name '*h5shuf*' 2>/dev/null)\" ]"
step "uninstall"
echo "$passed passed, $failed failed ($((SECONDS - t_start)) s)"
[ "$failed" -eq 0 ]
