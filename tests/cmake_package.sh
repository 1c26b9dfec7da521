#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cmake_package.sh - what `cmake --install` leaves, used as a user would: find_package(h5shuf) from a
# C project (the shared and the static library), pkg-config's h5shuf.pc, and the Python package imported
# from the interpreter's directory under the prefix, loading the installed library by itself.
#
# usage: tests/cmake_package.sh BUILD_DIR [--sanitized ASAN_RUNTIME]
# Each check prints PASS or FAIL; the last line is "N passed, M failed".  In a sanitizer build the
# consumers are compiled with ASan+UBSan (the installed library is instrumented) and python runs with the
# ASan runtime preloaded, LeakSanitizer off (tests/python_env.py says why).
set -uo pipefail
build=$(cd "$1" && pwd)
runtime=""
[ "${2:-}" = "--sanitized" ] && runtime=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmake_package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1
  shift
  if "$@" >"$tmp/last.log" 2>&1; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $(tail -5 "$tmp/last.log" | tr '\n' ' ')"
    failed=$((failed + 1))
  fi
}
cflags=""
pyenv=()
if [ -n "$runtime" ]; then
  cflags="-fsanitize=address,undefined"
  pyenv=(env "LD_PRELOAD=$runtime" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0")
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # the consumers exit without freeing HDF5's state
fi

prefix="$tmp/prefix"
check "cmake --install into a fresh prefix" cmake --install "$build" --prefix "$prefix"

# The key of row 7 under seed 42, from numpy's Philox (docs/algorithm.md): the consumers must print it.
want=$(/usr/bin/python3 -c 'import numpy as np; print(int(np.random.Philox(key=42, counter=6).random_raw(4)[0]))')
mkdir -p "$tmp/app"
cat >"$tmp/app/main.c" <<'C'
#include <h5shuf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    h5shuf_job *job = h5shuf_job_create(&o);
    int bad = !job || h5shuf_job_add_input(job, "in.h5:/x") != H5SHUF_OK ||
              strcmp(h5shuf_version(), H5SHUF_VERSION_STRING) || h5shuf_version_number() != H5SHUF_VERSION_NUMBER ||
              !H5SHUF_AT_LEAST_VERSION(0, 1, 0);
    h5shuf_job_free(job);
    printf("%" PRIu64 "\n", h5shuf_key(42, 7));
    return bad;
}
C
cat >"$tmp/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(app C)
find_package(h5shuf 0.1 REQUIRED)
add_executable(app_shared main.c)
target_link_libraries(app_shared PRIVATE h5shuf::h5shuf)
add_executable(app_static main.c)
target_link_libraries(app_static PRIVATE h5shuf::h5shuf_static)
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/cli.txt CONTENT "$<TARGET_FILE:h5shuf::cli>\n")
CM
check "find_package(h5shuf) configures a consumer" cmake -S "$tmp/app" -B "$tmp/app/build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$cflags"
check "... and builds it against h5shuf::h5shuf and h5shuf::h5shuf_static" cmake --build "$tmp/app/build"
for kind in shared static; do
  check "the $kind consumer runs and prints numpy's K(42, 7)" \
    bash -c "[ \"\$('$tmp/app/build/app_$kind')\" = '$want' ]"
done
check "the shared consumer uses the installed libh5shuf.so" \
  bash -c "ldd '$tmp/app/build/app_shared' | grep -q '$prefix/lib/libh5shuf.so'"
check "the installed headers are h5shuf.h alone (h5shuf_debug.h, the test knobs, is not installed)" \
  bash -c "[ \"\$(ls '$prefix/include')\" = h5shuf.h ]"
check "h5shuf::cli is the installed tool" bash -c "[ \"\$(cat '$tmp/app/build/cli.txt')\" = '$prefix/bin/h5shuf' ]"

# pkg-config, as the README shows it.
check "pkg-config --cflags --libs h5shuf builds the consumer" bash -c \
  "cc $cflags '$tmp/app/main.c' -o '$tmp/app/pc' \$(PKG_CONFIG_PATH='$prefix/lib/pkgconfig' pkg-config --cflags --libs h5shuf) \
   -Wl,-rpath,'$prefix/lib' && [ \"\$('$tmp/app/pc')\" = '$want' ]"

# The Python package, from the prefix's dist-packages, run outside the source tree, no $H5SHUF_LIBRARY.
site=$(ls -d "$prefix"/lib/python3*/dist-packages)
cat >"$tmp/py.py" <<'PY'
import os, sys
import h5py, numpy as np
import h5shuf
print(h5shuf.library_path())
with h5py.File("in.h5", "w") as f:
    f["x"] = np.arange(40, dtype=np.int32).reshape(20, 2)
r = h5shuf.shuffle(["in.h5:/x"], "out.h5:/x", seed=42)
got = np.concatenate([b["/x"] for b in h5shuf.ShuffledReader("out.h5", "/x", 6)])[:, 0] // 2
print(r["status"], list(got) == list(np.lexsort((np.arange(20), h5shuf.keys(42, np.arange(20))))))
PY
check "the installed Python package imports from the prefix and loads the installed library" bash -c \
  "cd '$tmp' && env -u H5SHUF_LIBRARY PYTHONPATH='$site' ${pyenv[*]} /usr/bin/python3 py.py > py.out && \
   [ \"\$(head -1 py.out)\" = '$prefix/lib/libh5shuf.so.1' ] && [ \"\$(tail -1 py.out)\" = 'ok True' ] && \
   [ \"\$(/usr/bin/python3 -c 'import sys; sys.path.insert(0, \"$site\"); import h5shuf; print(h5shuf.__file__)')\" = '$site/h5shuf/__init__.py' ]"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
