# SPDX-License-Identifier: BSD-3-Clause
"""_progress.py - what a run shows and records while the library reports rows done.

The library calls back after every block of work (a slab of pass 1, a band of pass 2: a few MiB) with the
phase and its rows done of its total.  Passes records each phase as it ran, for the report (the same
"passes" as the tool's --json: name, rows, bytes, seconds).  Display draws it for progress=True: one tqdm
bar per pass when tqdm is importable (Debian's python3-tqdm), else a plain line on stderr, redrawn in
place at most every 0.15 s on a terminal, and a summary line per finished pass in any case.
"""

import sys
import time

from . import _lib

REDRAW_SECONDS = 0.15


class Passes:
    """The phases of one run as they went (PHASE_CREATE, the files named before pass 1, is not one)."""

    def __init__(self, row_bytes):
        self.row_bytes = row_bytes
        self.records = []  # {"name", "rows", "bytes", "seconds"}, finished passes
        self.phase = None
        self.start = 0.0
        self.done = self.total = 0

    def update(self, phase, done, total):
        """Record a report; returns the record of the pass it ended, if any."""
        ended = None
        now = time.monotonic()
        if phase != self.phase:
            ended = self.finish(now)
            self.phase, self.start = phase, now
        self.done, self.total = done, total
        return ended

    def finish(self, now=None):
        """Close the current pass; returns its record (None when there was none)."""
        if self.phase is None:
            return None
        now = time.monotonic() if now is None else now
        # a scan of keys (select) reads no data: no bytes, as the CLI counts them
        row_bytes = 0 if self.phase == _lib.PHASE_SELECT else self.row_bytes
        rec = {"name": _lib.PHASE_NAMES[self.phase], "rows": self.done, "bytes": self.done * row_bytes,
               "seconds": round(now - self.start, 3)}
        self.records.append(rec)
        self.phase = None
        return rec


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class Display:
    """progress=True: a tqdm bar per pass, or a plain line on stream (stderr)."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.tqdm = _tqdm()
        self.bar = None
        self.last = 0.0
        self.drawn = False

    def update(self, name, done, total, row_bytes):
        """A report of pass `name`: done of total rows, row_bytes bytes each."""
        if self.tqdm is not None:
            if self.bar is None:
                self.bar = self.tqdm(total=total * row_bytes, desc=name, unit="B", unit_scale=True,
                                     file=self.stream, leave=True)
            self.bar.update(done * row_bytes - self.bar.n)
            return
        now = time.monotonic()
        if not self.stream.isatty() or now - self.last < REDRAW_SECONDS:
            return
        pct = 100.0 * done / total if total else 100.0
        self.stream.write("\r%s %3.0f%% %.0f/%.0f MB\033[K" % (name, pct, done * row_bytes / 1e6,
                                                             total * row_bytes / 1e6))
        self.stream.flush()
        self.last, self.drawn = now, True

    def end(self, rec):
        """A pass ended (rec: its record): close its bar, or clear the line and print its summary."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
            return
        if self.drawn:
            self.stream.write("\r\033[K")
            self.drawn = False
        mb = rec["bytes"] / 1e6
        self.stream.write("h5shuf: %s: %d rows, %.1f MB in %.1f s, %.0f MB/s\n" % (
            rec["name"], rec["rows"], mb, rec["seconds"], mb / rec["seconds"] if rec["seconds"] > 0 else 0.0))
        self.stream.flush()
