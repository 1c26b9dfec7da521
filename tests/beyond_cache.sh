#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# beyond_cache.sh - a run whose rows are larger than the page cache (issue 52), stood in on small files by
# H5SHUF_DEBUG_MEM_AVAILABLE=1 (the memory the system says it has): the same output bytes as an ordinary
# run, while under strace
#   - pass 1 reads the inputs' slabs ahead as one span each (hdf5/spanread.c): the input opened a second time
#     with O_DIRECT and read through that descriptor, when a slab's chunks lie side by side (raw and gzip);
#     not when they are spread over the file (interleaved with another dataset's larger chunks); chunks
#     never written (fill values) still read through HDF5;
#   - pass 2 asks the kernel for each pile's chunks ahead (posix_fadvise WILLNEED on the scratch file);
#   - the scratch's chunks of rows stored as they are and compressed in turn (H5SHUF_DEBUG_WRITES_WAIT=
#     alternate; writepace.c decides that from the disk otherwise), every id chunk compressed.
# Usage: bash tests/beyond_cache.sh PATH/TO/h5shuf   (needs strace and /usr/bin/python3 with h5py)
set -u
H=$1
command -v strace >/dev/null || { echo "not ok - strace is not installed (scripts/test.sh installs it)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/var/tmp}/h5shuf-beyond.XXXXXX")
trap 'rm -rf "$W"' EXIT
/usr/bin/python3 - "$W" <<'PY' || { echo "not ok - making the inputs failed"; exit 1; }
import sys
import h5py
import numpy as np
w = sys.argv[1]
n, cols = 60000, 64
rng = np.random.default_rng(52)
x = (np.round(rng.standard_normal((n, cols), dtype=np.float32) * 256) / 256).astype(np.float32)
y = rng.integers(0, 1000, n)
for name, kw in (("side", {}), ("gzip", {"compression": "gzip", "compression_opts": 4})):
    with h5py.File("%s/%s.h5" % (w, name), "w") as f:  # /data written first: its chunks side by side
        f.create_dataset("data", data=x, chunks=(1000, cols), **kw)
        f.create_dataset("label", data=y, chunks=(4096,), **kw)
with h5py.File(w + "/spread.h5", "w") as f:  # each chunk of /data between two of /junk's, 4 times larger
    d = f.create_dataset("data", (n, cols), "<f4", chunks=(1000, cols))
    j = f.create_dataset("junk", (n, 4 * cols), "<f4", chunks=(1000, 4 * cols))
    f.create_dataset("label", data=y, chunks=(4096,))
    ones = np.ones((1000, 4 * cols), "<f4").tobytes()
    for s in range(0, n, 1000):  # direct chunk writes: stored in this order (HDF5 2's chunk cache kept
        d.id.write_direct_chunk((s, 0), x[s:s + 1000].tobytes())  # /data's for a while and stored them
        j.id.write_direct_chunk((s, 0), ones)  # side by side)
with h5py.File(w + "/holes.h5", "w") as f:  # every third chunk of /data never written: its fill value, 7
    d = f.create_dataset("data", (n, cols), "<f4", chunks=(1000, cols), fillvalue=7)
    for s in range(0, n, 1000):
        if s // 1000 % 3:
            d[s:s + 1000] = x[s:s + 1000]
    f.create_dataset("label", data=y, chunks=(4096,))
PY
failed=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }
# count TRACE PATTERN: the lines of the trace matching an extended regular expression
count() { grep -cE "$2" "$1"; }
for name in side gzip spread holes; do
    in=$W/$name.h5
    rm -f "$W/ref.h5" "$W/out.h5"
    "$H" -q -s 5 -m 64M "$in:/data,/label" "$W/ref.h5" || { bad "$name: the ordinary run failed"; continue; }
    # (LeakSanitizer cannot run under ptrace: off for the traced run; the runs at the end are not traced)
    if ! ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" H5SHUF_DEBUG_MEM_AVAILABLE=1 \
        H5SHUF_DEBUG_WRITES_WAIT=alternate strace -ff -qq -y -e trace=openat,pread64,fadvise64 -o "$W/trace" \
        "$H" -q -s 5 -m 64M -j 2 --strategy two-pass -t "$W" "$in:/data,/label" "$W/out.h5" 2>"$W/err"; then
        sed 's/^/#   /' "$W/err"; bad "$name: the run beyond the cache failed"; continue
    fi
    cat "$W"/trace.* >"$W/trace" && rm -f "$W"/trace.* # (one file a thread: no call cut in two)
    cmp -s "$W/ref.h5" "$W/out.h5" && ok "$name: the ordinary run's bytes" || bad "$name: the output differs"
    direct=$(count "$W/trace" "openat\(.*$name\.h5\", O_RDONLY\|O_DIRECT")
    # a slab's /data: 20000 rows of 256 bytes, 5 MB raw, 2.5 MB with gzip; the labels' spans are smaller
    spans=$(count "$W/trace" "pread64\([0-9]+<[^>]*$name\.h5>, .*= [0-9]{7,}$")
    willneed=$(count "$W/trace" 'fadvise64\([0-9]+<[^>]*h5shuf-scratch-[^>]*>, .*POSIX_FADV_WILLNEED')
    case $name in
        spread) # (the labels' chunks lie side by side: theirs are read as spans)
            [ "$spans" = 0 ] && ok "$name: /data not read as spans (its chunks apart)" || bad "$name: $spans span reads" ;;
        *)
            [ "$direct" = 1 ] && ok "$name: the input opened once with O_DIRECT" || bad "$name: $direct direct opens"
            [ "$spans" -ge 2 ] && ok "$name: $spans slabs read as one span" || bad "$name: $spans span reads" ;;
    esac
    [ "$willneed" -ge 1 ] && ok "$name: $willneed ranges of the scratch asked ahead" || bad "$name: no read asked ahead"
    rm -f "$W/ref.h5" "$W/out.h5"
done
# the scratch both ways, every chunk of one kind, against the ordinary run (a plant that writes a raw chunk
# with the wrong filter mask fails here as well as above)
rm -f "$W/ref.h5" "$W/out.h5"
"$H" -q -s 5 -m 64M "$W/gzip.h5:/data,/label" "$W/ref.h5"
for wait in 0 1; do
    H5SHUF_DEBUG_MEM_AVAILABLE=1 H5SHUF_DEBUG_WRITES_WAIT=$wait "$H" -q -s 5 -m 64M --strategy two-pass -t "$W" \
        "$W/gzip.h5:/data,/label" "$W/out.h5" && cmp -s "$W/ref.h5" "$W/out.h5" &&
        ok "scratch chunks all $([ $wait = 0 ] && echo 'as they are' || echo compressed)" ||
        bad "scratch chunks all of one kind ($wait): output differs or the run failed"
    rm -f "$W/out.h5"
done
[ "$failed" = 0 ] && echo "# all passed" || echo "# $failed failed"
exit $((failed > 0))
