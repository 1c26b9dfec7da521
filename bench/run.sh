#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh - h5shuf against the alternatives (issue 5), following docs/benchmark.md's "Protocol".
# docs/benchmark.md explains the methods, the checks and the table.
#
#   bash bench/run.sh                 the default matrix (about 40 minutes on 2 cores)
#   SIZES="1G 4G" FILTERS="none gzip4 zstd3" ROWS="1K 64K" bash bench/run.sh     the full matrix
#   MATRIX="64M:gzip4:1K 64M:none:64K" SETTLE=1 REPS=1 bash bench/run.sh         a quick look
#
# Settings (environment):
#   MATRIX    datasets as SIZE:FILTER:ROW (default "1G:gzip4:1K 1G:none:1K 4G:none:1K"); SIZE with a K/M/G
#             suffix (binary), FILTER none|gzip4|zstd3, ROW the bytes of a row (1K = 256 float32, 64K)
#   SIZES, FILTERS, ROWS   any of them set: the matrix is their cross product instead (defaults 1G, none
#             gzip4, 1K for the ones not set)
#   METHODS   "h5shuf h5repack h5py shuf terashuf" (default: all; shuf and terashuf run on FILTER none only,
#             terashuf only when it is on PATH)
#   REPS=3    interleaved rounds; SETTLE=25 seconds of sleep before each timed command
#   MEMORY=128M  h5shuf --memory (and terashuf's budget); SEED=1; H5SHUF_ARGS extra h5shuf options
#   WORK=/tmp/h5shuf-bench   generated data (kept, reused) and outputs (removed)
#   RESULTS=bench/results/<UTC time>   the table goes to RESULTS.md, every run to RESULTS.tsv
#   BUILD=build  where h5shuf is built (scripts/build.sh runs first unless NO_BUILD=1); H5SHUF overrides
#             the binary that is timed
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
helpers=$root/bench/bench.py

die() { echo "run.sh: $*" >&2; exit 1; }
bytes_of() { # 1K 64M 4G -> bytes (binary suffixes)
  local n=${1%[KMGkmg]} s=${1: -1}
  [[ $n =~ ^[0-9]+$ ]] || die "bad size '$1' (a number with a K, M or G suffix)"
  case $s in K|k) echo $((n << 10));; M|m) echo $((n << 20));; G|g) echo $((n << 30));; *) die "bad size '$1'";; esac
}

# --- settings
if [ -n "${SIZES:-}${FILTERS:-}${ROWS:-}" ]; then
  MATRIX=""
  for s in ${SIZES:-1G}; do for f in ${FILTERS:-none gzip4}; do for r in ${ROWS:-1K}; do
    MATRIX+="$s:$f:$r "
  done; done; done
fi
MATRIX=${MATRIX:-"1G:gzip4:1K 1G:none:1K 4G:none:1K"}
METHODS=${METHODS:-"h5shuf h5repack h5py shuf terashuf"}
REPS=${REPS:-3}
SETTLE=${SETTLE:-25}
MEMORY=${MEMORY:-128M}
SEED=${SEED:-1}
H5SHUF_ARGS=${H5SHUF_ARGS:-}
WORK=${WORK:-/tmp/h5shuf-bench}
RESULTS=${RESULTS:-$root/bench/results/$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
[[ $SETTLE =~ ^[0-9]+$ ]] || die "SETTLE must be a number of seconds"
for m in $METHODS; do
  case $m in h5shuf|h5repack|h5py|shuf|terashuf) ;; *) die "unknown method '$m'";; esac
done

# --- tools
if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "== building h5shuf (scripts/build.sh into $BUILD)"
  H5SHUF_BUILD_TESTS=ON H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
fi
H5SHUF=${H5SHUF:-$BUILD/h5shuf}
GENDATA=$BUILD/h5shuf_gendata
export HDF5_PLUGIN_PATH=$BUILD/plugins  # h5repack and h5py read and write zstd through the plugin
for t in "$H5SHUF" "$GENDATA" /usr/bin/time h5repack "$PY"; do
  command -v "$t" >/dev/null || die "$t not found (scripts/test.sh installs what is needed)"
done
[ -e "$HDF5_PLUGIN_PATH/libh5shuf_zstd.so" ] || die "no zstd plugin in $HDF5_PLUGIN_PATH"
has() { [[ " $METHODS " == *" $1 "* ]]; }
text_methods=""
for m in shuf terashuf; do
  if has $m; then
    if command -v $m >/dev/null; then text_methods+="$m "; else echo "== $m is not on PATH: skipped"; fi
  fi
done

data=$WORK/data
out=$WORK/out
mkdir -p "$data" "$(dirname "$RESULTS")"
rm -rf "$out"
trap 'rm -rf "$out"' EXIT

# --- the header of the results
started=$(date +%s)
mem_bytes=$(bytes_of "$MEMORY")
threads="h5shuf has no -j option here (serial codecs)"
"$H5SHUF" --help 2>&1 | grep -q -- '--threads' && threads="h5shuf -j not given: its default, all $(nproc) cores"
{
  echo "# h5shuf benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, $(uname -sr)"
  echo "- $("$H5SHUF" --version 2>&1 | head -1); $threads; options: -m $MEMORY -s $SEED ${H5SHUF_ARGS}"
  echo "- $(h5repack -V 2>&1 | head -1); $(shuf --version | head -1); terashuf: $(command -v terashuf || echo 'not installed, not measured')"
  echo "- $($PY -c 'import sys, numpy, h5py; print("python %s, numpy %s, h5py %s" % (sys.version.split()[0], numpy.__version__, h5py.__version__))')"
  echo "- protocol (docs/benchmark.md): before each timed command remove old outputs, sync, sleep ${SETTLE} s, read the input, sync; methods interleaved, ${REPS} rounds"
  echo "- data: float32 rounded to 1/256, 1 MiB chunks (testdata/gendata.c); every output checked (docs/benchmark.md)"
  echo "- matrix: $MATRIX"
} >"$RESULTS.header"
printf '#memory\t%s\n#dataset\tbytes\tmethod\trep\twall_s\tpeak_rss_kib\n' "$MEMORY" >"$RESULTS.tsv"
cat "$RESULTS.header"
echo

# --- data: generated once into $data, reused by later runs
h5_of() { echo "$data/floats-$1-$3-$2.h5"; }  # size filter row
txt_of() { echo "$data/floats-$1-$2.txt"; }    # size row
make_h5() { # size filter row
  local path; path=$(h5_of "$1" "$2" "$3")
  [ -e "$path" ] && return 0
  local rows=$(( $(bytes_of "$1") / $(bytes_of "$3") )) cols=$(( $(bytes_of "$3") / 4 ))
  (( rows * cols * 4 == $(bytes_of "$1") && rows > 0 && cols > 0 )) || die "$1 is not a whole number of $3 rows"
  echo "== generating $(basename "$path")"
  case $2 in
    none)  "$GENDATA" floats "$path.tmp" "$rows" "$cols" ;;
    gzip4) "$GENDATA" floats "$path.tmp" "$rows" "$cols" 4 ;;
    zstd3) make_h5 "$1" none "$3"; h5repack -f UD=32015,0,1,3 "$(h5_of "$1" none "$3")" "$path.tmp" ;;
    *) die "unknown filter '$2' (none, gzip4, zstd3)" ;;
  esac
  $PY "$helpers" check-input "$path.tmp" "$2" "$rows" "$cols" || die "generated data failed its check"
  mv "$path.tmp" "$path"
}
make_txt() { # size row
  local path; path=$(txt_of "$1" "$2")
  [ -e "$path" ] && [ -e "$path.mhash" ] && return 0
  make_h5 "$1" none "$2"
  echo "== writing $(basename "$path") (one base64 line per row)"
  $PY "$helpers" totext "$(h5_of "$1" none "$2")" "$path"
}
for spec in $MATRIX; do
  IFS=: read -r size filt row <<<"$spec"
  [ -n "$row" ] || die "bad matrix entry '$spec' (SIZE:FILTER:ROW)"
  make_h5 "$size" "$filt" "$row"
  [ "$filt" = none ] && [ -n "$text_methods" ] && make_txt "$size" "$row"
done

# --- one timed command: settle, time, check
repack_filter() { case $1 in none) echo NONE;; gzip4) echo GZIP=4;; zstd3) echo UD=32015,0,1,3;; esac; }
settle() { # the input the command reads
  rm -rf "$out"; mkdir -p "$out"
  sync; sleep "$SETTLE"; cat "$1" >/dev/null; sync
}
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
run_one() { # dataset-label bytes method filter input-h5 input-txt rep
  local label=$1 nbytes=$2 m=$3 filt=$4 in=$5 txt=$6 rep=$7 o src cmd check
  case $m in
    h5shuf)   o=$out/h5shuf.h5; src=$in
              # shellcheck disable=SC2206  # H5SHUF_ARGS is a list of options
              cmd=("$H5SHUF" -q -s "$SEED" -m "$MEMORY" -t "$out" $H5SHUF_ARGS "$in:/x" "$o:/x")
              check=(check-h5shuf "$in" "$o" "$filt" "$SEED") ;;
    h5repack) o=$out/h5repack.h5; src=$in
              cmd=(h5repack -f "$(repack_filter "$filt")" "$in" "$o"); check=(check-copy "$in" "$o" "$filt") ;;
    h5py)     o=$out/h5py.h5; src=$in
              cmd=("$PY" "$root/bench/h5py_perm.py" "$in" "$o" "$filt" "$SEED")
              check=(check-h5py "$in" "$o" "$filt" "$SEED") ;;
    shuf)     o=$out/shuf.txt; src=$txt
              cmd=(shuf -o "$o" "$txt"); check=(check-text "$txt" "$o") ;;
    terashuf) o=$out/terashuf.txt; src=$txt
              # shellcheck disable=SC2016  # $1 and $2 are sh -c's arguments
              cmd=(env TMPDIR="$out" MEMORY="$(awk -v b="$mem_bytes" 'BEGIN { printf "%.4f", b / 2^30 }')"
                   sh -c 'exec terashuf <"$1" >"$2"' terashuf "$txt" "$o")
              check=(check-text "$txt" "$o") ;;
  esac
  settle "$src"
  if ! /usr/bin/time -v -o "$WORK/time.txt" "${cmd[@]}" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
    echo "run.sh: $m on $label failed: ${cmd[*]}" >&2
    tail -5 "$WORK/cmd.err" >&2
    exit 1
  fi
  local elapsed wall rss verdict
  elapsed=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  [[ $elapsed =~ ^[0-9:.]+$ && $rss =~ ^[0-9]+$ ]] || die "could not read /usr/bin/time's report ($WORK/time.txt)"
  wall=$(seconds "$elapsed")
  verdict=$($PY "$helpers" "${check[@]}") || { echo "$verdict"; die "$m on $label: the output failed its check"; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$nbytes" "$m" "$rep" "$wall" "$rss" >>"$RESULTS.tsv"
  printf '%-12s %-9s round %d: %8.2f s %8d MiB   %s\n' "$label" "$m" "$rep" "$wall" $((rss / 1024)) "$verdict"
}

# --- the runs: per dataset, the methods interleaved (A B C A B C ...)
echo "== runs (SETTLE=$SETTLE s before each)"
for spec in $MATRIX; do
  IFS=: read -r size filt row <<<"$spec"
  methods=""
  for m in h5shuf h5repack h5py; do has $m && methods+="$m "; done
  [ "$filt" = none ] && methods+=$text_methods
  for rep in $(seq 1 "$REPS"); do
    for m in $methods; do
      run_one "$size-$filt-$row" "$(bytes_of "$size")" "$m" "$filt" "$(h5_of "$size" "$filt" "$row")" \
        "$(txt_of "$size" "$row")" "$rep"
    done
  done
done

echo
$PY "$helpers" table "$RESULTS.tsv" "$RESULTS.header" >"$RESULTS.md"
rm -f "$RESULTS.header"
cat "$RESULTS.md"
echo
echo "results: $RESULTS.md (every run: $RESULTS.tsv); the whole run took $(( ($(date +%s) - started + 30) / 60 )) min"
