#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi.sh - h5shuf-mpi against h5shuf: for P = 1, 2, 3, 4 processes, each with its own scratch directory
# (--tmpdir DIR/r%r), every output is the serial run's: shards md5-identical, a single output with the
# same objects, attributes, data and stored chunks byte for byte (tests/h5same.py, h5py only), over two
# inputs, whole-file mode with dimension scales, a contiguous dataset, forced oversize recursion and
# restarts, splits, a head and the index datasets, the direct path (1 MiB records chosen by the plan,
# and asked for with several windows of keys), and variable-length rows (token sequences with a label
# and a text column: shards, the single output md5-identical, splits with a head, recursion, the direct
# path, and a run over TCP only).  Every run leaves its scratch directories empty and no
# temporary file beside the outputs.  Each row crosses the network once: at P = 2, 4, 8 (rows of 264 bytes
# and token sequences, 16 shards and the single output, piles cut by several ranges) pass 2 sends at most
# (P-1)/P + 0.05 of the rows' bytes (of the scratch's, when it sends the stored chunks of a compressed
# one).  Then failures: a corrupt chunk in one process's share of the rows, and SIGTERM or SIGHUP to one
# process mid-run: a nonzero status within seconds, one line naming the rank and the cause, nothing at the
# output's name and nothing in any scratch directory; SIGTERM to every process while all wait in MPI (one
# blocked on purpose: H5SHUF_DEBUG_STALL_RANK): all exit within 1 s, leaving only the resume state, which
# --resume takes up to the uninterrupted run's shards.
# Usage: bash tests/mpi.sh PATH/TO/h5shuf PATH/TO/h5shuf-mpi   (H5SHUF_MPI_PROCS: the P of each case,
# "1 2 3 4" unless set; the sanitizer build sets "2", and the bound is then checked at P = 2 only;
# H5SHUF_MPI_BOUND_PROCS: the P of the bound, "2 4 8" unless set)
set -u
H=$1 HM=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Every process runs on this machine: TCP over loopback only (Open MPI 5 in a chroot finds no reachable
# pairing between the host's other interfaces and warns once per process).
export OMPI_MCA_btl_tcp_if_include=lo
# mpirun's own report of a process's nonzero exit: silenced by -q (Open MPI 4), which Open MPI 5 does not
# have (its report is a box between lines of dashes, dropped by without_report).
QUIET=()
mpirun -q --version >/dev/null 2>&1 && QUIET=(-q)
without_report() { awk '/^-{20,}$/ { box = !box; next } !box'; }
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-mpi.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
failed=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; failed=$((failed + 1)); }
# (MPIRUN_OPTS: more options of mpirun, e.g. the transports)
mpi() { local p=$1; shift; timeout 120 mpirun --oversubscribe ${MPIRUN_OPTS:-} -n "$p" "$HM" "$@"; }

# Both tools link serial HDF5, also where Debian's libhdf5-openmpi-dev makes "hdf5" the MPI build.
for t in "$H" "$HM"; do
    if ldd "$t" | grep -q 'libhdf5_serial\.so' && ! ldd "$t" | grep -q 'libhdf5_openmpi'; then
        ok "$(basename "$t") links serial HDF5 ($(ldd "$t" | grep -o 'libhdf5_serial\.so[^ ]*' | head -1))"
    else
        bad "$(basename "$t") does not link serial HDF5: $(ldd "$t" | grep hdf5 | tr -s ' \t' ' ')"
    fi
done

/usr/bin/python3 - <<'PY' || exit 1
import h5py, numpy as np
rng = np.random.default_rng(7)
for name, n in (("a.h5", 20011), ("b.h5", 7000)):
    with h5py.File(name, "w") as f:
        f.create_dataset("x", data=rng.standard_normal((n, 16)).astype("f4"), chunks=(100, 16),
                         compression="gzip", compression_opts=4)
        f.create_dataset("y", data=rng.integers(0, 10, n), chunks=(4096,), compression="gzip")
        f["x"].attrs["units"] = "volts"
with h5py.File("w.h5", "w") as f:  # whole-file mode: rows with a dimension scale, a lookup table
    n = 12345
    t = f.create_dataset("time", data=np.arange(n, dtype="f8"), chunks=(1000,))
    t.make_scale("time")
    x = f.create_dataset("x", data=rng.standard_normal((n, 3)), chunks=(64, 3), compression="gzip", shuffle=True)
    x.dims[0].attach_scale(t)
    f.create_dataset("classes", data=np.array([b"cat", b"dog"]))
    f.attrs["title"] = "whole file"
with h5py.File("rec.h5", "w") as f:  # large records (1 MiB, a chunk each) with labels: the direct path
    n = 16  # (few and uncompressed: the ASan build writes them 48 times)
    f.create_dataset("vol", data=rng.standard_normal((n, 512, 512)).astype("f4"), chunks=(1, 512, 512))
    f.create_dataset("label", data=np.arange(n, dtype="i8"), chunks=(4,))
with h5py.File("c.h5", "w") as f:  # a contiguous dataset: its part is copied as rows, not chunks
    f.create_dataset("x", data=rng.standard_normal((9999, 4)))
with h5py.File("tok.h5", "w") as f:  # token sequences (int32, 1..4096 tokens), their domain, a text column
    n = 700
    t = f.create_dataset("tok", (n,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(64,), compression="gzip")
    t[:] = np.array([rng.integers(0, 50000, int(k), dtype=np.int32) for k in rng.integers(1, 4097, n)], dtype=object)
    f.create_dataset("domain", data=rng.integers(0, 3, n).astype("i2"), chunks=(256,))
    s = f.create_dataset("text", (n,), dtype=h5py.string_dtype())
    s[:] = np.array(["row %d %s" % (i, "\u00e9" * int(rng.integers(0, 60))) for i in range(n)], dtype=object)
with h5py.File("refs.h5", "w") as f:  # rows of references: object ones, region ones into a copied table
    n = 3000
    x = f.create_dataset("x", data=rng.standard_normal((n, 32)), chunks=(256, 32))
    g = f.create_group("g")
    tab = g.create_dataset("tab", data=np.arange(20).reshape(5, 4))
    targets = [f.ref, g.ref, x.ref, tab.ref]
    f.create_dataset("r", data=np.array([targets[i % 4] for i in range(n)], dtype=h5py.ref_dtype), chunks=(256,))
    regs = [tab.regionref[k % 5, 0:k % 4 + 1] for k in range(20)]
    f.create_dataset("reg", data=np.array([regs[i % 20] for i in range(n)], dtype=h5py.regionref_dtype), chunks=(256,))
PY
# one output's files: the single file, or its shards/splits (named as h5shuf names them)
files_of() { ls "$1" "${1%.h5}"-*.h5 2>/dev/null; }
clean_dirs() {
    local left
    left=$(find "$W"/tmp -type f 2>/dev/null; ls -a "$W"/out | grep h5shuf- )
    [ -z "$left" ] || { echo "#   left behind: $left"; return 1; }
}

# case NAME HOW OUTPUT-ARGS...: the serial run into out/ser-NAME.h5, then h5shuf-mpi for P = 1..4 into
# out/mpiP-NAME.h5; HOW is md5 (every file of the output identical) or h5same (the single output).
case_() {
    local name=$1 how=$2; shift 2
    mkdir -p out
    if ! "$H" -q -f "$@" "out/ser-$name.h5" 2>err; then bad "$name: the serial run failed: $(cat err)"; return; fi
    for p in ${H5SHUF_MPI_PROCS:-1 2 3 4}; do
        rm -rf tmp; mkdir -p tmp/r0 tmp/r1 tmp/r2 tmp/r3
        local o="out/mpi$p-$name.h5"
        if ! mpi "$p" -q -f -t "$W/tmp/r%r" "$@" "$o" >out.txt 2>err; then bad "$name P=$p: failed: $(head -3 err)"; continue; fi
        local same=1
        if [ "$how" = md5 ]; then
            local a b
            a=$(cd out && for f in $(files_of "ser-$name.h5"); do md5sum < "$f"; done)
            b=$(cd out && for f in $(files_of "mpi$p-$name.h5"); do md5sum < "$f"; done)
            [ -n "$a" ] && [ "$a" = "$b" ] || same=0
            [ "$(files_of "out/ser-$name.h5" | wc -l)" -gt 1 ] || same=0
        elif [ "$how" = md5one ]; then # a single output, md5-identical (vlen rows: process 0 writes it all)
            [ "$(md5sum < "out/ser-$name.h5")" = "$(md5sum < "$o")" ] || same=0
        else
            /usr/bin/python3 "$(dirname "$0")/h5same.py" "out/ser-$name.h5" "$o" >same.txt || { same=0; cat same.txt; }
            h5diff "out/ser-$name.h5" "$o" >/dev/null || same=0
        fi
        if [ $same = 1 ] && clean_dirs; then ok "$name P=$p: the serial run's bytes ($how)"; else bad "$name P=$p"; fi
        rm -f "$o" "${o%.h5}"-*.h5
    done
}

TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
h5same() { /usr/bin/python3 "$TESTS_DIR/h5same.py" "$@"; }
cd "$W"
case_ single h5same -s 5 -m 16M --index /idx a.h5:/x,/y b.h5:/x,/y
case_ shards md5 -s 5 -m 16M --shards 4 a.h5:/x,/y b.h5:/x,/y
case_ recurse h5same -s 9 -m 16M --debug-pile-bound 300 --index /idx a.h5:/x,/y b.h5:/x,/y
case_ restart md5 -s 9 -m 16M --on-oversize restart --debug-pile-bound 300 --shards 3 a.h5:/x,/y b.h5:/x,/y
case_ whole h5same -s 3 -m 8M w.h5
case_ splits md5 -s 4 -m 16M --split train=0.8,val=0.1,test=0.1 --head 20000 --source-index /src a.h5:/x,/y b.h5:/x,/y
case_ contiguous h5same -s 2 -m 8M --check c.h5:/x
case_ direct h5same -s 6 -m 64M --index /idx rec.h5
case_ direct-shards md5 -s 6 -m 64M --shards 3 rec.h5
case_ direct-windows h5same -s 7 -m 64M --strategy direct --debug-pile-bound 12 a.h5:/x,/y
case_ shards7 md5 -s 5 -m 4M -c zstd:1+shuffle --shards 7 --index /i a.h5:/x,/y
# variable-length rows: token sequences with their domain, vlen strings (piles of about 1 MiB at -m 4M)
case_ tok-shards md5 -s 5 -m 4M --shards 4 tok.h5:/tok,/domain
case_ tok-single md5one -s 5 -m 4M --index /idx tok.h5:/tok,/domain,/text
case_ tok-splits md5 -s 6 -m 4M --split train=0.9,test=0.1 --head 600 --source-index /src tok.h5:/tok,/text
case_ tok-recurse md5one -s 7 -m 4M --debug-pile-bound 60 tok.h5:/tok,/domain
case_ tok-direct md5 -s 8 -m 4M --strategy direct --shards 3 tok.h5:/tok,/domain,/text
# weights (issue 29): copies and exact samples, the same on every process count
case_ weights md5 -s 13 -m 16M --shards 3 --source-index /src --index /idx a.h5:/x,/y@2.5 b.h5:/x,/y@0.25
case_ tok-weights md5one -s 14 -m 4M tok.h5:/tok,/domain@1.5 tok.h5:/tok,/domain@0.3
# --stratify (issue 29): every shard each group's share within one row, the same on every process count
case_ stratify md5 -s 15 -m 16M --shards 3 --stratify --index /idx a.h5:/x,/y@1.5 b.h5:/x,/y
case_ tok-stratify md5 -s 16 -m 4M --shards 2 --stratify tok.h5:/tok,/domain@0.7 tok.h5:/tok,/domain@0.4
# rows of references: their chunks hold the output's addresses (process 0 writes a single output)
case_ refs-single md5one -s 5 -m 4M --check refs.h5
case_ refs-shards md5 -s 5 -m 4M --shards 3 refs.h5
# Pass 2's parts sent as stored scratch chunks, and as decoded rows, whichever moves fewer bytes here:
# both ways asked for (H5SHUF_DEBUG_SEND_ROWS), fixed-size and vlen rows, with recursion's split piles
H5SHUF_DEBUG_SEND_ROWS=0 case_ chunks-sent md5 -s 11 -m 4M --debug-pile-bound 900 --shards 3 a.h5:/x,/y b.h5:/x,/y
H5SHUF_DEBUG_SEND_ROWS=1 case_ rows-sent md5 -s 11 -m 4M --debug-pile-bound 900 --shards 3 a.h5:/x,/y b.h5:/x,/y
H5SHUF_DEBUG_SEND_ROWS=0 case_ tok-chunks-sent md5 -s 12 -m 4M --shards 3 tok.h5:/tok,/domain,/text
H5SHUF_DEBUG_SEND_ROWS=1 case_ tok-rows-sent md5 -s 12 -m 4M --shards 3 tok.h5:/tok,/domain,/text
# "Two nodes": Open MPI over TCP only (no shared memory between the processes), each its own scratch
MPIRUN_OPTS="--mca btl tcp,self" case_ tok-tcp md5 -s 9 -m 4M --shards 3 tok.h5:/tok,/domain

# --tmpdir with %r whose per-rank directories do not exist yet: each process makes its own (0700) when the
# parent exists; a missing parent is the run's error, naming the directory.
rm -rf tmp; mkdir -p tmp
mpi 2 -q -f -s 1 -m 16M --strategy two-pass -t "$W/tmp/new-%r" a.h5:/x,/y out/mk.h5 >/dev/null 2>err; rc=$?
if [ $rc = 0 ] && [ -e out/mk.h5 ] && [ "$(stat -c %a tmp/new-0)" = 700 ] && [ "$(stat -c %a tmp/new-1)" = 700 ] &&
    [ -z "$(find tmp/new-0 tmp/new-1 -mindepth 1)" ]; then
    ok "--tmpdir DIR/new-%r: the per-rank directories made, 0700, left empty"
else
    bad "--tmpdir DIR/new-%r with no such directories (exit $rc)"; ls -la tmp tmp/* 2>&1 | sed 's/^/#   /'
    sed 's/^/#   /' err | head -5
fi
if ! mpi 2 -q -f -s 1 -m 4M -t "$W/tmp/none/x-%r" a.h5:/x,/y out/mk2.h5 >/dev/null 2>err && grep -q 'tmp/none/x-' err &&
    [ ! -e tmp/none ] && [ ! -e out/mk2.h5 ]; then
    ok "--tmpdir with %r under a missing directory: refused naming it, nothing made"
else
    bad "--tmpdir with %r under a missing directory"; sed 's/^/#   /' err | head -5
fi

# Progress and --json on process 0 count the rows of every process (the passes' rows are N, by h5py), and
# the bytes pass 2 sent between processes (none at P = 1).
n=$(/usr/bin/python3 -c 'import h5py; print(len(h5py.File("tok.h5", "r")["tok"]))')
for p in 1 3; do
    rm -rf tmp; mkdir -p tmp/r0 tmp/r1 tmp/r2
    mpi "$p" -f -s 3 -m 4M --json -t "$W/tmp/r%r" --shards 4 tok.h5:/tok,/domain out/prog.h5 >prog.json 2>err
    if /usr/bin/python3 - "$n" "$p" prog.json <<'PY'; then ok "--json at P=$p: scatter and gather $n rows (all processes'), exchanged bytes as expected"; else bad "--json at P=$p"; cat prog.json err | head -5; fi
import json, sys
n, p, d = int(sys.argv[1]), int(sys.argv[2]), json.load(open(sys.argv[3]))
rows = {x["name"]: x["rows"] for x in d["passes"]}
sent = d.get("exchanged_bytes", 0)  # (printed by h5shuf-mpi when pass 2 sent bytes)
print("#   passes", rows, "exchanged_bytes", sent)
sys.exit(0 if rows.get("scatter") == n and rows.get("gather") == n and ((sent == 0) == (p == 1)) else 1)
PY
    rm -f out/prog*.h5
done

# Each row crosses the network once (issue 51): a pile cut by several processes' output ranges is sent
# to each only as its rows, so pass 2 sends at most (P-1)/P of the rows' bytes (+ 0.05: ids, vlen lengths,
# counts, the cuts' sums): rows of 264 bytes and token sequences, 16 shards and the single output, the
# piles (-m 4M) cut by several ranges each; the outputs the serial run's.  Stored scratch chunks (the
# scratch compressed, as a large run's is) send at most (P-1)/P of the scratch's bytes (+ 0.05).
/usr/bin/python3 - <<'PY' || exit 1
import h5py, numpy as np
rng = np.random.default_rng(51)
with h5py.File("wide.h5", "w") as f:  # 40000 rows of 264 bytes
    f.create_dataset("x", data=rng.standard_normal((40000, 64)).astype("f4"), chunks=(1000, 64), compression="gzip",
                     compression_opts=1)
    f.create_dataset("y", data=rng.integers(0, 1 << 40, 40000), chunks=(4096,), compression="gzip", compression_opts=1)
with h5py.File("tok.h5", "r") as f:  # the rows' bytes: the tokens and the domain labels
    open("tok_bytes.txt", "w").write(str(sum(len(t) for t in f["tok"][:]) * 4 + 2 * len(f["domain"])))
PY
bound() { # NAME HOW ROWS_BYTES [SCRATCH] ARGS...: at P = 2, 4, 8 the serial run's outputs and the bound
    local name=$1 how=$2 rb=$3 scratch=$4; shift 4
    mkdir -p out
    "$H" -q -f -s 21 -j 1 "$@" "out/bser-$name.h5" 2>err || { bad "$name: the serial run failed: $(cat err)"; return; }
    for p in ${H5SHUF_MPI_BOUND_PROCS:-$bound_procs}; do
        rm -rf tmp; mkdir -p tmp; for r in $(seq 0 $((p - 1))); do mkdir -p "tmp/r$r"; done
        local o="out/b$p-$name.h5" same=1
        if ! mpi "$p" -q -f --json -s 21 -j 1 -t "$W/tmp/r%r" "$@" "$o" >bound.json 2>err; then
            bad "$name P=$p: failed: $(head -3 err)"; continue
        fi
        if [ "$how" = h5same ]; then
            h5same "out/bser-$name.h5" "$o" >/dev/null || same=0
        else
            [ "$(cd out && for f in $(files_of "bser-$name.h5"); do md5sum <"$f"; done)" = \
              "$(cd out && for f in $(files_of "b$p-$name.h5"); do md5sum <"$f"; done)" ] || same=0
        fi
        if /usr/bin/python3 - "$p" "$rb" "$scratch" bound.json <<'PY' && [ $same = 1 ] && clean_dirs; then ok "$name P=$p: $(cat bound.txt)"; else bad "$name P=$p (same $same): $(cat bound.txt)"; fi
import json, sys
p, rb, scratch, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "scratch", json.load(open(sys.argv[4]))
sent = d.get("exchanged_bytes", 0)
of = d["scratch_bytes"] if scratch else rb
limit = (p - 1) / p + 0.05
text = (f"sent {sent} bytes = {sent / of:.3f} of the {'scratch' if scratch else 'rows'}' {of} bytes (at most "
        f"{limit:.3f}), {d.get('messages_sent')} messages in {d.get('rounds')} rounds")
open("bound.txt", "w").write(text)
sys.exit(0 if 0 < sent <= limit * of and sent <= limit * rb else 1)
PY
        rm -f "$o" "${o%.h5}"-*.h5
    done
    rm -f "out/bser-$name.h5" "out/bser-$name"-*.h5
}
wide_bytes=$((40000 * 264)) tok_bytes=$(cat tok_bytes.txt) bound_procs="2 4 8"
[ "$(echo ${H5SHUF_MPI_PROCS:-1 2 3 4} | wc -w)" = 1 ] && bound_procs=2 # (a sanitizer build: one P)
bound wide-shards md5 $wide_bytes rows -m 4M --shards 16 wide.h5:/x,/y
bound wide-single h5same $wide_bytes rows -m 4M wide.h5:/x,/y
bound tok-shards md5 "$tok_bytes" rows -m 4M --shards 16 tok.h5:/tok,/domain
bound tok-single md5 "$tok_bytes" rows -m 4M tok.h5:/tok,/domain
bound wide-stored md5 $wide_bytes scratch -m 4M --shards 16 --scratch-compression zstd:1+shuffle wide.h5:/x,/y

# --plan names the single writer of a single output: process 0, every row of vlen rows, with the bytes.
one=$(mpi 2 --plan -s 1 -m 4M tok.h5:/tok,/domain out/plan.h5 | grep 'single writer')
none=$(mpi 2 --plan -s 1 -m 4M --shards 4 tok.h5:/tok,/domain out/plan.h5 | grep -c 'single writer')
if [[ $one == "h5shuf-mpi: single writer: process 0 gathers every pile and writes all 700 rows of the output alone (about "*" MiB;"*"--shards K (K >= 2) writes in parallel" ]] && [ "$none" = 0 ]; then
    ok "--plan names process 0 the single writer of vlen rows, not of shards: $one"
else
    bad "--plan's single writer: '$one' (with shards: $none lines)"
fi

# Pass 2 without overlapped piles (vlen rows) also holds the parts sent and received: under MPI a pile
# gets P/(P+2) of the budget the serial plan gives it (plan.c), so each process stays within --memory.
pile_mib() { sed -n 's/.*a pile may use \([0-9.]*\) MiB.*/\1/p'; }
ser=$("$H" --plan -s 1 -m 16M tok.h5:/tok out/plan.h5 | pile_mib)
par=$(mpi 2 --plan -s 1 -m 16M tok.h5:/tok out/plan.h5 | pile_mib)
if [ -n "$ser" ] && [ -n "$par" ] && awk -v s="$ser" -v p="$par" 'BEGIN { exit !(p < s * 0.55 && p > s * 0.45) }'; then
    ok "vlen rows at P = 2: a pile may use $par MiB, half of the serial plan's $ser MiB"
else
    bad "vlen rows at P = 2: a pile may use '$par' MiB, the serial plan '$ser' MiB (want half)"
fi

# ---- failures -----------------------------------------------------------------------------------------
# A corrupt chunk in the last rows: only the process whose share holds them (rank 2 of 3) fails.
/usr/bin/python3 - <<'PY' || exit 1
import h5py, shutil
shutil.copy("a.h5", "bad.h5")
with h5py.File("bad.h5", "r") as f:
    d = f["x"]
    info = d.id.get_chunk_info(d.id.get_num_chunks() - 3)
with open("bad.h5", "r+b") as g:
    g.seek(info.byte_offset + 8)
    g.write(b"\xff" * 64)
PY
rm -rf tmp; mkdir -p tmp/r0 tmp/r1 tmp/r2
start=$(date +%s)
mpi 3 -q -s 1 -m 16M -t "$W/tmp/r%r" bad.h5:/x out/fail.h5 >/dev/null 2>err; rc=$?
took=$(( $(date +%s) - start ))
lines=$(grep -c '^h5shuf-mpi: ' err)
if [ $rc -ne 0 ] && [ "$lines" = 1 ] && grep -q '^h5shuf-mpi: rank 2: bad.h5:/x: .*rows' err && [ ! -e out/fail.h5 ] && clean_dirs &&
   [ "$took" -le 20 ]; then
    ok "a corrupt chunk in rank 2's share: exit $rc in ${took}s, one line: $(grep '^h5shuf-mpi' err)"
else
    bad "a corrupt chunk in rank 2's share (exit $rc, ${took}s, $lines lines)"; sed 's/^/#   /' err | head -20
fi

# A problem every process finds from the plan (a dataset that is not there): one line, by process 0, no
# abort (mpirun's own report of a nonzero exit aside, nothing else).
rm -rf tmp; mkdir -p tmp/r0 tmp/r1
timeout 120 mpirun "${QUIET[@]}" --oversubscribe -n 2 "$HM" -s 1 -t "$W/tmp/r%r" tok.h5:/nope out/v.h5 >/dev/null 2>err.all
rc=$?
without_report <err.all >err
if [ $rc -ne 0 ] && [ "$(wc -l <err)" = 1 ] && grep -q '^h5shuf-mpi: rank 0: tok.h5:/nope' err && [ ! -e out/v.h5 ] &&
   clean_dirs; then
    ok "a dataset missing, P = 2: exit $rc, one line: $(cat err)"
else
    bad "a dataset missing, P = 2 (exit $rc, $(wc -l <err) lines)"; sed 's/^/#   /' err | head -10
fi
# A corrupt chunk of token sequences in rank 2's share (4096 rows: the plan's sample of the payload reads
# 16 blocks of 64 rows from row 0 on every 256th, so not rows 3968..4031): that process fails, one line.
/usr/bin/python3 - <<'PY' || exit 1
import h5py, numpy as np
rng = np.random.default_rng(3)
with h5py.File("badtok.h5", "w") as f:
    t = f.create_dataset("tok", (4096,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(64,), compression="gzip")
    t[:] = np.array([rng.integers(0, 50000, int(k), dtype=np.int32) for k in rng.integers(1, 17, 4096)], dtype=object)
    f.create_dataset("domain", data=rng.integers(0, 3, 4096).astype("i2"))
with h5py.File("badtok.h5", "r") as f:
    info = f["tok"].id.get_chunk_info_by_coord((3968,))
with open("badtok.h5", "r+b") as g:
    g.seek(info.byte_offset + 4)
    g.write(b"\xff" * 32)
PY
rm -rf tmp; mkdir -p tmp/r0 tmp/r1 tmp/r2
mpi 3 -q -s 1 -m 4M -t "$W/tmp/r%r" --shards 3 badtok.h5:/tok,/domain out/badtok.h5 >/dev/null 2>err; rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c '^h5shuf-mpi: ' err)" = 1 ] && grep -q '^h5shuf-mpi: rank 2: badtok.h5:/tok: ' err &&
   [ -z "$(ls out/badtok* 2>/dev/null)" ] && clean_dirs; then
    ok "a corrupt chunk of token sequences in rank 2's share: exit $rc, one line: $(grep '^h5shuf-mpi' err)"
else
    bad "a corrupt chunk of token sequences in rank 2's share (exit $rc)"; sed 's/^/#   /' err | head -10
fi

# SIGTERM to one process while the job runs.
/usr/bin/python3 -c '
import h5py, numpy as np
with h5py.File("big.h5", "w") as f:
    f.create_dataset("x", data=np.random.default_rng(1).standard_normal((1500000, 16)).astype("f4"), chunks=(1000, 16), compression="gzip", compression_opts=6)
' || exit 1
for sig in TERM HUP; do # (SIGHUP: a closed terminal or ssh session, handled as SIGTERM)
rm -rf tmp; mkdir -p tmp/r0 tmp/r1 tmp/r2
mpirun --oversubscribe -n 3 "$HM" -q -s 1 -m 8M -j 1 -t "$W/tmp/r%r" big.h5:/x out/term.h5 >/dev/null 2>err &
job=$!
victim=
for _ in $(seq 1 200); do
    for pid in $(pgrep -f "h5shuf-mpi.*term.h5"); do
        grep -qz '^OMPI_COMM_WORLD_RANK=1$' /proc/"$pid"/environ 2>/dev/null && victim=$pid
    done
    [ -n "$victim" ] && ls tmp/r1/h5shuf-scratch-* >/dev/null 2>&1 && break
    sleep 0.05
done
sleep 0.3
start=$(date +%s)
[ -n "$victim" ] && kill -$sig "$victim"
wait $job; rc=$?
took=$(( $(date +%s) - start ))
if [ -n "$victim" ] && [ $rc -ne 0 ] && grep -q "^h5shuf-mpi: rank 1: interrupted by signal $(kill -l $sig);" err &&
   [ ! -e out/term.h5 ] && clean_dirs && [ "$took" -le 20 ]; then
    ok "SIG$sig to rank 1: exit $rc in ${took}s, nothing left behind"
else
    bad "SIG$sig to rank 1 (victim '${victim}', exit $rc, ${took}s)"; sed 's/^/#   /' err | head -20; find tmp out
fi
done
# SIGTERM to every process of a run blocked in MPI waits (as Slurm's preemption sends it): rank 1 waits on
# a message that never comes (H5SHUF_DEBUG_STALL_RANK), the others on rank 1; every process notices the
# signal in its wait and all have exited within 1 s, leaving nothing but the resume state (--resume), which
# a run with --resume takes up to the uninterrupted run's output (md5 of the serial run's shards).
rm -rf tmp ckpt; mkdir -p tmp/r0 tmp/r1 tmp/r2 ckpt
"$H" -q -s 4 -m 4M --checkpoint 1M --shards 4 wide.h5:/x,/y ckpt/ser.h5 || bad "SIGTERM in waits: the serial run failed"
H5SHUF_DEBUG_STALL_RANK=1 mpirun --oversubscribe -n 3 "$HM" -q -s 4 -m 4M -j 1 --checkpoint 1M --resume -t "$W/tmp/r%r" \
    --shards 4 wide.h5:/x,/y ckpt/o.h5 >/dev/null 2>err &
job=$!
for _ in $(seq 1 600); do grep -q 'stalled' err && break; sleep 0.05; done
sleep 0.5 # (the others reach their waits on rank 1)
ranks=$(for pid in $(pgrep -f "^$HM .*ckpt/o.h5"); do grep -qz '^OMPI_COMM_WORLD_RANK=' /proc/"$pid"/environ 2>/dev/null && echo "$pid"; done)
t0=$(date +%s%N)
[ "$(echo $ranks | wc -w)" = 3 ] && kill -TERM $ranks
running() { local st; st=$(awk '{ print $3 }' /proc/"$1"/stat 2>/dev/null); [ -n "$st" ] && [ "$st" != Z ]; } # (exited: a zombie until mpirun reaps it)
for _ in $(seq 1 500); do alive=0; for pid in $ranks; do running "$pid" && alive=1; done; [ $alive = 0 ] && break; sleep 0.01; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $alive = 0 ] || kill -KILL $ranks # (not noticed: never ends)
wait $job; rc=$?
msj=$(( ($(date +%s%N) - t0) / 1000000 ))
left=$(find tmp ckpt -type f ! -name 'ser-*' | grep -v '/h5shuf-resume-o.h5-[0-9a-f]*-uid[0-9]*-rank[0-2]/' | grep -v '^ckpt/\.o-0000[0-3]-of-00004.h5.h5shuf-' )
states=$(ls -d tmp/r*/h5shuf-resume-* 2>/dev/null | wc -l)
if [ "$(echo $ranks | wc -w)" = 3 ] && [ $alive = 0 ] && [ "$ms" -le 1000 ] && [ $rc -ne 0 ] && [ "$(grep -c 'interrupted by signal 15' err)" = 3 ] &&
   [ -z "$left" ] && [ "$states" = 3 ]; then
    ok "SIGTERM to every process blocked in MPI waits: all exited in $ms ms (mpirun in $msj ms, exit $rc), only the 3 resume states left"
else
    bad "SIGTERM to every process blocked in MPI waits (ranks $(echo $ranks), $ms ms, exit $rc, $states states, left: $(echo $left))"
    sed 's/^/#   /' err | grep -v '^#   [-|]' | head -10
fi
if mpi 3 -q -s 4 -m 4M -j 1 --checkpoint 1M --resume -t "$W/tmp/r%r" --shards 4 wide.h5:/x,/y ckpt/o.h5 2>err &&
   [ "$(cd ckpt && md5sum <ser-00000-of-00004.h5; md5sum <ser-00001-of-00004.h5; md5sum <ser-00002-of-00004.h5; md5sum <ser-00003-of-00004.h5)" = \
     "$(cd ckpt && md5sum <o-00000-of-00004.h5; md5sum <o-00001-of-00004.h5; md5sum <o-00002-of-00004.h5; md5sum <o-00003-of-00004.h5)" ] &&
   clean_dirs && [ -z "$(ls -A ckpt | grep -v '^ser-\|^o-')" ]; then
    ok "SIGTERM in waits, then --resume: the uninterrupted run's shards (md5), nothing left"
else
    bad "SIGTERM in waits, then --resume"; sed 's/^/#   /' err | head -5; ls -a ckpt tmp/*
fi

# --force over 4 shards, 2 processes: process 1 cannot place shard 3 (a directory appeared at its name while
# the job ran), so process 0 takes shards 0 and 1 back too and the old shards return: all or nothing.
rm -rf tmp force; mkdir -p tmp/r0 tmp/r1 force
"$H" -q -s 1 --shards 4 a.h5:/x force/o.h5 || bad "--force over 4 shards: the first run failed"
old=$(md5sum force/o-*.h5)
mpirun --oversubscribe -n 2 "$HM" -q -s 2 -m 8M -j 1 -t "$W/tmp/r%r" --force --shards 4 big.h5:/x force/o.h5 >/dev/null 2>err &
job=$!
for _ in $(seq 1 500); do ls force/.o-00003-of-00004.h5.h5shuf-* >/dev/null 2>&1 && break; sleep 0.02; done
mv force/o-00003-of-00004.h5 force/keep3.h5 && mkdir force/o-00003-of-00004.h5
wait $job; rc=$?
rmdir force/o-00003-of-00004.h5 && mv force/keep3.h5 force/o-00003-of-00004.h5
if [ $rc -ne 0 ] && [ "$(grep -c '^h5shuf-mpi: ' err)" = 1 ] && grep -q 'o-00003-of-00004.h5' err && [ "$(md5sum force/o-*.h5)" = "$old" ] &&
   [ "$(ls -A force | wc -l)" = 4 ] && clean_dirs; then
    ok "--force over 4 shards, shard 3 not placeable: exit $rc, one line, the old shards' md5 on both processes' files"
else
    bad "--force over 4 shards, shard 3 not placeable (exit $rc)"; sed 's/^/#   /' err | head -5; ls -a force
fi
echo "# $failed failed"
[ $failed -eq 0 ]
