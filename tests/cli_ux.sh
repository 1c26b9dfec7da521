#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cli_ux.sh - the tool's behaviour on long jobs: the progress bar only on a terminal (checked under a
# pseudo-terminal made by script(1)), plain stderr otherwise, --json that parses, --plan and the refusal
# to start when the scratch does not fit (a 2 MiB tmpfs, skipped where mounting is not allowed), and
# verify catching an altered row, a duplicated row and misaligned datasets (the first dataset or another).
# Usage: bash tests/cli_ux.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
H=$1 GEN=$2 PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-ux.XXXXXX")
cleanup() { mountpoint -q "$W/tiny" 2>/dev/null && umount "$W/tiny"; rm -rf "$W"; }
trap cleanup EXIT
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
bad() { echo "not ok - $1"; [ -n "${2:-}" ] && sed 's/^/#   /' <<<"$2" | head -20; failed=$((failed + 1)); }
has_ctl() { LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; } # any control character but \t and \n

"$GEN" example "$W/ex.h5" || exit 1
# ~24 MB of rows so that both passes report several times
"$GEN" floats "$W/f.h5" 100000 64 1 || exit 1

# --- progress ------------------------------------------------------------------------------------------
if command -v script >/dev/null; then
    script -qfec "'$H' -f -s 1 -m 8M '$W/f.h5' '$W/p.h5'" /dev/null >"$W/tty.txt" 2>&1
    if grep -q $'\r' "$W/tty.txt" && grep -q "MB/s" "$W/tty.txt" && grep -q "ETA" "$W/tty.txt" && grep -q "scatter" "$W/tty.txt" \
        && grep -q "gather" "$W/tty.txt" && grep -q $'\033\\[K' "$W/tty.txt"; then
        ok "a terminal gets a live bar: pass, MB/s, ETA, redrawn in place"
    else bad "bar under a pseudo-terminal" "$(cat -v "$W/tty.txt")"; fi
    grep -q "h5shuf: gather: 100000 rows" "$W/tty.txt" && ok "a summary line per pass" || bad "summary line" "$(cat -v "$W/tty.txt")"
else
    echo "ok - progress under a terminal # SKIP script(1) not installed"
fi
"$H" -f -s 1 -m 8M "$W/f.h5" "$W/p.h5" 2>"$W/err.txt"
if [ ! -s "$W/err.txt" ]; then ok "stderr not a terminal: nothing printed"; else bad "non-terminal stderr" "$(cat -v "$W/err.txt")"; fi
"$H" -f -v -s 1 -m 8M "$W/f.h5" "$W/p.h5" 2>"$W/err.txt"
if ! has_ctl "$W/err.txt" && grep -q "h5shuf: scatter:" "$W/err.txt"; then ok "-v to a file: plain text, no control characters"
else bad "-v to a file" "$(cat -v "$W/err.txt")"; fi
"$H" -f -s 1 --progress=always "$W/ex.h5" "$W/p.h5" 2>"$W/err.txt"
grep -q $'\r' "$W/err.txt" && ok "--progress=always draws even into a file" || bad "--progress=always" "$(cat -v "$W/err.txt")"
script -qfec "'$H' -q -f -s 1 '$W/ex.h5' '$W/p.h5'" /dev/null >"$W/tty.txt" 2>&1
[ ! -s "$W/tty.txt" ] && ok "-q on a terminal: silent" || bad "-q on a terminal" "$(cat -v "$W/tty.txt")"

# --- --json --------------------------------------------------------------------------------------------
if "$H" -f -s 1 --json -m 8M "$W/f.h5" "$W/p.h5" >"$W/r.json" 2>"$W/err.txt" && "$PY" - "$W/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["seed"] == 1 and r["plan"]["rows"] == 100000, r
names = [p["name"] for p in r["passes"]]
assert names[0] == "scatter" and names[-1] == "gather", names
assert all(p["rows"] == 100000 and p["seconds"] >= 0 for p in r["passes"]), r["passes"]
assert r["peak_rss_bytes"] > 0 and r["scratch_bytes"] > 0 and r["seconds"] > 0
PY
then ok "--json: a report that parses, with plan, passes, memory"; else bad "--json" "$(cat "$W/r.json" "$W/err.txt")"; fi
"$H" --plan --json "$W/ex.h5" "$W/p2.h5" | "$PY" -m json.tool >/dev/null && [ ! -e "$W/p2.h5" ] \
    && ok "--plan --json parses, writes nothing" || bad "--plan --json"
"$H" --json "$W/missing.h5" "$W/p3.h5" >"$W/e.json" 2>/dev/null
"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"]!="ok" and "missing.h5" in r["error"]' "$W/e.json" \
    && ok "--json on failure: status and error" || bad "--json on failure" "$(cat "$W/e.json")"

# --- --plan and the free-space check -------------------------------------------------------------------
out=$("$H" --plan -m 8M "$W/f.h5" "$W/p4.h5")
if grep -q "piles" <<<"$out" && grep -q "scratch about" <<<"$out" && grep -q "free" <<<"$out" && [ ! -e "$W/p4.h5" ]
then ok "--plan: piles, scratch estimate, free space; writes nothing"; else bad "--plan" "$out"; fi
# --plan without -s: the seed it drew is not the run's; it says so, and which -s runs this plan (a head's
# rows depend on the seed: the plan with that -s is the same plan, seed line and free space aside)
said='(drawn for this plan: a run without -s draws another; -s \1 runs this plan)'
s=$(sed -n "s/^h5shuf: seed \([0-9]*\) $said\$/\1/p" <<<"$out")
again=$("$H" --plan -m 8M -s "${s:-0}" "$W/f.h5" "$W/p4.h5")
if [ -n "$s" ] && [ "$(head -n 1 <<<"$again")" = "h5shuf: seed $s" ] &&
    [ "$(tail -n +2 <<<"$again" | grep -v free)" = "$(tail -n +2 <<<"$out" | grep -v free)" ]
then ok "--plan without -s says the seed is drawn for the plan and gives the -s that runs it"
else bad "--plan without -s and its seed" "$out"; fi
# pass 2's cap on a pile's memory (plan.h H5SHUF_PASS2_BYTES_MAX) is said when it makes more piles than the
# budget alone would: 1 GiB of rows (h5py, chunks never written: --plan reads no row) at -m 1G, not at 200M
"$PY" -c 'import h5py, sys; h5py.File(sys.argv[1], "w").create_dataset("x", (1 << 20, 256), "f4", chunks=(1024, 256))' "$W/big.h5"
out=$("$H" --plan -m 1G "$W/big.h5" "$W/p6.h5")
piles=$(sed -n 's/^h5shuf: piles \([0-9]*\),.*/\1/p' <<<"$out")
said=$(sed -n 's/.*piles of at most 256 MiB in pass 2 (larger ones are no faster): \([0-9]*\) piles, not the \([0-9]*\) the budget would hold$/\1 \2/p' <<<"$out")
if [ -n "$piles" ] && [ "${said% *}" = "$piles" ] && [ "${said#* }" -lt "$piles" ] 2>/dev/null && [ ! -e "$W/p6.h5" ]
then ok "--plan says when pass 2's cap made the piles smaller ($said)"; else bad "--plan and the pile cap" "$out"; fi
out=$("$H" --plan -m 200M "$W/big.h5" "$W/p6.h5")
if grep -q "^h5shuf: piles" <<<"$out" && ! grep -q "at most 256 MiB" <<<"$out"
then ok "--plan under the cap says nothing of it"; else bad "--plan under the cap" "$out"; fi
mkdir "$W/tiny"
if mount -t tmpfs -o size=2m tmpfs "$W/tiny" 2>/dev/null; then
    out=$("$H" --plan --strategy two-pass --scratch-compression none -t "$W/tiny" "$W/f.h5" "$W/p5.h5")
    grep -q "scratch about 2[0-9].* MiB, [0-9.]* MiB free" <<<"$out" && ok "--plan shows the scratch larger than the free space" \
        || bad "--plan on a small tmpdir" "$out"
    "$H" --strategy two-pass --scratch-compression none -t "$W/tiny" "$W/f.h5" "$W/p5.h5" 2>"$W/err.txt"
    rc=$?
    if [ $rc = 1 ] && grep -q "not enough free space" "$W/err.txt" && grep -q "$W/tiny" "$W/err.txt" \
        && [ "$(wc -l <"$W/err.txt")" = 1 ] && [ ! -e "$W/p5.h5" ] && [ -z "$(ls -A "$W/tiny")" ]; then
        ok "a run that would not fit refuses to start, leaves nothing"
    else bad "refusal on a small tmpdir (rc $rc)" "$(cat "$W/err.txt"; ls -A "$W/tiny")"; fi
    umount "$W/tiny"
else
    echo "ok - free-space refusal on a tiny tmpfs # SKIP cannot mount here"
fi

# --- verify --------------------------------------------------------------------------------------------
"$H" -f -s 3 "$W/ex.h5" "$W/good.h5"
"$H" verify -q "$W/ex.h5" "$W/good.h5" && ok "verify accepts a real shuffle" || bad "verify on a good output"
"$H" -f -s 3 --check "$W/ex.h5" "$W/good2.h5" 2>/dev/null && ok "--check passes on a good run" || bad "--check"
# The first shuffled dataset (the order verify hashes a row's tuple in), from the plan's "datasets:" line.
first=$("$H" -v --plan "$W/ex.h5" "$W/plan-only.h5" 2>&1 | sed -n 's/^h5shuf: datasets: \([^ ]*\).*/\1/p')
[ -n "$first" ] || bad "the plan names the datasets" "$("$H" -v --plan "$W/ex.h5" "$W/plan-only.h5" 2>&1)"
"$PY" - "$W" "${first:-/X}" <<'PY'
import h5py, shutil, sys, numpy as np
w, first = sys.argv[1], sys.argv[2]
def variant(name, fn):
    shutil.copy(f"{w}/good.h5", f"{w}/{name}.h5")
    with h5py.File(f"{w}/{name}.h5", "r+") as f:
        fn(f)
def alter(f):
    x = f["X"][5]; x[0, 0, 0] ^= 1; f["X"][5] = x
def duplicate(f):
    f["X"][7] = f["X"][8]; f["y"][7] = f["y"][8]; f["ids"][7] = f["ids"][8]
def misalign(f):
    y = f["y"][...]; y[[3, 4]] = y[[4, 3]]; f["y"][...] = y
    if y[3] == y[4]:  # labels equal: swap ids instead, which are unique
        i = f["ids"][...]; i[[3, 4]] = i[[4, 3]]; f["ids"][...] = i
def misalign_first(f):  # only the first dataset's rows move: its row tuples change, the others' do not
    a = f[first][...]
    j = next(j for j in range(4, len(a)) if not (a[3] == a[j]).all())
    a[[3, j]] = a[[j, 3]]; f[first][...] = a
variant("altered", alter); variant("duplicated", duplicate); variant("misaligned", misalign)
variant("misaligned_first", misalign_first)
PY
for v in altered duplicated misaligned misaligned_first; do
    "$H" verify "$W/ex.h5" "$W/$v.h5" 2>"$W/err.txt"
    rc=$?
    want="rows differ"; [ "${v%_first}" = misaligned ] && want="misaligned"
    what="a $v row"; [ $v = misaligned_first ] && what="rows of the first dataset ($first) swapped"
    if [ $rc = 1 ] && grep -q "$want" "$W/err.txt" && [ "$(wc -l <"$W/err.txt")" = 1 ]; then ok "verify catches $what ($want)"
    else bad "verify on $v (rc $rc)" "$(cat "$W/err.txt")"; fi
done

# --- --index and the exact order -----------------------------------------------------------------------
"$H" -f -s 11 -m 5M --index /meta/index "$W/ex.h5" "$W/ix.h5"
if "$PY" - "$W/ex.h5" "$W/ix.h5" <<'PY'
import sys, h5py, numpy as np
from numpy.random import Philox
i, o = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
n = i["X"].shape[0]
order = np.lexsort((np.arange(n), Philox(key=11, counter=2**256 - 1).random_raw(4 * n)[::4]))
idx = o["meta/index"][...]
assert o.attrs["h5shuf_index"] == "/meta/index" and idx.dtype == np.uint64
assert (idx == order).all() and (o["X"][...] == i["X"][...][idx]).all() and (o["y"][...] == i["y"][...][idx]).all()
PY
then ok "--index: index[r] is the input row of output row r, the seed's order"; else bad "--index"; fi
"$H" verify -q "$W/ex.h5" "$W/ix.h5" && ok "verify with an index accepts the seed's order" || bad "verify with index"
"$PY" - "$W" <<'PY'
import h5py, shutil, sys
w = sys.argv[1]
shutil.copy(f"{w}/ix.h5", f"{w}/reordered.h5")   # two whole rows swapped, index too: a valid permutation
with h5py.File(f"{w}/reordered.h5", "r+") as f:
    for name in ("X", "y", "ids", "meta/index"):
        a = f[name][...]; a[[10, 20]] = a[[20, 10]]; f[name][...] = a
shutil.copy(f"{w}/ix.h5", f"{w}/unindexed.h5")   # rows swapped, index left: rows no longer match it
with h5py.File(f"{w}/unindexed.h5", "r+") as f:
    for name in ("X", "y", "ids"):
        a = f[name][...]; a[[10, 20]] = a[[20, 10]]; f[name][...] = a
PY
for v in reordered:"order differs" unindexed:"do not match their index"; do
    "$H" verify "$W/ex.h5" "$W/${v%%:*}.h5" 2>"$W/err.txt"
    rc=$?
    if [ $rc = 1 ] && grep -q "${v#*:}" "$W/err.txt"; then ok "verify with an index catches ${v%%:*} rows (${v#*:})"
    else bad "verify on ${v%%:*} (rc $rc)" "$(cat "$W/err.txt")"; fi
done

# --- whole-file mode: a clear choice runs silently (issue 50) -------------------------------------------
# A file shaped as train_catvnoncat.h5 (/train_set_x, /train_set_y of 209 rows, /list_classes of 2): the
# 209-row datasets are shuffled, the classes copied, and a run without -v prints nothing.
"$PY" -c 'import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f["list_classes"] = np.array([b"non-cat", b"cat"])
    f["train_set_x"] = np.random.default_rng(1).integers(0, 255, (209, 64, 64, 3), dtype=np.uint8)
    f["train_set_y"] = np.arange(209) % 2' "$W/cat.h5"
"$H" -f -s 1 "$W/cat.h5" "$W/cat-out.h5" >"$W/out.txt" 2>"$W/err.txt"
rc=$?
if [ $rc = 0 ] && [ ! -s "$W/err.txt" ] && [ ! -s "$W/out.txt" ] && "$PY" -c 'import sys, h5py, numpy as np
i, o = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
ok = o.attrs["h5shuf_inputs"].endswith("cat.h5:/train_set_x,/train_set_y")
ok &= (o["list_classes"][...] == i["list_classes"][...]).all() and not (o["train_set_y"][...] == i["train_set_y"][...]).all()
sys.exit(not ok)' "$W/cat.h5" "$W/cat-out.h5"; then
    ok "whole-file mode on a training file with a class list: X and y shuffled, the list copied, nothing printed"
else bad "whole-file mode on the cat-like file (rc $rc)" "$(cat "$W/err.txt" "$W/out.txt")"; fi

# --- options before the subcommand ---------------------------------------------------------------------
# "h5shuf -q scatter ..." is a scatter (not a shuffle of a file named "scatter"), the same as
# "h5shuf scatter -q ...", and a gather of either pile file writes the same bytes.
rm -f "$W/p1.h5" "$W/p2.h5" "$W/g1.h5" "$W/g2.h5"
"$H" -q -s 3 --index /idx scatter "$W/ex.h5" "$W/p1.h5" 2>"$W/err.txt" &&
    "$H" scatter -q -s 3 --index /idx "$W/ex.h5" "$W/p2.h5" 2>>"$W/err.txt" &&
    "$H" -q gather "$W/p1.h5" "$W/g1.h5" 2>>"$W/err.txt" && "$H" gather -q "$W/p2.h5" "$W/g2.h5" 2>>"$W/err.txt"
if [ -f "$W/g1.h5" ] && cmp -s "$W/g1.h5" "$W/g2.h5" && [ ! -e scatter ] && [ ! -s "$W/err.txt" ]; then
    ok "options before scatter and gather work as after them"
else bad "options before the subcommand" "$(cat "$W/err.txt")"; fi
"$H" -q verify "$W/ex.h5" "$W/g1.h5" >"$W/out.txt" 2>&1
rc=$?
[ $rc = 0 ] && [ ! -s "$W/out.txt" ] && ok "-q before verify: silent success" || bad "-q verify (rc $rc)" "$(cat "$W/out.txt")"
"$H" -s 3 verify "$W/ex.h5" "$W/g1.h5" 2>"$W/err.txt"
rc=$?
[ $rc = 2 ] && grep -q -- "--seed" "$W/err.txt" && ok "an option verify does not take is a usage error naming it" ||
    bad "-s before verify (rc $rc)" "$(cat "$W/err.txt")"

# The same input file twice (the same name, another name, a hard link: st_dev and st_ino): one warning
# naming both, the run goes on (exit 0); the same file with other datasets: no warning.
mkdir "$W/same"
"$PY" -c 'import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f["x"] = np.arange(100); f["y"] = np.arange(100) * 2' "$W/same/a.h5"
ln "$W/same/a.h5" "$W/same/hard.h5"
same_case() { # NAME WANT_WARNING INPUT...
    local name=$1 want=$2
    shift 2
    rm -f "$W/same/o.h5"
    "$H" -q -s 1 "$@" "$W/same/o.h5" 2>"$W/err.txt"
    local rc=$? n; n=$(grep -c '^h5shuf: warning: .*same file.*shuffled in twice' "$W/err.txt")
    if [ $rc = 0 ] && [ "$n" = "$want" ] && [ "$(wc -l <"$W/err.txt")" = "$want" ] && [ -f "$W/same/o.h5" ]; then
        ok "$name: exit 0, $want warning line(s) $(cat "$W/err.txt")"
    else
        bad "$name: exit $rc, $n warning(s), want $want" "$(cat "$W/err.txt")"
    fi
}
same_case "the same input twice" 1 "$W/same/a.h5" "$W/same/a.h5"
same_case "the same input under another name" 1 "$W/same/a.h5:/x" "$W/same/../same/a.h5:/x"
same_case "the same input through a hard link" 1 "$W/same/a.h5" "$W/same/hard.h5"
same_case "the same file, other datasets" 0 "$W/same/a.h5:/x" "$W/same/a.h5:/y"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
