#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's test command: installs what the tests need (scripts/build.sh with H5SHUF_BUILD_TESTS=ON),
# builds the library, the tools and every test suite into build/ (or $H5SHUF_BUILD_DIR), and runs them
# with ctest, two at a time.  Arguments go to ctest (e.g. -R md5_matrix, -E '^kill_sweep$').
set -euo pipefail
cd "$(dirname "$0")/.."
H5SHUF_BUILD_TESTS=ON bash scripts/build.sh
ctest --test-dir "${H5SHUF_BUILD_DIR:-build}" --output-on-failure -j 2 "$@"
