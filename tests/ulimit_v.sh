#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ulimit_v.sh - runs under an address-space limit (ulimit -v) from 20 MB to 400 MB end cleanly (issue 25):
# every run exits 0 or 1, never with a signal (HDF5 1.10.8 crashed with SIGSEGV in H5AC_create, or aborted
# with "double free or corruption" at exit, when its own allocations failed), a failure prints exactly one
# line "h5shuf: ...", and nothing is left in the output and scratch directories; a run that exits 0 wrote
# a permutation of its input (h5shuf verify, run without the limit, for the first success of each case).
# Cases: raw and gzip float rows at -m 4M to 1G with one and two threads, four shards, the direct path
# (rows of 128 KiB),
# variable-length rows (h5py), a 16 MB --head.  Below the floor at which the dynamic loader can map
# libhdf5 and its dependencies (libcurl, gnutls, krb5: about 25 MB on HDF5 1.10.8, more on 1.14), no h5shuf
# code runs: those runs (exit 127, "error while loading shared libraries"; 126, exec refused; or a signal in
# the loader or a library's constructor) are counted apart, and only allowed where `h5shuf --version`
# cannot start under the same limit either.
# Then the message: the default budget (1 GiB) on 2,000,000 rows of 64 bytes with -j 2 under 300 MB is
# refused with "lower -m to at most NM", and the same run at that -m succeeds and verifies.
# Skipped (77) in a sanitizer build: ASan reserves terabytes of address space, so no limit can be set.
# Usage: bash tests/ulimit_v.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2
PY=/usr/bin/python3
if ldd "$H" 2>/dev/null | grep -q -E 'lib(a|t|ub)san'; then
    echo "skipped: a sanitizer build (ASan cannot run under ulimit -v)"
    exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-ulimit.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/out" "$W/scratch"
"$GEN" floats "$W/raw.h5" 200000 16 >/dev/null || exit 1
"$GEN" floats "$W/gz.h5" 100000 32 4 >/dev/null || exit 1
"$GEN" floats "$W/big.h5" 2000000 16 >/dev/null || exit 1
"$GEN" floats "$W/wide.h5" 200 32768 >/dev/null || exit 1 # rows of 128 KiB, for the direct path
have_vlen=0
if "$PY" -c 'import h5py' 2>/dev/null; then
    "$PY" - "$W/vl.h5" <<'EOF' || exit 1
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("v", (5000,), dtype=h5py.vlen_dtype(np.int32), chunks=(500,), compression="gzip")
    for i in range(5000):
        d[i] = np.arange(i % 50, dtype=np.int32)
    f["y"] = np.arange(5000)
EOF
    have_vlen=1
fi
failed=0 runs=0 ok=0 refused=0 loader=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }
declare -A verified

# limited KIB NAME OUT ARGS...: run h5shuf ARGS (output OUT, in $W/out) under ulimit -v KIB and check it.
limited() {
    local kib=$1 name=$2 out=$3 rc left
    shift 3
    rm -rf "$W/out/"* "$W/scratch/"*
    (ulimit -v "$kib" && exec "$H" -s 5 -t "$W/scratch" "$@" "$W/out/$out") >/dev/null 2>"$W/err"
    rc=$?
    runs=$((runs + 1))
    mapfile -t err <"$W/err"
    left=("$W/scratch"/*)
    if [ "$rc" != 0 ] && ! (ulimit -v "$kib" && exec "$H" --version) >/dev/null 2>&1; then
        # below the floor at which the process can start at all: exit 127 "error while loading shared
        # libraries" (HDF5 1.10.8's dependencies), 126 (exec refused) or a signal inside the dynamic
        # loader or a library's constructor (HDF5 1.14's libcurl and gnutls), before any code of h5shuf's;
        # or a constructor that fails there, says so on stderr and lets the process go on (gnutls
        # 3.7.9-2+deb12u6 of 2025-11: "Error in GnuTLS initialization", then h5shuf's own line), where
        # --version itself does not survive the limit
        loader=$((loader + 1))
        return
    fi
    if [ "$rc" = 1 ]; then
        refused=$((refused + 1))
        if [ ${#err[@]} != 1 ] || [[ ${err[0]} != "h5shuf: "* ]]; then
            fail "$name at ${kib} KiB: exit 1 with ${#err[@]} lines:"
            sed 's/^/#   /' "$W/err" | head -5
        fi
        left+=("$W/out"/*)
    elif [ "$rc" = 0 ]; then
        ok=$((ok + 1))
        [ ${#err[@]} = 0 ] || fail "$name at ${kib} KiB: exit 0 with output on stderr: ${err[0]}"
        left+=("$W/out"/.*h5shuf*)
        if [ -z "${verified[$name]:-}" ]; then
            verified[$name]=1
            local ins=()
            for a in "$@"; do [[ $a == "$W"/*.h5 ]] && ins+=("$a"); done
            if [[ $out == s.h5 ]]; then
                local shards=("$W/out"/s-*.h5)
                [ ${#shards[@]} = 4 ] || fail "$name at ${kib} KiB: ${#shards[@]} shards"
            elif [[ " $* " != *" -n "* ]]; then
                "$H" verify "${ins[@]}" "$W/out/$out" >/dev/null 2>"$W/verr" || fail "$name at ${kib} KiB: verify: $(cat "$W/verr")"
            fi
        fi
    else
        fail "$name at ${kib} KiB: exit $rc"
        sed 's/^/#   /' "$W/err" | head -5
    fi
    [ ${#left[@]} = 0 ] || fail "$name at ${kib} KiB: left ${left[*]}"
}

limits=$(seq 20000 1000 64000; seq 68000 6000 140000; seq 160000 40000 400000)
for kib in $limits; do
    limited "$kib" raw-4M-j1 o.h5 -m 4M -j 1 "$W/raw.h5"
    limited "$kib" raw-16M-j1 o.h5 -m 16M -j 1 "$W/raw.h5"
    limited "$kib" raw-1G-j2 o.h5 -m 1G -j 2 "$W/raw.h5"
    limited "$kib" gz-64M-j2 o.h5 -m 64M -j 2 "$W/gz.h5"
    limited "$kib" gz-shards s.h5 -m 1G -j 2 --shards 4 "$W/gz.h5"
    limited "$kib" wide-direct o.h5 -m 8M -j 1 --strategy direct "$W/wide.h5"
    limited "$kib" big-head o.h5 -m 16M -j 2 -n 1000 "$W/big.h5"
    [ "$have_vlen" = 1 ] && limited "$kib" vlen-8M o.h5 -m 8M -j 2 "$W/vl.h5"
done
echo "# $runs runs from 20 to 400 MB: $ok exit 0, $refused exit 1 with one line, $loader before h5shuf (the loader)"

# The message names the -m that fits, and that -m works.
rm -rf "$W/out/"*
(ulimit -v 300000 && exec "$H" -s 5 -j 2 -t "$W/scratch" "$W/big.h5" "$W/out/o.h5") >/dev/null 2>"$W/err"
rc=$?
line=$(head -1 "$W/err")
fit=$(sed -n 's/.*lower -m to at most \([0-9][0-9]*\)M.*/\1/p' "$W/err")
if [ "$rc" != 1 ] || [ "$(wc -l <"$W/err")" != 1 ] || [ -z "$fit" ]; then
    fail "default -m under ulimit -v 300M: exit $rc: $line"
else
    echo "# default -m under 300 MB: $line"
    (ulimit -v 300000 && exec "$H" -s 5 -j 2 -m "${fit}M" -t "$W/scratch" "$W/big.h5" "$W/out/o.h5") >/dev/null 2>"$W/err"
    rc=$?
    if [ "$rc" != 0 ]; then
        fail "-m ${fit}M under ulimit -v 300M: exit $rc: $(head -1 "$W/err")"
    else
        "$H" verify "$W/big.h5" "$W/out/o.h5" >/dev/null 2>"$W/verr" || fail "-m ${fit}M: verify: $(cat "$W/verr")"
    fi
fi
if [ "$failed" = 0 ]; then
    echo "ok - ulimit -v: every run exits 0 or 1 with one line, nothing left"
    exit 0
fi
echo "$failed failed"
exit 1
