#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# zstd_tools.sh - h5shuf's Zstandard output and the plugin, checked with other HDF5 programs:
#   h5dump and h5py (through HDF5_PLUGIN_PATH = the built plugin) read what h5shuf writes, and h5shuf
#   (no environment: the filter is registered in-process) reads what h5repack writes through the
#   plugin; h5repack's option spellings (-f SHUF -f GZIP=4, -f UD=32015,0,1,3, -l CHUNK=) give the
#   filters h5dump -p -H reports.
# Usage: bash tests/zstd_tools.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata PLUGIN_DIR
set -u
H=$1 GEN=$2 PLUGINS=$3
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-zstd.XXXXXX")
trap 'rm -rf "$W"' EXIT
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
bad() { echo "not ok - $1"; [ -n "${2:-}" ] && sed 's/^/#   /' <<<"$2"; failed=$((failed + 1)); }
check() { # NAME COMMAND...: ok when the command succeeds
    local name=$1 out; shift
    if out=$("$@" 2>&1); then ok "$name"; else bad "$name" "$out"; fi
}

"$GEN" example "$W/ex.h5" || { echo "generator failed"; exit 1; }
check "shuffle to zstd:3+shuffle" "$H" -q -s 5 -c zstd:3+shuffle "$W/ex.h5" "$W/z.h5"
check "shuffle keeping gzip (same seed)" "$H" -q -s 5 "$W/ex.h5" "$W/g.h5"

hdr=$(HDF5_PLUGIN_PATH=$PLUGINS h5dump -p -H -d /X "$W/z.h5" 2>&1)
if grep -q "FILTER_ID 32015" <<<"$hdr" && grep -q "PARAMS { 3 }" <<<"$hdr" && grep -q "PREPROCESSING SHUFFLE" <<<"$hdr"
then ok "h5dump -p -H: SHUFFLE then filter 32015 with level 3"; else bad "h5dump -p -H filters" "$hdr"; fi

# h5dump decodes every chunk through the plugin: its text dump must equal the gzip output's.
a=$(HDF5_PLUGIN_PATH=$PLUGINS h5dump -d /X -y -w 0 "$W/z.h5" 2>&1 | grep -v '^HDF5 "')
b=$(h5dump -d /X -y -w 0 "$W/g.h5" 2>&1 | grep -v '^HDF5 "')
if [ -n "$a" ] && [ "$a" = "$b" ] && ! grep -qi error <<<"$a"
then ok "h5dump reads the zstd data, equal to the gzip output's"; else bad "h5dump zstd data" "$(head -5 <<<"$a")"; fi

out=$(HDF5_PLUGIN_PATH=$PLUGINS "$PY" - "$W/z.h5" "$W/g.h5" <<'PY' 2>&1
import sys, h5py, numpy as np
z, g = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
for name in ('X', 'y', 'ids'):
    assert z[name].dtype == g[name].dtype and np.array_equal(z[name][...], g[name][...]), name
assert '32015' in z['X']._filters and z['X']._filters['32015'][0] == 3, z['X']._filters
assert sorted(z['ids'][...]) == list(range(1000))
print("h5py ok")
PY
)
if [ "$out" = "h5py ok" ]; then ok "h5py reads the zstd output (a permutation, equal to gzip's)"; else bad "h5py" "$out"; fi

# Another writer of 32015: h5repack through the plugin; then h5shuf reads it with no environment.
if HDF5_PLUGIN_PATH=$PLUGINS h5repack -f UD=32015,0,1,5 "$W/ex.h5" "$W/rz.h5" 2>"$W/err"; then
    grep -q "FILTER_ID 32015" <(HDF5_PLUGIN_PATH=$PLUGINS h5dump -p -H -d /X "$W/rz.h5") \
        && ok "h5repack writes filter 32015 through the plugin" || bad "h5repack output has no 32015"
    check "h5shuf reads h5repack's zstd file without HDF5_PLUGIN_PATH" env -u HDF5_PLUGIN_PATH "$H" -q -s 5 "$W/rz.h5" "$W/rzout.h5"
    for d in /X /y /ids; do
        check "same $d from the zstd copy as from the original" env HDF5_PLUGIN_PATH=$PLUGINS h5diff "$W/g.h5" "$W/rzout.h5" $d $d
    done
else
    bad "h5repack -f UD=32015 with the plugin" "$(cat "$W/err")"
fi

# h5repack's spellings
check "-f SHUF -f GZIP=2 -l CHUNK=" "$H" -q -s 5 -f SHUF -f GZIP=2 -l CHUNK=50x8x8x3 "$W/ex.h5:/X" "$W/r1.h5"
hdr=$(h5dump -p -H "$W/r1.h5")
grep -q "CHUNKED ( 50, 8, 8, 3 )" <<<"$hdr" && grep -q "PREPROCESSING SHUFFLE" <<<"$hdr" && grep -q "LEVEL 2" <<<"$hdr" \
    && ok "h5dump shows chunk 50x8x8x3, shuffle, deflate 2" || bad "h5repack spellings" "$hdr"
check "-f UD=32015,0,1,7" "$H" -q -s 5 -f UD=32015,0,1,7 "$W/ex.h5:/y" "$W/r2.h5"
grep -q "PARAMS { 7 }" <(HDF5_PLUGIN_PATH=$PLUGINS h5dump -p -H "$W/r2.h5") && ok "UD=32015 gives zstd level 7" \
    || bad "UD=32015 level"
check "-f is still --force without a filter word" "$H" -q -f -s 5 "$W/ex.h5" "$W/g.h5"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
