#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/cases.sh - the cases users have (issues 15 and 28), each against its alternative or yardstick in the
# same run, following docs/benchmark.md's "Protocol": before each timed command the old outputs are removed,
# `sync`, sleep SETTLE s, the command's input is read again and `sync`; the commands of a case are
# interleaved (A B C A B C ...), REPS rounds; the table gives medians and the ratios the issues set targets
# for.  docs/benchmark.md has the results.
#
#   bash bench/cases.sh                          every case (about 80 minutes on 2 cores, plus making the
#                                                data the first time: about 10 GiB in WORK)
#   CASES="xy raw" REPS=1 SETTLE=2 bash bench/cases.sh    a quick look
#   SMALL=1 REPS=1 SETTLE=1 WORK=/tmp/c bash bench/cases.sh   a smoke test of the harness (every file about
#                                                16 MiB, in WORK/data-small; a minute or two; times mean nothing)
#   OLD=/path/to/old/h5shuf bash bench/cases.sh  also time an older build on the same commands (of the cases
#                                                OLD_CASES, default all), and check that both write the same
#                                                bytes (md5); the old build runs first in even rounds
#
# The cases (data made by bench/cases.py into WORK, kept and reused; -m 128M unless said otherwise):
#   xy      1 GiB gzip-4 /data (1 KiB rows, 1 MiB chunks) with /label int64 (chunks of 65536): /data alone,
#           /data,/label together (X+y) at -m 128M and at -m 2G (the data fits: one pass, never slower than
#           -m 128M, issue 52: the ratio is given for every round), and `h5repack -f GZIP=4` of the file
#   floor   the CPU floor of xy's file: bench/cpufloor.c ($BUILD/h5shuf_cpufloor) reads every stored chunk of
#           /data and /label (H5Dread_chunk), inflates it and deflates it again at its level (4) with
#           libdeflate on all cores, and writes nothing; against xy's X+y (run here too when xy is not in
#           CASES)
#   raw     the same as xy uncompressed: /data,/label at -m 128M and at -m 2G (the data fits), the in-memory
#           h5py + numpy permutation (bench/cases.py perm), and bench/seqcopy.py (one sequential h5py
#           read+write copy of /data and /label: X+y-128M is set against two of them)
#   small   1 GiB of 16-byte rows (64M x 4 float32), uncompressed, at -m 128M, the in-memory permutation and
#           bench/seqcopy.py (issue 52: -m 128M at most 1.5 times two sequential copies), and bench/seqcopy.py
#           --durable (two copies in a row, the second fsynced as h5shuf's output is: measured beside it)
#   rowsizes  1 GiB of 8-, 64- and 256-byte rows (2, 16, 64 float32 a row, 1 MiB chunks), uncompressed, at
#           -m 128M and -m 2G and the in-memory permutation; the 64-byte rows also bench/seqcopy.py (issue 52:
#           -m 128M at most 1.0 times two sequential copies), its --durable pair, and gzip-4, at -m 128M and 2G
#   tokens  2 GiB of int32 token ids (2^29) as vlen rows /tokens (h5py.vlen_dtype(np.int32), lengths 1..4096
#           of mean 1024, about 524000 rows, chunks of 1024 rows, TOKENS_FILTER none by default: gzip4
#           compresses only the chunks' heap ids, HDF5 keeps the tokens in the global heap) at -m 1G (about 3
#           piles) and the in-memory permutation of the rows
#   images  40000 (64, 64, 3) uint8 images + int64 labels, gzip-4, in the chunks h5py picks by itself
#           ((2500, 4, 8, 1): they split rows) with -j 2 and -j 1, and in chunks of whole rows (64, 64, 64, 3);
#           and the CPU floor (as in floor) of each file: what libdeflate alone costs each layout
#   many    FILES inputs (default 5000) of ROWS_PER_FILE rows (default 64) of /data 1 KiB + /label, under
#           `ulimit -n 1024` at -m 32M, and one file of the same rows at -m 32M
# Every output is checked once (bench/cases.py check: the contract's order, by numpy's Philox, vlen rows
# token for token; the permutation's: default_rng's; seqcopy's: the input's order), and every later round's
# output has the checked output's md5; every h5shuf output of one input and datasets has the same md5
# whatever its budget and threads (-m 128M and 2G, -j 1 and 2).  h5repack's output is not checked, and the floor writes none: it
# fails unless every chunk inflates to its chunk's size.
#
# Settings: CASES (default every case above), XY_EXTRA (xy's commands beside X+y at -m 128M and 2G: default
# "X h5repack"; "" for the ratio -m 2G / -m 128M alone), ROW_SIZES (rowsizes' files as row bytes:float32 columns,
# default "8:2 64:16 256:64"; the gzip-4 file only with 64:16), REPS=3, SETTLE=25, SEED=1, WORK=/tmp/h5shuf-cases, BUILD=build
# (NO_BUILD=1: not rebuilt), H5SHUF (default $BUILD/h5shuf), CPUFLOOR (default $BUILD/h5shuf_cpufloor), OLD,
# OLD_CASES, FILES, ROWS_PER_FILE, TOKENS_FILTER=none (or gzip4), SMALL=1 (every file about 16 MiB: xy,
# raw, small and rowsizes 16 MiB, tokens 2^22 ids, images 1000, FILES default 100),
# RESULTS=bench/results/cases-<UTC time>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
cases_py=$root/bench/cases.py
die() { echo "cases.sh: $*" >&2; exit 1; }

CASES=${CASES:-"xy floor raw small rowsizes tokens images many"}
REPS=${REPS:-3}
SETTLE=${SETTLE:-25}
SEED=${SEED:-1}
WORK=${WORK:-/tmp/h5shuf-cases}
SMALL=${SMALL:-0}
export SMALL # read by bench/cases.py gen
[ "$SMALL" = 1 ] && FILES=${FILES:-100}
FILES=${FILES:-5000}
TOKENS_FILTER=${TOKENS_FILTER:-none}
ROWS_PER_FILE=${ROWS_PER_FILE:-64}
OLD=${OLD:-}
OLD_CASES=${OLD_CASES:-$CASES}
RESULTS=${RESULTS:-$root/bench/results/cases-$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "== building h5shuf (scripts/build.sh into $BUILD)"
  H5SHUF_BUILD_TESTS=ON H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
fi
H5SHUF=${H5SHUF:-$BUILD/h5shuf}
CPUFLOOR=${CPUFLOOR:-$BUILD/h5shuf_cpufloor}
has() { [[ " $CASES " == *" $1 "* ]]; }
XY_EXTRA=${XY_EXTRA-"X h5repack"} # xy's commands beside X+y at -m 128M and 2G
xy_has() { [[ " $XY_EXTRA " == *" $1 "* ]]; }
for t in "$H5SHUF" /usr/bin/time h5repack "$PY" ${OLD:+"$OLD"} $({ has floor || has images; } && echo "$CPUFLOOR"); do
  command -v "$t" >/dev/null || die "$t not found"
done
data=$WORK/data out=$WORK/out
[ "$SMALL" = 1 ] && data=$WORK/data-small # never mixed with the full-size data
mkdir -p "$data" "$(dirname "$RESULTS")"
trap 'rm -rf "$out"' EXIT

# --- data, made once
gen() { # path what args...
  local path=$1; shift
  [ -e "$path" ] && return 0
  echo "== generating $(basename "$path")"
  $PY "$cases_py" gen "$@"
}
{ has xy || has floor; } && gen "$data/xy-gzip4.h5" xy "$data/xy-gzip4.h5" gzip4
has raw && gen "$data/xy-none.h5" xy "$data/xy-none.h5" none
has small && gen "$data/small16.h5" small "$data/small16.h5"
ROW_SIZES=${ROW_SIZES:-"8:2 64:16 256:64"} # row bytes:float32 columns
if has rowsizes; then
  for rc in $ROW_SIZES; do gen "$data/rows${rc%%:*}.h5" rows "$data/rows${rc%%:*}.h5" "${rc#*:}" none; done
  if [[ " $ROW_SIZES " == *" 64:16 "* ]]; then gen "$data/rows64-gzip4.h5" rows "$data/rows64-gzip4.h5" 16 gzip4; fi
fi
has tokens && gen "$data/tokens-$TOKENS_FILTER.h5" tokens "$data/tokens-$TOKENS_FILTER.h5" "$TOKENS_FILTER"
has images && gen "$data/img-auto.h5" images "$data/img-auto.h5" auto
has images && gen "$data/img-rows.h5" images "$data/img-rows.h5" rows
many=$data/many-$FILES-$ROWS_PER_FILE
has many && gen "$many/one.h5" many "$many" "$FILES" "$ROWS_PER_FILE"

# --- one timed command
{
  echo "# h5shuf cases (issues 15, 28), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, $(uname -sr); $("$H5SHUF" --version 2>&1 | head -1)${OLD:+; OLD = $OLD}"
  echo "- protocol (docs/benchmark.md): remove outputs, sync, sleep ${SETTLE} s, read the input, sync, then time; commands of a case interleaved, ${REPS} rounds; medians"
  if [ "$SMALL" = 1 ]; then echo "- **SMALL=1: every file about 16 MiB, a smoke test of the harness: the times mean nothing**"; fi
} >"$RESULTS.header"
printf '#case\tcommand\trep\twall_s\tpeak_rss_kib\tuser_s\tsys_s\n' >"$RESULTS.tsv"
cat "$RESULTS.header"

declare -A md5_seen md5_ident
ident="" # set by shuf: the input and datasets whose h5shuf outputs must all be the same bytes
settle() { # inputs to read
  rm -rf "$out"; mkdir -p "$out"
  sync; sleep "$SETTLE"
  local f; for f in "$@"; do if [ -d "$f" ]; then cat "$f"/*.h5 >/dev/null; else cat "$f" >/dev/null; fi; done
  sync
}
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
# timed CASE NAME INPUT OUTPUT CHECK REP -- COMMAND...: CHECK is "oracle DSETS", "perm DSETS", "same DSETS"
# (the input's order) or "-" (h5repack: none); OUTPUT "-": the command writes nothing (the CPU floor, which
# checks itself: its last line of output is shown)
timed() {
  local case=$1 name=$2 input=$3 output=$4 check=$5 rep=$6; shift 7
  settle "$input"
  if ! /usr/bin/time -v -o "$WORK/time.txt" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
    tail -3 "$WORK/cmd.err" >&2; die "$case $name failed: $*"
  fi
  local elapsed rss wall user sys verdict=""
  elapsed=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  user=$(sed -n 's/^[[:space:]]*User time (seconds): //p' "$WORK/time.txt")
  sys=$(sed -n 's/^[[:space:]]*System time (seconds): //p' "$WORK/time.txt")
  wall=$(seconds "$elapsed")
  # the output's bytes: checked against the oracle the first time a command writes them; later rounds (and
  # the old build's run of the same command) must write the same bytes
  local key="$case/${name#old:}" sum=""
  [ "$output" = - ] || sum=$(md5sum <"$output" | cut -d' ' -f1)
  if [ "$output" = - ]; then
    verdict="(writes nothing) $(tail -1 "$WORK/cmd.out")"
  elif [ "$check" = - ]; then
    verdict="(not checked: a copy, not byte-reproducible)"
  elif [ -z "${md5_seen[$key]:-}" ]; then
    # shellcheck disable=SC2086  # ${check#* } is the list of datasets
    case $check in
      oracle*) verdict=$($PY "$cases_py" check "$input" "$output" "$SEED" ${check#oracle }) || { echo "$verdict"; die "$case $name: output failed its check"; } ;;
      perm*) verdict=$($PY "$cases_py" check-perm "$input" "$output" "$SEED" ${check#perm }) || { echo "$verdict"; die "$case $name: output failed its check"; } ;;
      same*) verdict=$($PY "$cases_py" check-same "$input" "$output" "$SEED" ${check#same }) || { echo "$verdict"; die "$case $name: output failed its check"; } ;;
      *) die "$case $name: unknown check $check" ;;
    esac
    md5_seen[$key]=$sum
  elif [ "${md5_seen[$key]}" != "$sum" ]; then
    die "$case $name round $rep: md5 $sum differs from the checked output's ${md5_seen[$key]}"
  else
    verdict="same bytes as the checked output"
  fi
  # h5shuf's outputs of one input and datasets are the same bytes whatever the budget and threads
  if [ -n "$ident" ] && [ -n "$sum" ]; then
    if [ -z "${md5_ident[$ident]:-}" ]; then
      md5_ident[$ident]="$sum $name"
    elif [ "${md5_ident[$ident]%% *}" != "$sum" ]; then
      die "$case $name round $rep: md5 $sum differs from ${md5_ident[$ident]#* }'s ${md5_ident[$ident]%% *} (same input and datasets)"
    elif [ "${md5_ident[$ident]#* }" != "$name" ]; then
      verdict="$verdict; same bytes as ${md5_ident[$ident]#* }"
    fi
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$name" "$rep" "$wall" "$rss" "$user" "$sys" >>"$RESULTS.tsv"
  printf '%-8s %-15s round %d: %7.2f s (cpu %6.2f) %6d MiB  %s\n' "$case" "$name" "$rep" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" $((rss / 1024)) "$verdict"
}
# shuf CASE NAME INPUT OUTPUT CHECK REP -- ARGS...: h5shuf (and the old build, when OLD is set)
shuf() {
  local case=$1 name=$2 input=$3 output=$4 check=$5 rep=$6; shift 7
  ident="$input|$check"
  # the old build, when compared, runs first in even rounds: the command after another case's large
  # in-memory alternative pays for memory the VM has just handed back (seen 2026-11-27: tokens 1.20x in a
  # new-first run, 0.97x with the order alternated)
  local old_first=0
  if [ -n "$OLD" ] && [[ " $OLD_CASES " == *" $case "* ]]; then old_first=$(( rep % 2 == 0 ? 1 : 2 )); fi
  [ "$old_first" = 1 ] && timed "$case" "old:$name" "$input" "$output" "$check" "$rep" -- "$OLD" -q -s "$SEED" -t "$out" "$@"
  timed "$case" "$name" "$input" "$output" "$check" "$rep" -- "$H5SHUF" -q -s "$SEED" -t "$out" "$@"
  [ "$old_first" = 2 ] && timed "$case" "old:$name" "$input" "$output" "$check" "$rep" -- "$OLD" -q -s "$SEED" -t "$out" "$@"
  ident=""
}

echo "== runs (SETTLE=$SETTLE s before each)"
for rep in $(seq 1 "$REPS"); do
  if has xy; then
    in=$data/xy-gzip4.h5
    if xy_has X; then shuf xy X "$in" "$out/o.h5" "oracle data" "$rep" -- -m 128M "$in:/data" "$out/o.h5"; fi
    shuf xy X+y "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 128M "$in:/data,/label" "$out/o.h5"
    shuf xy X+y-2G "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 2G "$in:/data,/label" "$out/o.h5"
    if xy_has h5repack; then timed xy h5repack "$in" "$out/o.h5" - "$rep" -- h5repack -f GZIP=4 "$in" "$out/o.h5"; fi
  fi
  if has floor; then
    in=$data/xy-gzip4.h5
    # the ratio's numerator is xy's X+y: timed here, as case xy, when xy is not run
    has xy || shuf xy X+y "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 128M "$in:/data,/label" "$out/o.h5"
    timed floor floor "$in" - - "$rep" -- "$CPUFLOOR" "$in" /data /label
  fi
  if has raw; then
    in=$data/xy-none.h5
    shuf raw X+y-128M "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 128M "$in:/data,/label" "$out/o.h5"
    shuf raw X+y-2G "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 2G "$in:/data,/label" "$out/o.h5"
    timed raw in-memory "$in" "$out/o.h5" "perm data label" "$rep" -- $PY "$cases_py" perm "$in" "$out/o.h5" "$SEED" data label
    timed raw seqcopy "$in" "$out/o.h5" "same data label" "$rep" -- $PY "$root/bench/seqcopy.py" "$in" "$out/o.h5" /data /label
  fi
  if has small; then
    in=$data/small16.h5
    shuf small 16B-128M "$in" "$out/o.h5" "oracle data" "$rep" -- -m 128M "$in:/data" "$out/o.h5"
    timed small in-memory "$in" "$out/o.h5" "perm data" "$rep" -- $PY "$cases_py" perm "$in" "$out/o.h5" "$SEED" data
    timed small seqcopy "$in" "$out/o.h5" "same data" "$rep" -- $PY "$root/bench/seqcopy.py" "$in" "$out/o.h5" /data
    timed small seqcopy2-durable "$in" "$out/o.h5" "same data" "$rep" -- $PY "$root/bench/seqcopy.py" --durable "$in" "$out/o.h5" /data
  fi
  if has rowsizes; then
    for rc in $ROW_SIZES; do
      b=${rc%%:*} in=$data/rows${rc%%:*}.h5
      shuf rowsizes "${b}B-128M" "$in" "$out/o.h5" "oracle data" "$rep" -- -m 128M "$in:/data" "$out/o.h5"
      shuf rowsizes "${b}B-2G" "$in" "$out/o.h5" "oracle data" "$rep" -- -m 2G "$in:/data" "$out/o.h5"
      timed rowsizes "${b}B-in-memory" "$in" "$out/o.h5" "perm data" "$rep" -- $PY "$cases_py" perm "$in" "$out/o.h5" "$SEED" data
      if [ "$b" = 64 ]; then
        timed rowsizes "${b}B-seqcopy" "$in" "$out/o.h5" "same data" "$rep" -- $PY "$root/bench/seqcopy.py" "$in" "$out/o.h5" /data
        timed rowsizes "${b}B-seqcopy2-durable" "$in" "$out/o.h5" "same data" "$rep" -- $PY "$root/bench/seqcopy.py" --durable "$in" "$out/o.h5" /data
        in=$data/rows64-gzip4.h5
        shuf rowsizes 64B-gzip4-128M "$in" "$out/o.h5" "oracle data" "$rep" -- -m 128M "$in:/data" "$out/o.h5"
        shuf rowsizes 64B-gzip4-2G "$in" "$out/o.h5" "oracle data" "$rep" -- -m 2G "$in:/data" "$out/o.h5"
      fi
    done
  fi
  if has tokens; then
    in=$data/tokens-$TOKENS_FILTER.h5
    shuf tokens tok-1G "$in" "$out/o.h5" "oracle tokens" "$rep" -- -m 1G "$in:/tokens" "$out/o.h5"
    timed tokens in-memory "$in" "$out/o.h5" "perm tokens" "$rep" -- $PY "$cases_py" perm "$in" "$out/o.h5" "$SEED" tokens
  fi
  if has images; then
    in=$data/img-auto.h5
    shuf images auto-j2 "$in" "$out/o.h5" "oracle images labels" "$rep" -- -m 128M -j 2 "$in:/images,/labels" "$out/o.h5"
    shuf images auto-j1 "$in" "$out/o.h5" "oracle images labels" "$rep" -- -m 128M -j 1 "$in:/images,/labels" "$out/o.h5"
    timed images floor-auto "$in" - - "$rep" -- "$CPUFLOOR" "$in" /images /labels
    in=$data/img-rows.h5
    shuf images rows-j2 "$in" "$out/o.h5" "oracle images labels" "$rep" -- -m 128M -j 2 "$in:/images,/labels" "$out/o.h5"
    timed images floor-rows "$in" - - "$rep" -- "$CPUFLOOR" "$in" /images /labels
  fi
  if has many; then
    specs=()
    for f in "$many"/in-*.h5; do specs+=("$f:/data,/label"); done
    timed many "$FILES-inputs" "$many" "$out/o.h5" "oracle data label" "$rep" -- \
      bash -c 'ulimit -n 1024 && exec "$@"' many "$H5SHUF" -q -s "$SEED" -t "$out" -m 32M "${specs[@]}" "$out/o.h5"
    timed many one-file "$many/one.h5" "$out/o.h5" "oracle data label" "$rep" -- \
      "$H5SHUF" -q -s "$SEED" -t "$out" -m 32M "$many/one.h5:/data,/label" "$out/o.h5"
  fi
done

echo
$PY "$cases_py" table "$RESULTS.tsv" "$RESULTS.header" >"$RESULTS.md"
rm -f "$RESULTS.header"
cat "$RESULTS.md"
echo "results: $RESULTS.md (every run: $RESULTS.tsv)"
