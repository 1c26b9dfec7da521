#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/outofcore.sh - larger than memory for real (issue 52): 20 GiB of 1032-byte rows (/data float32 x 256
# with /label int64), raw and gzip-4, shuffled at -m 4G with the page cache dropped before every timed command
# (`sync; echo 3 > /proc/sys/vm/drop_caches`: run as root), side by side in one run with
#   - terashuf at MEMORY=4 (GiB, its unit) on the same rows as text lines of the same length (1032 bytes);
#   - the disk floor: two sequential copies (dd, read + write, fsync'ed), the second of the first's copy, as
#     h5shuf's pass 2 reads what pass 1 wrote, each cold;
#   - the CPU floor of the gzip-4 file (bench/cpufloor.c: every chunk inflated and deflated again on every
#     core, nothing written);
#   - the h5py/numpy in-memory shuffle (bench/cases.py perm) where it fits: input and output held whole, it
#     runs only when 2.5 times the rows' bytes are available (MemAvailable), and the table says when it did not.
# Each command's wall, user and system CPU, bytes read and written (/proc/PID/io, bench/procio.py: through
# system calls, and to or from the disk), peak RSS, the 1-minute load when it started, and h5shuf's two
# passes (its -v lines).  Every h5shuf output is checked at 4096 positions against the contract's order
# (bench/outofcore.py check-h5) and its md5 against a second h5shuf run at MEMORY2; terashuf's output is
# checked to be a permutation of its input's lines (every row number once, the same multiset hash).
# The cases run one at a time and delete what each made (data, copies, outputs), so the disk must hold
# about 3 times the rows' bytes (the raw input, scratch and output; the text, terashuf's temporary files
# and its output; the input and two copies): `df` is checked first, and when that does not fit beside
# MARGIN_GB the rows are scaled to what does, which the header says.
#
#   TERASHUF=/path/to/terashuf bash bench/outofcore.sh      the full run (about 1.5-2 hours on 2 cores)
#   SMALL=1 TERASHUF=... bash bench/outofcore.sh            a smoke run: 128 Ki rows (135 MB), -m 32M / 16M,
#                                                           terashuf MEMORY=0.03125 (a few minutes)
# terashuf is not part of h5shuf and is never committed: get it with
#   git clone https://github.com/alexandres/terashuf /some/dir/terashuf && make -C /some/dir/terashuf
# (outside this project) and give its path in TERASHUF (without it, case text is skipped and said so).
#
# Settings: CASES (default "raw text gzip4"), GIB=20 (the rows: GIB x 2^20 of them), MEMORY=4G (h5shuf -m),
# MEMORY2=2G (the second h5shuf run of each file, whose output must be the same bytes), TS_MEMORY (terashuf's
# MEMORY, default MEMORY in GiB), SEED=1, MARGIN_GB=8 (disk left free for everything else), WORK (default
# /var/tmp/h5shuf-ooc: data, scratch, outputs; on the disk being measured), BUILD=build (NO_BUILD=1: not
# rebuilt), H5SHUF, CPUFLOOR, TERASHUF, H5SHUF_ARGS (more h5shuf options), MAX_LOAD (wait before each timed
# command until the 1-minute load is below it, at most 30 minutes), RESULTS=bench/results/outofcore-<UTC time>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
helper=$root/bench/outofcore.py
die() { echo "outofcore.sh: $*" >&2; exit 1; }

SMALL=${SMALL:-0}
CASES=${CASES:-"raw text gzip4"}
GIB=${GIB:-20}
MEMORY=${MEMORY:-4G}
MEMORY2=${MEMORY2:-2G}
if [ "$SMALL" = 1 ]; then MEMORY=${MEMORY_SMALL:-32M} MEMORY2=${MEMORY2_SMALL:-16M}; fi
SEED=${SEED:-1}
MARGIN_GB=${MARGIN_GB:-8}
WORK=${WORK:-/var/tmp/h5shuf-ooc}
RESULTS=${RESULTS:-$root/bench/results/outofcore-$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "== building h5shuf (scripts/build.sh into $BUILD)"
  H5SHUF_BUILD_TESTS=ON H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
fi
H5SHUF=${H5SHUF:-$BUILD/h5shuf}
CPUFLOOR=${CPUFLOOR:-$BUILD/h5shuf_cpufloor}
TERASHUF=${TERASHUF:-}
has() { [[ " $CASES " == *" $1 "* ]]; }
bytes_of() { # 4G, 512M, 64K or bytes
  local v=${1%[KkMmGg]} u=${1: -1}
  case $u in K|k) echo $((v << 10));; M|m) echo $((v << 20));; G|g) echo $((v << 30));; *) echo "$1";; esac
}
[ "$(id -u)" = 0 ] || die "run as root: the page cache is dropped before every timed command (/proc/sys/vm/drop_caches)"
for t in "$H5SHUF" /usr/bin/time dd md5sum "$PY" $(has gzip4 && echo "$CPUFLOOR"); do
  command -v "$t" >/dev/null || die "$t not found"
done
if has text; then
  if [ -z "$TERASHUF" ] || [ ! -x "$TERASHUF" ]; then
    echo "== terashuf: TERASHUF is not an executable (${TERASHUF:-unset}): case text skipped. To get it:"
    echo "   git clone https://github.com/alexandres/terashuf DIR && make -C DIR   (outside this project), then TERASHUF=DIR/terashuf"
    CASES=${CASES/text/}
  fi
fi
mem_bytes=$(bytes_of "$MEMORY")
TS_MEMORY=${TS_MEMORY:-$(awk -v b="$mem_bytes" 'BEGIN { printf "%.6g", b / 1073741824 }')}

# --- how many rows: GIB x 2^20 (SMALL: 2^17), scaled down to what 3 times fits beside MARGIN_GB
ROW=1032 BLOCK=65536
rows=$((GIB << 20))
[ "$SMALL" = 1 ] && rows=$((1 << 17))
mkdir -p "$WORK" "$(dirname "$RESULTS")"
rm -rf "${WORK:?}/out" "$WORK/tmp" "$WORK"/*.h5 "$WORK"/*.txt "$WORK"/*.copy
free_b=$(df -B1 --output=avail "$WORK" | tail -1 | tr -d ' ')
fit_rows=$(( (free_b - (MARGIN_GB << 30)) / 3 / ROW / BLOCK * BLOCK ))
scaled=""
if [ "$fit_rows" -lt "$rows" ]; then
  [ "$fit_rows" -ge "$BLOCK" ] || die "$WORK: $((free_b >> 30)) GiB free, too little beside MARGIN_GB=$MARGIN_GB"
  scaled="scaled from $rows rows: $((free_b >> 30)) GiB free on $WORK, 3 times the rows' bytes must fit beside $MARGIN_GB GiB"
  rows=$fit_rows
fi
data_b=$((rows * ROW))
avail_b=$(awk '/^MemAvailable:/ { printf "%d", $2 * 1024 }' /proc/meminfo)

out=$WORK/out tmp=$WORK/tmp
trap 'rm -rf "$out" "$tmp" "$WORK"/*.copy' EXIT
{
  echo "# h5shuf larger than memory (issue 52), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, $(uname -sr); $("$H5SHUF" --version 2>&1 | head -1); commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "- rows: $rows of $ROW bytes ($(awk -v b=$data_b 'BEGIN { printf "%.2f GB, %.2f GiB", b / 1e9, b / 1073741824 }'))${scaled:+, **$scaled**}; $WORK on $(df --output=source "$WORK" | tail -1), $((free_b >> 30)) GiB free at the start"
  echo "- h5shuf -m $MEMORY (and -m $MEMORY2 for the md5 check) -t $WORK/tmp${H5SHUF_ARGS:+ $H5SHUF_ARGS}; terashuf MEMORY=$TS_MEMORY SEED=$SEED; page cache dropped before every timed command; one round"
  echo "- budget bytes: $mem_bytes"
  if [ "$SMALL" = 1 ]; then echo "- **SMALL=1: a smoke run of the harness, the times mean nothing**"; fi
} >"$RESULTS.header"
printf '#case\tcommand\twall_s\tuser_s\tsys_s\trss_kib\trchar\twchar\tread_bytes\twrite_bytes\tpass1_s\tpass2_s\tload\tcheck\n' >"$RESULTS.tsv"
cat "$RESULTS.header"

cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
load1() { cut -d' ' -f1 /proc/loadavg; }
wait_load() {
  [ -n "${MAX_LOAD:-}" ] || return 0
  local waited=0
  while awk -v l="$(load1)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }' && [ $waited -lt 1800 ]; do
    sleep 30; waited=$((waited + 30))
  done
}
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
field() { sed -n "s/^[[:space:]]*$1: //p" "$2"; }
# timed CASE NAME -- COMMAND...: cold, then COMMAND timed; its row in the TSV (the check filled in by note)
timed() {
  local case=$1 name=$2; shift 3
  wait_load
  cold
  local load; load=$(load1)
  if ! $PY "$root/bench/procio.py" "$WORK/io.txt" /usr/bin/time -v -o "$WORK/time.txt" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
    tail -5 "$WORK/cmd.err" >&2; die "$case $name failed: $*"
  fi
  local wall user sys rss p1 p2 io
  wall=$(seconds "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$WORK/time.txt")")
  user=$(field 'User time (seconds)' "$WORK/time.txt")
  sys=$(field 'System time (seconds)' "$WORK/time.txt")
  rss=$(field 'Maximum resident set size (kbytes)' "$WORK/time.txt")
  p1=$(sed -n 's/^h5shuf: scatter: .* in \([0-9.]*\) s.*/\1/p' "$WORK/cmd.err")
  p2=$(sed -n 's/^h5shuf: gather: .* in \([0-9.]*\) s.*/\1/p' "$WORK/cmd.err")
  io=$(awk '{ v[$1] = $2 } END { printf "%.0f\t%.0f\t%.0f\t%.0f", v["rchar:"], v["wchar:"], v["read_bytes:"], v["write_bytes:"] - v["cancelled_write_bytes:"] }' "$WORK/io.txt")
  row="$case	$name	$wall	$user	$sys	$rss	$io	${p1:-}	${p2:-}	$load"
  printf '%-6s %-22s %8.1f s  user %7.1f  sys %6.1f  %6d MiB  load %s%s\n' "$case" "$name" "$wall" "$user" "$sys" \
    $((rss / 1024)) "$load" "${p1:+  passes $p1 + $p2 s}"
}
# note CHECK: the last timed command's row, with what its check said
note() { printf '%s\t%s\n' "$row" "$1" >>"$RESULTS.tsv"; echo "       $1"; }

# h5shuf_pair CASE INPUT: h5shuf at MEMORY, its output checked, then at MEMORY2, the same md5
h5shuf_pair() {
  local case=$1 in=$2 sum1 sum2 verdict
  rm -rf "$out" "$tmp"; mkdir -p "$out" "$tmp"
  # shellcheck disable=SC2086  # H5SHUF_ARGS: more options
  timed "$case" "h5shuf -m $MEMORY" -- "$H5SHUF" -v -s "$SEED" -t "$tmp" -m "$MEMORY" ${H5SHUF_ARGS:-} "$in:/data,/label" "$out/o.h5"
  verdict=$($PY "$helper" check-h5 "$in" "$out/o.h5" "$SEED") || { echo "$verdict"; die "$case: h5shuf's output failed its check"; }
  sum1=$(md5sum <"$out/o.h5" | cut -d' ' -f1)
  note "$verdict; md5 $sum1"
  rm -rf "$out" "$tmp"; mkdir -p "$out" "$tmp"
  # shellcheck disable=SC2086
  timed "$case" "h5shuf -m $MEMORY2" -- "$H5SHUF" -v -s "$SEED" -t "$tmp" -m "$MEMORY2" ${H5SHUF_ARGS:-} "$in:/data,/label" "$out/o.h5"
  sum2=$(md5sum <"$out/o.h5" | cut -d' ' -f1)
  [ "$sum1" = "$sum2" ] || die "$case: -m $MEMORY2's output has md5 $sum2, -m $MEMORY's $sum1"
  note "md5 the same as -m $MEMORY's"
  rm -rf "$out" "$tmp"
}
# disk_floor CASE INPUT: two cold sequential copies, the second of the first's
disk_floor() {
  local case=$1 in=$2
  timed "$case" "disk floor: copy 1" -- dd if="$in" of="$WORK/a.copy" bs=64M conv=fsync status=none
  cmp -s <(head -c 1048576 "$in") <(head -c 1048576 "$WORK/a.copy") || die "$case: the copy differs"
  note "dd bs=64M conv=fsync"
  timed "$case" "disk floor: copy 2" -- dd if="$WORK/a.copy" of="$WORK/b.copy" bs=64M conv=fsync status=none
  [ "$(stat -c %s "$WORK/b.copy")" = "$(stat -c %s "$in")" ] || die "$case: the second copy's size differs"
  note "dd bs=64M conv=fsync, of copy 1"
  rm -f "$WORK/a.copy" "$WORK/b.copy"
}
# in_memory CASE INPUT: the h5py/numpy in-memory shuffle, when 2.5 times the rows fit MemAvailable
in_memory() {
  local case=$1 in=$2 verdict
  if [ $((data_b / 2 * 5)) -gt "$avail_b" ]; then
    printf '%s\th5py/numpy in memory\t0\t0\t0\t0\t0\t0\t0\t0\t\t\t%s\tnot run: input and output held whole need about %s GB, %s GB available\n' \
      "$case" "$(load1)" "$((data_b * 5 / 2 / 1000000000))" "$((avail_b / 1000000000))" >>"$RESULTS.tsv"
    echo "$case   h5py/numpy in memory: does not fit ($((data_b * 5 / 2 >> 30)) GiB needed, $((avail_b >> 30)) GiB available): not run"
    return 0
  fi
  rm -rf "$out"; mkdir -p "$out"
  timed "$case" "h5py/numpy in memory" -- $PY "$root/bench/cases.py" perm "$in" "$out/o.h5" "$SEED" data label
  verdict=$($PY "$root/bench/cases.py" check-perm "$in" "$out/o.h5" "$SEED" data label) || { echo "$verdict"; die "$case: the in-memory output failed its check"; }
  note "$verdict"
  rm -rf "$out"
}

for case in $CASES; do
  case $case in
    raw|gzip4)
      filt=none; [ "$case" = gzip4 ] && filt=gzip4
      in=$WORK/rows-$filt.h5
      echo "== $case: generating $rows rows ($filt)"
      $PY "$helper" gen "$in" "$rows" "$filt"
      disk_floor "$case" "$in"
      if [ "$case" = gzip4 ]; then
        timed "$case" "CPU floor" -- "$CPUFLOOR" "$in" /data /label
        note "$(tail -1 "$WORK/cmd.out")"
      fi
      h5shuf_pair "$case" "$in"
      in_memory "$case" "$in"
      rm -f "$in"
      ;;
    text)
      in=$WORK/rows.txt
      echo "== text: generating $rows lines"
      $PY "$helper" text "$in" "$rows"
      rm -rf "$out" "$tmp"; mkdir -p "$out" "$tmp"
      timed text terashuf -- env TMPDIR="$tmp" MEMORY="$TS_MEMORY" SEED="$SEED" sh -c 'ulimit -n 65536; exec "$0" <"$1" >"$2"' "$TERASHUF" "$in" "$out/o.txt"
      verdict=$($PY "$helper" check-text "$in" "$out/o.txt") || { echo "$verdict"; die "text: terashuf's output failed its check"; }
      note "$verdict"
      rm -rf "$out" "$tmp" "$in" "$in.sum"
      ;;
    *) die "unknown case $case" ;;
  esac
done

echo
$PY "$helper" table "$RESULTS.tsv" "$RESULTS.header" >"$RESULTS.md"
rm -f "$RESULTS.header"
cat "$RESULTS.md"
echo "results: $RESULTS.md (every command: $RESULTS.tsv)"
