#!/usr/bin/env bash
# bench/cases.sh - the cases users have (issue 15), each against its alternative in the same run, following
# ../shared/BENCHMARKING.md: before each timed command the old outputs are removed, `sync`, sleep SETTLE s,
# the command's input is read again and `sync`; the commands of a case are interleaved (A B C A B C ...),
# REPS rounds; the table gives medians and the ratios the issue sets targets for.  docs/benchmark.md has
# the results.
#
#   bash bench/cases.sh                          every case (about 35 minutes on 2 cores)
#   CASES="xy raw" REPS=1 SETTLE=2 bash bench/cases.sh    a quick look
#   OLD=/path/to/old/h5shuf bash bench/cases.sh  also time an older build on the same commands (of the cases
#                                                OLD_CASES, default all), and check that both write the same
#                                                bytes (md5)
#
# The cases (data made by bench/cases.py into WORK, kept and reused):
#   xy      1 GiB gzip-4 /data (1 KiB rows, 1 MiB chunks) with /label int64 (chunks of 65536): /data alone,
#           /data,/label together, and `h5repack -f GZIP=4` of the file
#   raw     the same uncompressed: /data,/label at -m 128M and at -m 2G (the data fits), and the in-memory
#           h5py + numpy permutation (bench/cases.py perm)
#   small   1 GiB of 16-byte rows (64M x 4 float32), uncompressed, at -m 128M, and the in-memory permutation
#   images  40000 (64, 64, 3) uint8 images + int64 labels, gzip-4, in the chunks h5py picks by itself
#           ((2500, 4, 8, 1): they split rows) with -j 2 and -j 1, and in chunks of whole rows (64, 64, 64, 3)
#   many    FILES inputs (default 5000) of ROWS_PER_FILE rows (default 64) of /data 1 KiB + /label, under
#           `ulimit -n 1024` at -m 32M, and one file of the same rows at -m 32M
# Every output is checked once (bench/cases.py check: the contract's order, by numpy's Philox; the
# permutation's: default_rng's), and every later round's output has the checked output's md5.
#
# Settings: CASES, REPS=3, SETTLE=25, SEED=1, WORK=/tmp/h5shuf-cases, BUILD=build (NO_BUILD=1: not rebuilt),
# H5SHUF (default $BUILD/h5shuf), OLD, FILES, ROWS_PER_FILE, RESULTS=bench/results/cases-<UTC time>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
cases_py=$root/bench/cases.py
die() { echo "cases.sh: $*" >&2; exit 1; }

CASES=${CASES:-"xy raw small images many"}
REPS=${REPS:-3}
SETTLE=${SETTLE:-25}
SEED=${SEED:-1}
WORK=${WORK:-/tmp/h5shuf-cases}
FILES=${FILES:-5000}
ROWS_PER_FILE=${ROWS_PER_FILE:-64}
OLD=${OLD:-}
OLD_CASES=${OLD_CASES:-$CASES}
RESULTS=${RESULTS:-$root/bench/results/cases-$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "== building h5shuf (scripts/build.sh into $BUILD)"
  H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
fi
H5SHUF=${H5SHUF:-$BUILD/h5shuf}
for t in "$H5SHUF" /usr/bin/time h5repack "$PY" ${OLD:+"$OLD"}; do
  command -v "$t" >/dev/null || die "$t not found"
done
data=$WORK/data out=$WORK/out
mkdir -p "$data" "$(dirname "$RESULTS")"
trap 'rm -rf "$out"' EXIT
has() { [[ " $CASES " == *" $1 "* ]]; }

# --- data, made once
gen() { # path what args...
  local path=$1; shift
  [ -e "$path" ] && return 0
  echo "== generating $(basename "$path")"
  $PY "$cases_py" gen "$@"
}
has xy && gen "$data/xy-gzip4.h5" xy "$data/xy-gzip4.h5" gzip4
has raw && gen "$data/xy-none.h5" xy "$data/xy-none.h5" none
has small && gen "$data/small16.h5" small "$data/small16.h5"
has images && gen "$data/img-auto.h5" images "$data/img-auto.h5" auto
has images && gen "$data/img-rows.h5" images "$data/img-rows.h5" rows
many=$data/many-$FILES-$ROWS_PER_FILE
has many && gen "$many/one.h5" many "$many" "$FILES" "$ROWS_PER_FILE"

# --- one timed command
{
  echo "# h5shuf cases (issue 15), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, $(uname -sr); $("$H5SHUF" --version 2>&1 | head -1)${OLD:+; OLD = $OLD}"
  echo "- protocol (BENCHMARKING.md): remove outputs, sync, sleep ${SETTLE} s, read the input, sync, then time; commands of a case interleaved, ${REPS} rounds; medians"
} >"$RESULTS.header"
printf '#case\tcommand\trep\twall_s\tpeak_rss_kib\n' >"$RESULTS.tsv"
cat "$RESULTS.header"

declare -A md5_seen
settle() { # inputs to read
  rm -rf "$out"; mkdir -p "$out"
  sync; sleep "$SETTLE"
  local f; for f in "$@"; do if [ -d "$f" ]; then cat "$f"/*.h5 >/dev/null; else cat "$f" >/dev/null; fi; done
  sync
}
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
# timed CASE NAME INPUT OUTPUT CHECK -- COMMAND...: CHECK is "oracle DSETS", "perm DSETS" or "-" (h5repack: none)
timed() {
  local case=$1 name=$2 input=$3 output=$4 check=$5 rep=$6; shift 7
  settle "$input"
  if ! /usr/bin/time -v -o "$WORK/time.txt" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
    tail -3 "$WORK/cmd.err" >&2; die "$case $name failed: $*"
  fi
  local elapsed rss wall verdict=""
  elapsed=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  wall=$(seconds "$elapsed")
  # the output's bytes: checked against the oracle the first time a command writes them; later rounds (and
  # the old build's run of the same command) must write the same bytes
  local key="$case/${name#old:}" sum
  sum=$(md5sum <"$output" | cut -d' ' -f1)
  if [ "$check" = - ]; then
    verdict="(not checked: a copy, not byte-reproducible)"
  elif [ -z "${md5_seen[$key]:-}" ]; then
    case $check in
      oracle*) verdict=$($PY "$cases_py" check "$input" "$output" "$SEED" ${check#oracle }) || { echo "$verdict"; die "$case $name: output failed its check"; } ;;
      perm*) verdict=$($PY "$cases_py" check-perm "$input" "$output" "$SEED" ${check#perm }) || { echo "$verdict"; die "$case $name: output failed its check"; } ;;
    esac
    md5_seen[$key]=$sum
  elif [ "${md5_seen[$key]}" != "$sum" ]; then
    die "$case $name round $rep: md5 $sum differs from the checked output's ${md5_seen[$key]}"
  else
    verdict="same bytes as the checked output"
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$case" "$name" "$rep" "$wall" "$rss" >>"$RESULTS.tsv"
  printf '%-7s %-14s round %d: %7.2f s %6d MiB  %s\n' "$case" "$name" "$rep" "$wall" $((rss / 1024)) "$verdict"
}
# shuf CASE NAME INPUT OUTPUT CHECK REP -- ARGS...: h5shuf (and the old build, when OLD is set)
shuf() {
  local case=$1 name=$2 input=$3 output=$4 check=$5 rep=$6; shift 7
  timed "$case" "$name" "$input" "$output" "$check" "$rep" -- "$H5SHUF" -q -s "$SEED" -t "$out" "$@"
  if [ -n "$OLD" ] && [[ " $OLD_CASES " == *" $case "* ]]; then
    timed "$case" "old:$name" "$input" "$output" "$check" "$rep" -- "$OLD" -q -s "$SEED" -t "$out" "$@"
  fi
}

echo "== runs (SETTLE=$SETTLE s before each)"
for rep in $(seq 1 "$REPS"); do
  if has xy; then
    in=$data/xy-gzip4.h5
    shuf xy X "$in" "$out/o.h5" "oracle data" "$rep" -- -m 128M "$in:/data" "$out/o.h5"
    shuf xy X+y "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 128M "$in:/data,/label" "$out/o.h5"
    timed xy h5repack "$in" "$out/o.h5" - "$rep" -- h5repack -f GZIP=4 "$in" "$out/o.h5"
  fi
  if has raw; then
    in=$data/xy-none.h5
    shuf raw X+y-128M "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 128M "$in:/data,/label" "$out/o.h5"
    shuf raw X+y-2G "$in" "$out/o.h5" "oracle data label" "$rep" -- -m 2G "$in:/data,/label" "$out/o.h5"
    timed raw in-memory "$in" "$out/o.h5" "perm data label" "$rep" -- $PY "$cases_py" perm "$in" "$out/o.h5" "$SEED" data label
  fi
  if has small; then
    in=$data/small16.h5
    shuf small 16B-128M "$in" "$out/o.h5" "oracle data" "$rep" -- -m 128M "$in:/data" "$out/o.h5"
    timed small in-memory "$in" "$out/o.h5" "perm data" "$rep" -- $PY "$cases_py" perm "$in" "$out/o.h5" "$SEED" data
  fi
  if has images; then
    in=$data/img-auto.h5
    shuf images auto-j2 "$in" "$out/o.h5" "oracle images labels" "$rep" -- -m 128M -j 2 "$in:/images,/labels" "$out/o.h5"
    shuf images auto-j1 "$in" "$out/o.h5" "oracle images labels" "$rep" -- -m 128M -j 1 "$in:/images,/labels" "$out/o.h5"
    in=$data/img-rows.h5
    shuf images rows-j2 "$in" "$out/o.h5" "oracle images labels" "$rep" -- -m 128M -j 2 "$in:/images,/labels" "$out/o.h5"
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
