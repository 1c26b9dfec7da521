#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# durable.sh - every output reaches the disk before its name does: under strace, each finished file
# (the output; each shard; a scatter's pile file; one replacing an existing file with --force) is
# fsync'ed through a descriptor of its temporary file before the linkat() (of /proc/self/fd/N) or
# renameat() that gives it its final name, and its directory is fsync'ed after that; the scratch file is
# never fsync'ed.  (strace -y names the file or directory of each descriptor.)
# Usage: bash tests/durable.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata   (needs strace)
set -u
H=$1 GEN=$2
command -v strace >/dev/null || { echo "not ok - strace is not installed (scripts/test.sh installs it)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-durable.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$GEN" floats "$W/in.h5" 20000 16 1 || exit 1
mkdir "$W/out" "$W/scratch"
failed=0
# check NAME FINAL... -- COMMAND...: run COMMAND under strace, then check the order for each FINAL path
check() {
    local name=$1; shift
    local finals=()
    while [ "$1" != -- ]; do finals+=("$1"); shift; done
    shift
    # (LeakSanitizer cannot run under ptrace: off for the traced run of a sanitizer build)
    if ! ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -y -e trace=openat,open,fsync,fdatasync,link,linkat,rename,renameat,renameat2,close \
            -o "$W/trace" "$@" >/dev/null 2>"$W/err"; then
        echo "not ok - $name: the run failed"; sed 's/^/#   /' "$W/err"; failed=$((failed + 1)); return
    fi
    if /usr/bin/python3 - "$W/trace" "$W/scratch" "${finals[@]}" <<'PY'; then echo "ok - $name"; else failed=$((failed + 1)); echo "not ok - $name"; fi
import os, re, sys
trace, scratch, finals = sys.argv[1], sys.argv[2], sys.argv[3:]
fds = {}      # (pid, fd) -> (path, is a directory)
events = []   # (kind, path[, path2])
alias = {}    # a name linked to a file -> the file's temporary name
def fdpath(pid, a):  # a descriptor argument "5</path>" (or AT_FDCWD)
    m = re.match(r'\s*(\d+)<([^>]*)>', a)
    return m.group(2) if m else os.getcwd()
def target(pid, dirarg, name):  # the path a *at call names
    m = re.match(r'/proc/self/fd/(\d+)$', name)
    if m:
        return fds.get((pid, int(m.group(1))), ('?', False))[0]
    return os.path.normpath(os.path.join(fdpath(pid, dirarg), name))
for line in open(trace):
    m = re.match(r'(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)(?:<([^>]*)>)?', line)
    if not m:
        continue
    pid, call, args, ret, retpath = m.group(1), m.group(2), m.group(3), int(m.group(4)), m.group(5)
    parts = re.findall(r'(?:"(?:[^"\\]|\\.)*"|[^,])+', args)  # the arguments, split at commas outside strings
    unq = lambda a: re.match(r'\s*"((?:[^"\\]|\\.)*)"', a).group(1)
    if call in ('open', 'openat') and ret >= 0:
        fds[(pid, ret)] = (os.path.normpath(retpath or unq(parts[-2 if call == 'open' else 1])), 'O_DIRECTORY' in args)
    elif call in ('fsync', 'fdatasync') and ret == 0:
        fd = int(re.match(r'\s*(\d+)', parts[0]).group(1))
        path, isdir = fds.get((pid, fd), (fdpath(pid, parts[0]), False))
        events.append(('syncdir' if isdir else 'sync', os.path.normpath(path)))
    elif call in ('link', 'rename') and ret == 0:
        events.append(('move', os.path.normpath(unq(parts[0])), os.path.normpath(unq(parts[1]))))
    elif call in ('linkat', 'renameat', 'renameat2') and ret == 0:
        src, dst = target(pid, parts[0], unq(parts[1])), target(pid, parts[2], unq(parts[3]))
        events.append(('move', alias.get(src, src), dst))
        if call == 'linkat':  # a second name of the file (--force renames it onto the final name)
            alias[dst] = alias.get(src, src)
ok = True
for final in map(os.path.normpath, finals):
    moves = [i for i, e in enumerate(events) if e[0] == 'move' and e[2] == final]
    if len(moves) != 1:
        print(f'#   {final}: {len(moves)} link/rename into place'); ok = False; continue
    i, tmp = moves[0], events[moves[0]][1]
    if not any(e == ('sync', tmp) for e in events[:i]):
        print(f'#   {final}: no fsync of {tmp} before it was moved into place'); ok = False
    if not any(e == ('syncdir', os.path.dirname(final)) for e in events[i + 1:]):
        print(f'#   {final}: no fsync of its directory after it was moved into place'); ok = False
for e in events:
    if e[0] == 'sync' and e[1].startswith(os.path.normpath(scratch) + '/'):
        print(f'#   the scratch file {e[1]} was fsync\'ed'); ok = False
sys.exit(0 if ok else 1)
PY
}
O=$W/out S=$W/scratch
check "one output (link into place)" "$O/a.h5" -- "$H" -q -s 1 -m 4M -t "$S" "$W/in.h5" "$O/a.h5"
check "--force over an existing file (rename)" "$O/a.h5" -- "$H" -q -s 2 -m 4M -t "$S" --force "$W/in.h5" "$O/a.h5"
check "three shards" "$O/sh-00000-of-00003.h5" "$O/sh-00001-of-00003.h5" "$O/sh-00002-of-00003.h5" -- \
    "$H" -q -s 1 -m 4M -t "$S" --shards 3 "$W/in.h5" "$O/sh.h5"
check "scatter's pile file" "$O/piles.h5" -- "$H" scatter -q -s 1 -m 4M -t "$S" "$W/in.h5" "$O/piles.h5"
check "gather" "$O/g.h5" -- "$H" gather -q -t "$S" "$O/piles.h5" "$O/g.h5"
[ "$failed" -eq 0 ]
