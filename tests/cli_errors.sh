#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cli_errors.sh — the command-line tool's behaviour on bad input.
#
# Usage: bash tests/cli_errors.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
#
# Every error case pins the contract of include/h5shuf.h ("Conventions") and docs/design.md sections 7
# and 12 (one line naming the file and the cause; nothing left behind):
#   (a) the exit status is exactly 1 (failure) or 2 (usage error);
#   (b) stderr is one line "h5shuf: ..." naming the file (and the dataset where there is one) and the
#       cause; usage errors add exactly the line "Try 'h5shuf --help' for more information.";
#   (c) nothing is written at the output path;
#   (d) the scratch directory is left empty and no temporary file (".*h5shuf*") is left beside the output;
#   (e) the input files are byte-identical to before (md5).
# Three positive controls (--help, --version, a normal shuffle) tell a broken binary from a correct refusal.
# Each case prints "ok - ..." or "not ok - ..." (with "#" lines saying why); the last line is
# "N passed, M failed" and the exit status is 1 if any case failed.  Cases that need h5py are reported as
# skipped ("ok - ... # SKIP", not counted) when /usr/bin/python3 cannot import it.
# CLI_ERRORS_VERBOSE=1 also shows the stderr of the cases that pass, to review the messages' wording.

set -u

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
    echo "usage: bash cli_errors.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata (both executable)" >&2
    exit 1
fi
H=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GEN=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
PY=/usr/bin/python3
USAGE_HINT="Try 'h5shuf --help' for more information."

W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf_cli_errors.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

IN=$W/in      # every input file; the tool runs with this as its working directory
O=$W/out      # the output directory of the error cases
mkdir "$IN" "$O"

passed=0
failed=0

have_h5py=0
if "$PY" -c 'import h5py, numpy' 2>/dev/null; then have_h5py=1; fi

# ---------------------------------------------------------------------------------------------------------
# Helpers

# snap DIR: a listing of DIR (names, types) and the md5 of every file in it, hidden ones included.
snap() {
    (cd "$1" && find . -mindepth 1 -printf '%y %p\n' | LC_ALL=C sort &&
        find . -type f -exec md5sum {} + | LC_ALL=C sort -k2)
}

# report NAME: prints ok/not ok for NAME from the array PROBLEMS, with the stderr seen (file $W/err).
report() {
    local name=$1 p
    if [ ${#PROBLEMS[@]} -eq 0 ]; then
        echo "ok - $name"
        [ "${CLI_ERRORS_VERBOSE:-0}" = 1 ] && [ -s "$W/err" ] && sed 's/^/#   stderr| /' "$W/err"
        passed=$((passed + 1))
    else
        echo "not ok - $name"
        for p in "${PROBLEMS[@]}"; do echo "#   $p"; done
        echo "#   command: h5shuf ${CMD[*]}"
        echo "#   exit status: $RC"
        if [ -s "$W/err" ]; then sed 's/^/#   stderr| /' "$W/err"; else echo "#   stderr: (empty)"; fi
        failed=$((failed + 1))
    fi
}

skip() {
    echo "ok - $1 # SKIP /usr/bin/python3 cannot import h5py"
}

# run SCRATCH ARGS...: runs h5shuf in $IN with TMPDIR=SCRATCH and, unless NO_T=1, "-t SCRATCH" first;
# sets RC, CMD, and leaves stdout in $W/outp and stderr in $W/err.
NO_T=0
run() {
    local scratch=$1; shift
    if [ "$NO_T" = 1 ]; then CMD=("$@"); else CMD=(-t "$scratch" "$@"); fi
    (cd "$IN" && TMPDIR=$scratch timeout 120 "$H" "${CMD[@]}") >"$W/outp" 2>"$W/err" </dev/null
    RC=$?
    [ "$RC" = 124 ] && PROBLEMS+=("timed out after 120 s")
}

# leftover_temps DIR: prints the temporary files (".*h5shuf*") left in DIR.
leftover_temps() {
    [ -d "$1" ] && find "$1" -maxdepth 1 -name '.*' -name '*h5shuf*' -printf '%f\n'
}

# check_clean SCRATCH OUTDIR: scratch empty, no temporary file in OUTDIR, $IN and $O as snapshotted.
check_clean() {
    local scratch=$1 outdir=$2 left
    if [ -d "$scratch" ] && [ -n "$(ls -A "$scratch")" ]; then
        PROBLEMS+=("scratch dir not empty: $(find "$scratch" -mindepth 1 -printf '%f ')")
    fi
    for d in "$outdir" "$IN" "$O"; do
        [ "$d" = "$outdir" ] || [ "$d" != "$(cd "$outdir" 2>/dev/null && pwd)" ] || continue
        left=$(leftover_temps "$d")
        [ -n "$left" ] && PROBLEMS+=("temporary files left in $d: $(tr '\n' ' ' <<<"$left")")
    done
    if [ "$(snap "$IN")" != "$SNAP_IN" ]; then
        PROBLEMS+=("input directory changed (input modified, or a file was left beside it):")
        while IFS= read -r l; do PROBLEMS+=("  $l"); done < <(diff <(echo "$SNAP_IN") <(snap "$IN") | grep '^[<>]')
    fi
}

# expect NAME STATUS OUTPUT CAUSE_ERE NEEDLE... -- ARGS...
#   Runs h5shuf ARGS and checks (a)-(e): exit STATUS (1 or 2); stderr one line (two for STATUS 2) starting
#   "h5shuf: ", containing every NEEDLE as a fixed string and matching CAUSE_ERE (case-insensitive); nothing
#   at OUTPUT (an absolute path, or "-" for none); and $O unchanged unless OUTPUT is "-".
expect() {
    local name=$1 want=$2 out=$3 cause=$4; shift 4
    local needles=() n lines first
    while [ $# -gt 0 ] && [ "$1" != -- ]; do needles+=("$1"); shift; done
    shift
    PROBLEMS=()
    local scratch; scratch=$(mktemp -d "$W/scratch.XXXXXX")
    SNAP_IN=$(snap "$IN")
    local snap_o; snap_o=$(snap "$O")
    run "$scratch" "$@"

    [ "$RC" = "$want" ] || PROBLEMS+=("(a) exit status $RC, expected $want")

    lines=$(awk 'END { print NR }' "$W/err")
    first=$(head -n 1 "$W/err")
    local want_lines=1; [ "$want" = 2 ] && want_lines=2
    [ "$lines" = "$want_lines" ] || PROBLEMS+=("(b) stderr has $lines lines, expected $want_lines")
    if [ -s "$W/err" ] && [ "$(tail -c 1 "$W/err" | od -An -c | tr -d ' ')" != '\n' ]; then
        PROBLEMS+=("(b) stderr does not end with a newline")
    fi
    case $first in "h5shuf: "*) ;; *) PROBLEMS+=("(b) first stderr line does not start with 'h5shuf: '") ;; esac
    for n in "${needles[@]}"; do
        grep -qF -- "$n" <<<"$first" || PROBLEMS+=("(b) message does not name '$n'")
    done
    grep -qEi -- "$cause" <<<"$first" || PROBLEMS+=("(b) message does not state the cause (/$cause/)")
    if [ "$want" = 2 ] && [ "$(sed -n 2p "$W/err")" != "$USAGE_HINT" ]; then
        PROBLEMS+=("(b) second stderr line is not \"$USAGE_HINT\"")
    fi

    local outdir=$O
    if [ "$out" != - ]; then
        outdir=$(dirname "$out")
        if [ -e "$out" ] || [ -L "$out" ]; then PROBLEMS+=("(c) a file exists at the output path $out"); fi
        if [ "$(snap "$O")" != "$snap_o" ]; then
            PROBLEMS+=("(c/d) output directory $O changed:")
            while IFS= read -r l; do PROBLEMS+=("  $l"); done < <(diff <(echo "$snap_o") <(snap "$O") | grep '^[<>]')
        fi
    fi
    check_clean "$scratch" "$outdir"
    if [ -n "$ALSO" ]; then "$ALSO"; ALSO=; fi
    report "$name"
}

# ALSO=FUNCTION before expect: FUNCTION runs after the case's own checks and adds to PROBLEMS what else
# the case requires (a file left as it was, a directory not created); it applies to that case only.
ALSO=

# expect_ok NAME OUTPUT ARGS...: a run that must succeed: exit 0, stderr empty, OUTPUT an HDF5 file,
# scratch empty, no temporary files, inputs unchanged.
expect_ok() {
    local name=$1 out=$2; shift 2
    PROBLEMS=()
    local scratch; scratch=$(mktemp -d "$W/scratch.XXXXXX")
    SNAP_IN=$(snap "$IN")
    run "$scratch" "$@"
    [ "$RC" = 0 ] || PROBLEMS+=("exit status $RC, expected 0")
    [ -s "$W/err" ] && PROBLEMS+=("stderr is not empty")
    if [ ! -f "$out" ]; then
        PROBLEMS+=("no output file at $out")
    elif [ "$(head -c 8 "$out" | od -An -tx1 | tr -d ' \n')" != 894844460d0a1a0a ]; then
        PROBLEMS+=("output $out is not an HDF5 file (no signature at offset 0)")
    fi
    check_clean "$scratch" "$(dirname "$out")"
    report "$name"
}

# pyfile FILE CODE: runs CODE with h5py as h5, numpy as np and f = h5.File(FILE, "w").
pyfile() {
    "$PY" -c "import h5py as h5, numpy as np
with h5.File('$1', 'w') as f:
$2"
}

# ---------------------------------------------------------------------------------------------------------
# Input files

"$GEN" example "$IN/ex.h5" || { echo "not ok - h5shuf_gendata example failed"; echo "0 passed, 1 failed"; exit 1; }
printf 'this is a text file, not HDF5\n' >"$IN/text.h5"
mkdir "$IN/adir.h5"
if [ "$have_h5py" = 1 ]; then
    pyfile "$IN/grp.h5" "    f.create_group('g').create_dataset('x', data=np.arange(10))
    f['x'] = np.arange(10)" &&
    pyfile "$IN/vlen.h5" "    f.create_dataset('s', (10,), dtype=h5.vlen_dtype(h5.string_dtype('utf-8')))
    f.create_dataset('v', (10,), dtype=np.dtype([('a', h5.ref_dtype), ('b', h5.vlen_dtype(np.dtype('int32')))]))" &&
    pyfile "$IN/scalar.h5" "    f['s'] = np.int64(5)" &&
    pyfile "$IN/a.h5" "    f['x'] = np.arange(30, dtype=np.int32).reshape(10, 3)" &&
    pyfile "$IN/b.h5" "    f['x'] = np.arange(40, dtype=np.int32).reshape(10, 4)" &&
    pyfile "$IN/c.h5" "    f['x'] = np.arange(30, dtype=np.float32).reshape(10, 3)" &&
    pyfile "$IN/m.h5" "    f['a'] = np.arange(10); f['b'] = np.arange(11)" &&
    pyfile "$IN/amb.h5" "    f['a'] = np.arange(10); f['b'] = np.arange(20)" &&
    pyfile "$IN/meta.h5" "    f['X'] = np.zeros((1000, 4)); f['y'] = np.arange(1000)
    f['class_names'] = np.array([b'c%d' % i for i in range(10)]); f['class_weights'] = np.ones(10)
    f['class_counts'] = np.arange(10)" &&
    pyfile "$IN/split.h5" "    f['train/X'] = np.zeros((1000, 4)); f['train/y'] = np.arange(1000)
    f['test/X'] = np.zeros((200, 4)); f['test/y'] = np.arange(200)" &&
    pyfile "$IN/xonly.h5" "    f['X'] = np.zeros((1000, 4)); f['a'] = np.arange(10); f['b'] = np.arange(10)" &&
    pyfile "$IN/half.h5" "    f['a'] = np.zeros(100, 'u1'); f['b'] = np.zeros(100, 'u1'); f['big'] = np.zeros((8, 25), 'u1')" &&
    pyfile "$IN/less.h5" "    f['a'] = np.zeros(100, 'u1'); f['b'] = np.zeros(100, 'u1'); f['big'] = np.zeros((3, 67), 'u1')" &&
    pyfile "$IN/lessz.h5" "    f['a'] = np.zeros(100, 'u1'); f['b'] = np.zeros(100, 'u1')
    f.create_dataset('big', data=np.zeros((3, 67), 'u1'), compression='gzip')" ||
        { echo "not ok - making the special input files with h5py"; echo "0 passed, 1 failed"; exit 1; }
fi

# ---------------------------------------------------------------------------------------------------------
# Positive controls

PROBLEMS=(); S=$(mktemp -d "$W/scratch.XXXXXX"); run "$S" --help
[ "$RC" = 0 ] || PROBLEMS+=("exit status $RC, expected 0")
grep -q 'Usage: h5shuf' "$W/outp" || PROBLEMS+=("stdout has no 'Usage: h5shuf'")
report "control: --help exits 0 and prints the usage"

PROBLEMS=(); S=$(mktemp -d "$W/scratch.XXXXXX"); run "$S" --version
[ "$RC" = 0 ] || PROBLEMS+=("exit status $RC, expected 0")
grep -qE '^h5shuf [0-9]+\.[0-9]+\.[0-9]+.*HDF5 [0-9]+\.[0-9]+' "$W/outp" ||
    PROBLEMS+=("stdout has no line 'h5shuf X.Y.Z ... HDF5 A.B': $(head -c 200 "$W/outp")")
report "control: --version prints the version and HDF5's"

expect_ok "control: a normal shuffle of ex.h5 exits 0 with nothing on stderr" "$O/control.h5" \
    -s 1 ex.h5 "$O/control.h5"
rm -f "$O/control.h5"

# ---------------------------------------------------------------------------------------------------------
# Failures: exit 1

expect "1 missing input file" 1 "$O/o.h5" 'no such|not found|does not exist|missing' \
    nope.h5 -- nope.h5 "$O/o.h5"
expect "2 input is a text file, not HDF5" 1 "$O/o.h5" 'hdf5|format|signature' \
    text.h5 -- text.h5 "$O/o.h5"
expect "3 input is a directory" 1 "$O/o.h5" 'directory|not a (regular )?file' \
    adir.h5 -- adir.h5 "$O/o.h5"
expect "4 missing dataset ex.h5:/nope" 1 "$O/o.h5" 'no such|not found|does not exist|missing' \
    ex.h5 /nope -- ex.h5:/nope "$O/o.h5"

if [ "$have_h5py" = 1 ]; then
    expect "5 path is a group (grp.h5:/g)" 1 "$O/o.h5" 'group|not a dataset' \
        grp.h5 /g -- grp.h5:/g "$O/o.h5"
    expect "6a vlen sequence of variable-length strings (nested)" 1 "$O/o.h5" 'nested variable-length' \
        vlen.h5 /s -- vlen.h5:/s "$O/o.h5"
    expect "6b references in a compound with a variable-length member" 1 "$O/o.h5" 'references inside a compound' \
        vlen.h5 /v -- vlen.h5:/v "$O/o.h5"
    expect "6c whole-file form on a file of nested variable-length datasets" 1 "$O/o.h5" 'variable-length' \
        vlen.h5 -- vlen.h5 "$O/o.h5"
    expect "7 scalar (rank 0) dataset" 1 "$O/o.h5" 'scalar|rank|no rows|dimension' \
        scalar.h5 /s -- scalar.h5:/s "$O/o.h5"
    expect "8a inputs with different row shapes (10,3) vs (10,4)" 1 "$O/o.h5" 'shape|dimension|row' \
        b.h5 /x -- a.h5:/x b.h5:/x "$O/o.h5"
    expect "8b inputs with different types int32 vs float32" 1 "$O/o.h5" 'type' \
        c.h5 /x -- a.h5:/x c.h5:/x "$O/o.h5"
    expect "8c one file, /a (10,) and /b (11,) named together" 1 "$O/o.h5" 'rows|length|dim|differ|mismatch|same' \
        m.h5 /b -- m.h5:/a,/b "$O/o.h5"
    expect "11 whole-file form on an ambiguous file lists both candidates" 1 "$O/o.h5" \
        'cannot tell which datasets hold the rows' 'amb.h5:/b (20 rows, 160 bytes)' 'amb.h5:/a (10 rows, 80 bytes)' \
        -- amb.h5 "$O/o.h5"
    # Whole-file mode never guesses (issue 50): two lengths each held by several datasets are refused, each
    # candidate set named with its rows, bytes and the input that picks it; so are datasets sharing a
    # length that hold less than half of the bytes; verify refuses the same files the same way.
    expect "11b /X,/y (1000 rows) beside three class tables of 10 rows: both sets named" 1 "$O/o.h5" \
        'cannot tell which datasets hold the rows' 'meta.h5:/X,/y (1000 rows, 39.1 KiB)' \
        'meta.h5:/class_counts,/class_names,/class_weights (10 rows, 180 bytes)' 'give one of them as the input' \
        -- meta.h5 "$O/o.h5"
    expect "11c /train/{X,y} beside /test/{X,y}: both sets named" 1 "$O/o.h5" 'cannot tell which datasets hold' \
        'split.h5:/train/X,/train/y (1000 rows, 39.1 KiB)' 'split.h5:/test/X,/test/y (200 rows, 7.8 KiB)' \
        -- split.h5 "$O/o.h5"
    expect "11d /X alone beside two tables of 10 rows: they hold less than half of the bytes" 1 "$O/o.h5" \
        'hold less than|hold 160 bytes of the' 'the 10-row datasets hold 160 bytes of the 31.4 KiB of all datasets' \
        'xonly.h5:/X (1000 rows, 31.2 KiB)' 'xonly.h5:/a,/b (10 rows, 160 bytes)' -- xonly.h5 "$O/o.h5"
    expect "11e a byte less than half of the bytes (200 of 401) is refused" 1 "$O/o.h5" 'cannot tell' \
        'the 100-row datasets hold 200 bytes of the 401 bytes' 'less.h5:/big (3 rows, 201 bytes)' \
        'less.h5:/a,/b (100 rows, 200 bytes)' -- less.h5 "$O/o.h5"
    expect "11e2 the same with /big compressed to a few bytes: bytes are logical, not stored" 1 "$O/o.h5" 'cannot tell' \
        'the 100-row datasets hold 200 bytes of the 401 bytes' -- lessz.h5 "$O/o.h5"
    expect_ok "11f exactly half of the bytes (200 of 400) runs" "$O/half.h5" -s 1 half.h5 "$O/half.h5"
    if ! "$PY" -c "import h5py, numpy as np, sys
i, o = h5py.File('$IN/half.h5', 'r'), h5py.File('$O/half.h5', 'r')
sys.exit(not (o.attrs['h5shuf_inputs'] == 'half.h5:/a,/b' and (o['big'][...] == i['big'][...]).all()))"; then
        echo "not ok - 11f: /a,/b shuffled and /big copied"; failed=$((failed + 1))
    else echo "ok - 11f: /a,/b shuffled and /big copied"; passed=$((passed + 1)); fi
    rm -f "$O/half.h5"
    expect_ok "11g the datasets named run: meta.h5:/X,/y" "$O/meta.h5" -s 1 meta.h5:/X,/y "$O/meta.h5"
    NO_T=1 # (verify takes no -t)
    expect "11h verify follows the same rule" 1 - 'cannot tell which datasets hold the rows' 'verify: meta.h5:' \
        'meta.h5:/X,/y (1000 rows' -- verify meta.h5 "$O/meta.h5"
    PROBLEMS=(); run "$W" verify meta.h5:/X,/y "$O/meta.h5"
    [ "$RC" = 0 ] || PROBLEMS+=("exit status $RC, expected 0")
    grep -q 'a permutation of the inputs' "$W/err" || PROBLEMS+=("no verdict on stderr")
    report "11i verify of the datasets named passes"
    NO_T=0
    rm -f "$O/meta.h5"
else
    for c in "5 path is a group" "6 nested variable-length datasets" "7 scalar dataset" "8 mismatched inputs" \
        "11 ambiguous whole-file form"; do skip "$c"; done
fi

# 9: an existing output is never touched without --force; with --force it is replaced.
printf 'precious\n' >"$O/existing.h5"
existing_kept() {
    [ -f "$O/existing.h5" ] && [ "$(cat "$O/existing.h5")" = precious ] ||
        PROBLEMS+=("(c) existing.h5 was changed: now $(wc -c <"$O/existing.h5" 2>&1) bytes, not the 9 of 'precious'")
}
ALSO=existing_kept
expect "9a existing output without --force (left byte-identical)" 1 - 'exist|force' \
    existing.h5 -- ex.h5 "$O/existing.h5"
before=$(md5sum <"$O/existing.h5")
expect_ok "9b existing output with --force is replaced" "$O/existing.h5" --force -s 1 ex.h5 "$O/existing.h5"
if [ "$(md5sum <"$O/existing.h5")" = "$before" ]; then
    echo "not ok - 9c --force replaced the existing output's content"
    failed=$((failed + 1))
else
    echo "ok - 9c --force replaced the existing output's content"
    passed=$((passed + 1))
fi
rm -f "$O/existing.h5"

# 10: the output is the input file itself, however spelled.
expect "10a output is the input file" 1 "-" 'same|input|itself|overwrite' \
    ex.h5 -- ex.h5 ex.h5
expect "10b output is the input file, with --force" 1 "-" 'same|input|itself|overwrite' \
    ex.h5 -- --force ex.h5 ex.h5
expect "10c output is the input file spelled ./ex.h5, with --force" 1 "-" 'same|input|itself|overwrite' \
    ex.h5 -- --force ex.h5 ./ex.h5
expect "10d output is the input file named by a dataset spec, with --force" 1 "-" 'same|input|itself|overwrite' \
    ex.h5 -- --force ex.h5:/X ex.h5:/X2

expect "13 memory budget too small (-m 1K) says what is needed" 1 "$O/o.h5" \
    '(at least|minimum|needed|need|requires).*[0-9]' ex.h5 -- -m 1K ex.h5 "$O/o.h5"
nodir_absent() {
    [ ! -e "$W/nodir" ] || PROBLEMS+=("(c) the missing output directory $W/nodir was created")
}
ALSO=nodir_absent
expect "14 output directory does not exist (and is not created)" 1 "$W/nodir/o.h5" 'no such|not exist|directory' \
    nodir -- ex.h5 "$W/nodir/o.h5"
rm -rf "$W/nodir"

NO_T=1
expect "15 -t names a missing directory" 1 "$O/o.h5" 'no such|not exist|directory' \
    noscratch -- --strategy two-pass -t "$W/noscratch" ex.h5 "$O/o.h5"
NO_T=0
if [ -e "$W/noscratch" ]; then
    echo "not ok - 15b the missing -t directory was not created"; failed=$((failed + 1))
else
    echo "ok - 15b the missing -t directory was not created"; passed=$((passed + 1))
fi

# ---------------------------------------------------------------------------------------------------------
# Usage errors: exit 2

NO_T=1
# Damaged inputs: the message carries HDF5's own cause, not "unknown HDF5 error".
if [ "$have_h5py" = 1 ]; then
    "$PY" - "$IN" <<'PYEOF'
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/gz.h5", "w") as f:
    f.create_dataset("x", data=np.random.default_rng(0).random((20000, 8)), chunks=(1000, 8), compression="gzip")
with h5py.File(f"{d}/gz.h5", "r") as f:
    off = f["x"].id.get_chunk_info(3).byte_offset
with open(f"{d}/gz.h5", "r+b") as fp:       # bytes in the middle of a deflate stream
    fp.seek(off + 100); fp.write(b"\xde\xad\xbe\xef" * 4)
data = open(f"{d}/gz.h5", "rb").read()
open(f"{d}/trunc.h5", "wb").write(data[:30000])
PYEOF
    expect "16a corrupt deflate chunk: HDF5's cause, the dataset named" 1 "$O/o.h5" 'inflate' \
        gz.h5:/x -- gz.h5:/x "$O/o.h5:/x"
    expect "16b truncated HDF5 file: HDF5's cause" 1 "$O/o.h5" 'truncated' trunc.h5 -- trunc.h5 "$O/o.h5"
    # The layout message's chunk dim 1 (4 bytes after dim 0) made larger than the dataset's fixed dim: the
    # input's corruption, not a usage error about the output's chunk shape (was: exit 2 naming o.h5).
    "$PY" - "$IN" <<'PYEOF'
import sys, struct, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/badchunk.h5", "w") as f:
    f.create_dataset("x", data=np.arange(4000, dtype="u4").reshape(1000, 4), chunks=(100, 4))
data = bytearray(open(f"{d}/badchunk.h5", "rb").read())
at = data.index(struct.pack("<III", 100, 4, 4)) # dims (100, 4) and the element size, of the layout message
data[at + 4:at + 8] = struct.pack("<I", 8)
open(f"{d}/badchunk.h5", "wb").write(data)
PYEOF
    expect "16d corrupt chunk shape: the input named with the cause, exit 1" 1 "$O/o.h5" 'corrupt chunk shape' \
        badchunk.h5:/x -- badchunk.h5:/x "$O/o.h5"
    # Filter 511, in the range The HDF Group reserves for testing (256-511), searched for in an empty
    # plugin directory: whatever plugins this machine has (Debian's hdf5-filter-plugin provides 307,
    # bzip2, and loading its plugins leaks under LeakSanitizer), nothing can load it.
    "$PY" -c 'import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("x", data=np.arange(100), chunks=(10,), compression=511, allow_unknown_filter=True)' "$IN/nofilter.h5"
    mkdir "$W/noplugins"
    export HDF5_PLUGIN_PATH=$W/noplugins
    expect "16c a filter that cannot be loaded: named, with the input" 1 "$O/o.h5" 'filter 511.*cannot be loaded' \
        nofilter.h5:/x -- nofilter.h5:/x "$O/o.h5"
    unset HDF5_PLUGIN_PATH
    "$PY" - "$IN" <<'PYEOF'
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/other.h5", "w") as f:
    f["x"] = np.arange(12)
with h5py.File(f"{d}/links.h5", "w") as f:
    f["x"] = np.arange(10)
    f["soft"] = h5py.SoftLink("/x")
    f["ext"] = h5py.ExternalLink("other.h5", "/x")
    f["dangling"] = h5py.SoftLink("/nowhere")
    f["edangling"] = h5py.ExternalLink("nofile.h5", "/x")
    f.create_dataset("zero", shape=(10, 0), dtype="i4")
    f.create_dataset("refs", data=np.array([f["x"].ref] * 3, dtype=h5py.ref_dtype))
PYEOF
    expect "18a a dangling soft link" 1 "$O/o.h5" 'dangling|resolve|no such' links.h5 /dangling -- links.h5:/dangling "$O/o.h5"
    expect "18b a dangling external link" 1 "$O/o.h5" 'dangling|resolve|no such' links.h5 /edangling \
        -- links.h5:/edangling "$O/o.h5"
    expect "18c rows of zero bytes (shape (10, 0))" 1 "$O/o.h5" 'empty|0' links.h5 /zero -- links.h5:/zero "$O/o.h5"
    expect "18d a dataset of references to an object not in the output" 1 "$O/o.h5" 'refers to /x, which is not in the output' \
        links.h5 /refs -- links.h5:/refs "$O/o.h5"
    for l in soft ext; do # links to real datasets simply work
        if (cd "$IN" && "$H" -q -t "$W" -s 1 "links.h5:/$l" "$O/$l.h5:/y") && [ -f "$O/$l.h5" ]; then
            echo "ok - 18e a $l link to a dataset is followed"; passed=$((passed + 1))
        else
            echo "not ok - 18e a $l link to a dataset is followed"; failed=$((failed + 1))
        fi
        rm -f "$O/$l.h5"
    done
else
    skip "16 damaged inputs"
fi

mkfifo "$O/fifo.h5"
fifo_kept() {
    [ -p "$O/fifo.h5" ] || PROBLEMS+=("(c) the FIFO was replaced or removed: $(ls -ld "$O/fifo.h5" 2>&1)")
}
ALSO=fifo_kept
expect "17 a FIFO at the output path is not replaced, even with --force" 1 "-" 'not a regular file' \
    fifo.h5 -- -f ex.h5 "$O/fifo.h5"
rm -f "$O/fifo.h5"

expect "12a no arguments at all" 2 "-" 'missing|input|output|argument' --
NO_T=0
expect "12b only -t, no INPUT or OUTPUT" 2 "-" 'missing|input|output|argument' --
expect "12c one argument only" 2 "$O/o.h5" 'missing|output|argument' -- ex.h5
expect "12d unknown long option" 2 "$O/o.h5" 'unknown|unrecognized|invalid' --bogus -- --bogus ex.h5 "$O/o.h5"
expect "12e unknown short option" 2 "$O/o.h5" 'unknown|unrecognized|invalid' Z -- -Z ex.h5 "$O/o.h5"
expect "12f -m 12Q" 2 "$O/o.h5" 'invalid|bad|suffix|unit' 12Q -- -m 12Q ex.h5 "$O/o.h5"
expect "12g -m -5" 2 "$O/o.h5" 'invalid|negative|bad' -5 -- -m -5 ex.h5 "$O/o.h5"
expect "12h -m 99999999999T (overflow)" 2 "$O/o.h5" 'invalid|overflow|too (large|big)|range' \
    99999999999T -- -m 99999999999T ex.h5 "$O/o.h5"
expect "12i -m with no value" 2 "$O/o.h5" 'requires|needs|missing|argument|value' -m -- ex.h5 "$O/o.h5" -m
expect "12j -s abc" 2 "$O/o.h5" 'invalid|seed|bad' abc -- -s abc ex.h5 "$O/o.h5"
expect "12k -s 99999999999999999999999 (over 64 bits)" 2 "$O/o.h5" 'invalid|overflow|too (large|big)|range' \
    99999999999999999999999 -- -s 99999999999999999999999 ex.h5 "$O/o.h5"
expect "12l --on-oversize maybe" 2 "$O/o.h5" 'invalid|recurse|restart|mode|unknown' maybe -- \
    --on-oversize maybe ex.h5 "$O/o.h5"
expect "12m input spec with an empty path list 'ex.h5:'" 2 "$O/o.h5" 'empty|path|missing' ex.h5 -- \
    ex.h5: "$O/o.h5"
expect "12n input spec with a trailing comma 'ex.h5:/X,'" 2 "$O/o.h5" 'empty|path|missing' ex.h5 -- \
    ex.h5:/X, "$O/o.h5"
expect "12o input spec with an empty path between commas 'ex.h5:/X,,/y'" 2 "$O/o.h5" 'empty|path|missing' \
    ex.h5 -- ex.h5:/X,,/y "$O/o.h5"
expect "12p output spec with an empty path list 'o.h5:'" 2 "$O/o.h5" 'empty|path|missing' o.h5 -- \
    ex.h5:/X "$O/o.h5:"
NO_T=1
expect "12s verify with a malformed spec is a usage error" 2 "-" 'empty' ex.h5 -- verify ex.h5: "$O/o.h5"
# verify of a set: a file missing, and root attributes that are not h5shuf's (read after their shape and
# type are checked: never into a buffer of another size)
"$H" -q -s 3 --shards 3 "$IN/ex.h5" "$O/vs.h5" && rm -f "$O/vs-00001-of-00003.h5"
expect "12t verify of a shard set with a shard missing" 1 "-" 'missing' 'shard 1 of 3' vs-00001-of-00003.h5 -- \
    verify ex.h5 "$O/vs-00000-of-00003.h5"
if [ "$have_h5py" = 1 ]; then
    "$H" -q -f -s 3 -n 100 "$IN/ex.h5" "$O/vh.h5"
    for bad in "row_range np.arange(3, dtype='u8')" "row_range 'nine'" "seed np.arange(4, dtype='u8')" \
               "output_rows np.array([1.5])" "inputs np.array([b'a', b'b'])"; do
        cp "$O/vh.h5" "$O/vbad.h5"
        "$PY" -c "import h5py, numpy as np
with h5py.File('$O/vbad.h5', 'r+') as f:
    f.attrs['h5shuf_${bad%% *}'] = ${bad#* }"
        expect "12u verify of a head whose h5shuf_${bad%% *} is ${bad#* }" 1 "-" 'not as h5shuf writes it' \
            "h5shuf_${bad%% *}" -- verify ex.h5 "$O/vbad.h5"
    done
fi
NO_T=0
expect "12q an empty --tmpdir" 2 "$O/o.h5" 'empty|tmpdir' tmpdir -- -t "" ex.h5 "$O/o.h5"
expect "12r unknown short option bundled after a good one (-fz)" 2 "$O/o.h5" 'unknown' "'-z'" -- -fz ex.h5 "$O/o.h5"

# Shards, splits, heads (several outputs: all or nothing).
expect "20a --split without '='" 2 "$O/o-train.h5" 'expected NAME=FRACTION' train -- --split train ex.h5 "$O/o.h5"
expect "20b --split with a fraction that is not a number" 2 "$O/o-train.h5" 'expected NAME=FRACTION' train=abc -- \
    --split train=abc,val=0.1 ex.h5 "$O/o.h5"
expect "20c --split fractions not summing to 1" 2 "$O/o-a.h5" 'sum to 0\.9, not 1' -- --split a=0.5,b=0.4 ex.h5 "$O/o.h5"
expect "20d --split with a name given twice" 2 "$O/o-a.h5" 'twice' "'a'" -- --split a=0.5,a=0.5 ex.h5 "$O/o.h5"
expect "20e --split with a zero fraction" 2 "$O/o-a.h5" 'above 0' -- --split a=0,b=1 ex.h5 "$O/o.h5"
expect "20f --split with a name holding '/'" 2 "$O/o-a.h5" 'letters, digits' -- --split a/b=1 ex.h5 "$O/o.h5"
expect "20f2 --split with a fraction of 19 significant digits" 2 "$O/o-a.h5" 'too many digits' "'a'" -- \
    --split a=0.1234567890123456789,b=0.8765432109876543211 ex.h5 "$O/o.h5"
expect "20f3 --split whose denominators' common multiple passes 10^18" 2 "$O/o-a.h5" 'least common multiple' -- \
    --split a=1/999999999999999989,b=1/2 ex.h5 "$O/o.h5"
expect "20g --shards 0" 2 "$O/o-00000-of-00000.h5" 'invalid --shards' "'0'" -- --shards 0 ex.h5 "$O/o.h5"
expect "20h --shards abc" 2 "$O/o.h5" 'invalid --shards' -- --shards abc ex.h5 "$O/o.h5"
expect "20i --shards with --split" 2 "$O/o-00000-of-00002.h5" 'cannot be combined' -- --shards 2 --split a=1 \
    ex.h5 "$O/o.h5"
expect "20j --check with --shards" 2 "$O/o-00000-of-00002.h5" '--check.*--shards' -- --check --shards 2 ex.h5 "$O/o.h5"
expect "20k --head -1" 2 "$O/o.h5" 'invalid --head' -- -n -1 ex.h5 "$O/o.h5"
expect "20l --source-index not starting with '/'" 2 "$O/o.h5" 'must start with' src -- --source-index src ex.h5 "$O/o.h5"
expect "20m --index and --source-index on one path" 2 "$O/o.h5" 'same dataset' /i -- --index /i --source-index /i \
    ex.h5 "$O/o.h5"
: >"$O/sh-00001-of-00002.h5"
expect "20n one shard file exists: refused, no shard written, the file kept" 1 "$O/sh-00000-of-00002.h5" \
    'exists.*--force' "sh-00001-of-00002.h5" -- --shards 2 ex.h5 "$O/sh.h5"
rm -f "$O/sh-00001-of-00002.h5"
mkdir "$O/d00000"
expect "20o a shard that cannot be created: no shard remains" 1 "$O/d00000/o.h5" 'cannot create' "d00001" -- \
    --shards 2 ex.h5 "$O/d{shard}/o.h5"
rmdir "$O/d00000"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
