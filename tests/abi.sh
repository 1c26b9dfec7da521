#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# abi.sh - programs built with other releases' headers, run with this build's shared library
# (include/h5shuf.h, "The ABI").
#
#  - A program of the first release (tests/abi/old_caller.c, built with its header and linked, as then,
#    against libh5shuf.so.0: tests/abi/stub0.c stands in for that library at link time)
#    must either work with this library (a shuffle with seed 7 that writes the tool's bytes, its plan read
#    without a byte written past its structs) or not load at all, the loader refusing for want of
#    libh5shuf.so.0.  Anything else (a crash, a missing symbol, a wrong plan) fails: a library of that
#    SONAME that lays its structs out otherwise.
#  - A program of this header (tests/abi/sized_caller.c) passes its structs as earlier and later
#    releases' programs would (struct_size smaller, larger, 0) and checks what the library reads and
#    writes of them; its shuffles must write the tool's bytes too.
#  - The library's SONAME is not 0.1.0's, and its file name is no file name of another SONAME.
# The library is copied alone into a directory of its own under its SONAME, as an installed one is, so a
# build tree's older files (a libh5shuf.so.0 link left by an earlier build) play no part.
# The first release's header is kept as it was, byte for byte, gzip'ed (tests/abi/h5shuf-0.1.0.h.gz): its
# comments cite a contract outside the repository, and the kept copy is a record, not a live reference.
# It is unpacked here and checked against its SHA-256 (include/h5shuf.h of 0.1.0, commit 9e2437a).
#
# usage: tests/abi.sh CC SOURCE_DIR LIBH5SHUF_SO H5SHUF GENDATA [--sanitized]
# Each check prints PASS or FAIL; the last line is "N passed, M failed".
set -uo pipefail
cc=$1 src=$(realpath "$2") lib=$(realpath "$3") H=$(realpath "$4") GEN=$(realpath "$5")
cflags=(-std=c11 -Wall -Wextra -Werror -O1)
if [ "${6:-}" = --sanitized ]; then
  cflags+=(-fsanitize=address,undefined)
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # (HDF5's state is not freed at exit)
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
check() { # check NAME COMMAND...: PASS when COMMAND succeeds (its output shown on failure)
  local name=$1
  shift
  if "$@" >"$tmp/last.log" 2>&1; then pass "$name"; else fail "$name: $(tail -5 "$tmp/last.log" | tr '\n' ' ')"; fi
}

# The library as installed: alone, under its SONAME, with the link a compiler's -lh5shuf finds.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
check "the library's SONAME ($soname) is not the first release's (libh5shuf.so.0)" \
  bash -c "[ -n '$soname' ] && [ '$soname' != libh5shuf.so.0 ]"
check "its file ($(basename "$lib")) is named after its SONAME (no other SONAME's library can have that name)" \
  bash -c "case '$(basename "$lib")' in '$soname'.*) true ;; *) false ;; esac"
mkdir -p "$tmp/new" "$tmp/lib0" "$tmp/cli" "$tmp/old" "$tmp/sized"
cp -L "$lib" "$tmp/new/$soname" && ln -s "$soname" "$tmp/new/libh5shuf.so" || exit 1

# The first release's header, as it was.
mkdir -p "$tmp/abi0"
gzip -dc "$src/tests/abi/h5shuf-0.1.0.h.gz" >"$tmp/abi0/h5shuf-0.1.0.h" || exit 1
check "tests/abi/h5shuf-0.1.0.h.gz is 0.1.0's include/h5shuf.h byte for byte (SHA-256)" bash -c \
  "sha256sum '$tmp/abi0/h5shuf-0.1.0.h' | grep -q '^49cbc2057234bfc1de3cf7ecb8e6085a0f5b82401272fbd68f19374ca29aefec '"

rows=3000
"$GEN" floats "$tmp/in.h5" $rows 16 4 >/dev/null || exit 1
(cd "$tmp/cli" && "$H" -q -s 7 -m 64M -j 1 ../in.h5 out.h5) || { echo "FAIL the tool's reference shuffle\n"; exit 1; }

# The first release's program, linked as it was then (against libh5shuf.so.0).
check "old_caller.c builds with 0.1.0's header against a libh5shuf.so.0" bash -c "
  '$cc' -shared -fPIC -I'$tmp/abi0' -Wl,-soname,libh5shuf.so.0 -o '$tmp/lib0/libh5shuf.so.0' '$src/tests/abi/stub0.c' &&
  ln -s libh5shuf.so.0 '$tmp/lib0/libh5shuf.so' &&
  '$cc' ${cflags[*]} -I'$tmp/abi0' -o '$tmp/old_caller' '$src/tests/abi/old_caller.c' -L'$tmp/lib0' -lh5shuf"
check "... and needs libh5shuf.so.0, as 0.1.0's programs do" bash -c "[ \"\$(readelf -d '$tmp/old_caller' | grep -c 'NEEDED.*libh5shuf.so.0')\" = 1 ]"
(cd "$tmp/old" && LD_LIBRARY_PATH="$tmp/new" ./../old_caller ../in.h5 out.h5 $rows >out.txt 2>err.txt)
rc=$?
if [ $rc = 0 ] && [ "$(cat "$tmp/old/out.txt")" = "ok $rows 7" ] && cmp -s "$tmp/old/out.h5" "$tmp/cli/out.h5"; then
  pass "0.1.0's program runs with this library: seed 7, its plan read, the tool's bytes"
elif [ $rc = 127 ] && grep -q 'libh5shuf\.so\.0: cannot open shared object file' "$tmp/old/err.txt" &&
  [ ! -e "$tmp/old/out.h5" ]; then
  pass "0.1.0's program does not load with this library: the loader finds no libh5shuf.so.0 ($soname here)"
else
  fail "0.1.0's program neither works nor is refused by the SONAME: exit $rc, $(cat "$tmp/old/out.txt" "$tmp/old/err.txt" | head -3 | tr '\n' ' ')"
fi

# This header's program, its structs as other releases' programs pass them.
check "sized_caller.c builds with this header against the library" \
  "$cc" "${cflags[@]}" -I"$src/include" -o "$tmp/sized_caller" "$src/tests/abi/sized_caller.c" -L"$tmp/new" -lh5shuf \
  -Wl,-rpath,"$tmp/new"
check "... and needs $soname" bash -c "[ \"\$(readelf -d '$tmp/sized_caller' | sed -n 's/.*(NEEDED).*\[\(libh5shuf[^]]*\)\].*/\1/p')\" = '$soname' ]"
(cd "$tmp/sized" && ../sized_caller ../in.h5 $rows >out.txt 2>&1)
rc=$?
sed 's/^/    /' "$tmp/sized/out.txt"
if [ $rc = 0 ] && ! grep -q '^not ok' "$tmp/sized/out.txt"; then pass "sized_caller's checks pass"; else
  fail "sized_caller: exit $rc, $(grep -c '^not ok' "$tmp/sized/out.txt") checks failed"; fi
check "an earlier struct's options shuffle to the tool's bytes" cmp "$tmp/sized/out-small.h5" "$tmp/cli/out.h5"
check "a later struct's options (nothing set past today's) shuffle to the tool's bytes" \
  cmp "$tmp/sized/out-newer.h5" "$tmp/cli/out.h5"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
