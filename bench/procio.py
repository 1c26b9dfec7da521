#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""procio.py OUT CMD [ARG...]: run CMD as a child, and when it has exited (a zombie, not yet reaped:
waitid WNOWAIT) copy its final /proc/PID/io counters to OUT, then reap it and exit with its status.

Of a process that has exited, /proc/PID/io holds the totals of all its threads and of the children it
reaped, so `procio.py OUT /usr/bin/time -v -o T CMD` counts CMD's I/O (plus time's own few hundred bytes)
while time still measures CMD alone.  The counters (Linux task I/O accounting):
  rchar, wchar    bytes through read/write/pread/pwrite/... system calls: files (page-cache hits
                  included), pipes and sockets; not memory maps nor shared memory (Open MPI's sm/vader
                  transport and its single-copy process_vm_readv are not in them)
  read_bytes      bytes this process caused to be fetched from the block device
  write_bytes     bytes this process dirtied in the page cache for the block device, counted when dirtied;
  cancelled_write_bytes  of those, the ones never written because the file was truncated or deleted first
bench/mpi.sh reports rchar/wchar as bytes read/written and write_bytes - cancelled_write_bytes as bytes
bound for the disk."""
import os
import signal
import sys

out, cmd = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a terminated job ends the child too
    signal.signal(s, lambda sig, _: os.kill(pid, sig))
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
try:
    with open(f"/proc/{pid}/io") as f:
        io = f.read()
except OSError as e:
    io = f"error: {e}\n"
_, status = os.waitpid(pid, 0)
with open(out, "w") as f:
    f.write(io)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
