#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fuzz whole HDF5 files (fuzz_file) for a bounded time and sort what it finds (tests/fuzz/classify.py).
#   usage: tests/fuzz/run_file.sh FUZZ_FILE_BINARY SECONDS [WORKERS] [ARTIFACT_DIR]
# libhdf5 1.10 crashes, leaks and runs away on some hostile metadata, which h5shuf cannot mend: the
# fuzzer runs in fork mode, going on past every crash, leak, out-of-memory and timeout (each saved in
# ARTIFACT_DIR, a temporary directory by default), from a copy of the committed corpus.  Every artifact is
# then replayed and classified by the first frame of its stack outside the sanitizers, libFuzzer and libc.
# Exit status 1 only when one of them is h5shuf's (src/, tests/fuzz/): fix it and add the input to
# tests/fuzz/corpus/file; libhdf5's are listed with their distinct stacks and do not fail.
set -euo pipefail
fuzzer=$1 seconds=$2 workers=${3:-1} art=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
# fuzz_file's per-process directories: a job that ends on a crash or leak runs no atexit handler, so they
# go under one directory removed here (thousands in a long run otherwise stay in /dev/shm)
FUZZ_FILE_TMPDIR=$(mktemp -d -p "$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")")
export FUZZ_FILE_TMPDIR
own_art=""
if [ -z "$art" ]; then
  art=$(mktemp -d)
  own_art=1
fi
mkdir -p "$art"
trap 'rm -rf "$work" "$FUZZ_FILE_TMPDIR"; [ -z "$own_art" ] || rm -rf "$art"' EXIT
cp "$here"/corpus/file/* "$work/"
# -malloc_limit_mb / -rss_limit_mb: a runaway is reported as an out-of-memory, not left to grow
"$fuzzer" -fork="$workers" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$seconds" \
  -malloc_limit_mb=2048 -rss_limit_mb=2048 -timeout=30 -artifact_prefix="$art/" -print_final_stats=1 "$work" \
  >"$work.log" 2>&1 || true
grep -E '^#[0-9]+: cov' "$work.log" | tail -1 || true
grep -E '^(stat::|INFO: fuzzed for|INFO: exiting)' "$work.log" || true
rm -f "$work.log"
shopt -s nullglob
found=("$art"/*)
echo "fuzz_file: ${#found[@]} artifacts in $seconds s"
((${#found[@]})) || exit 0
# Every crash, out-of-memory and timeout is replayed; of the leaks (HDF5 1.10.8 leaks an object header it
# fails to load, and a leak ends a fork job, so they come by the thousand) at most LEAKS_MAX, picked at random.
leaks=("$art"/leak-*)
others=()
for f in "${found[@]}"; do [[ $f == "$art"/leak-* ]] || others+=("$f"); done
picked=()
if ((${#leaks[@]})); then
  mapfile -t picked < <(printf '%s\n' "${leaks[@]}" | shuf -n "${LEAKS_MAX:-200}")
fi
echo "fuzz_file: replaying ${#others[@]} crashes/OOMs/timeouts and ${#picked[@]} of ${#leaks[@]} leaks"
python3 "$here/classify.py" --fuzzer "$fuzzer" --summary "${others[@]}" "${picked[@]}"
