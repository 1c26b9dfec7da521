# SPDX-License-Identifier: BSD-3-Clause
"""_split.py - which batches of a shuffled order a rank and a worker read, and where a resumed epoch starts.

The R rows of the shuffled order (an output, its shards one after the other, or the rows a gather of a
pile file would write) are split over ranks as h5shuf splits shards: rank r holds rows
[floor(r*R/P), floor((r+1)*R/P)).  A rank's rows are cut into batches of B consecutive rows, batch b
being rows first + b*B .. first + (b+1)*B - 1; the last may be short (drop_last=False: the counts of
the ranks then differ by at most one), or every rank keeps floor(floor(R/P)/B) full batches
(drop_last=True: the same count on every rank, as distributed data parallel training needs).

Workers: after k batches have been consumed, worker w of W reads batches k + w, k + w + W, ...  A
PyTorch DataLoader takes batches from its workers in turn, starting with worker 0, so it delivers
batches k, k + 1, k + 2, ... : the same sequence for every number of workers, and the same as reading
the rank in one process.  A resumed epoch is therefore just "k batches done".

Another world size (elastic resume): a state saved after k batches at P ranks holds, for every rank r of
P, the rows it has not read, [first_r + k*B, end_r) (remaining()).  Those ranges, in the global order,
make "the rest" of the epoch, a sequence of T rows; loaded at P' ranks, rank r' reads positions
[floor(r'*T/P'), floor((r'+1)*T/P')) of that sequence, in batches of B as above (drop_last: every rank
floor(floor(T/P')/B) full batches).  Together the two stages read every row of the epoch at most once,
and every row once without drop_last: the epoch goes on from the same global position (the same rows
done).  A further change of world size does the same to the rest's rest.
"""

import bisect


class Schedule:
    """The batches of one rank: positions [first, end) of a sequence of rows, count batches of batch_size.

    The sequence is the R rows of the shuffled order (rest=None), or, after a change of world size, the
    concatenation of the global row ranges rest = [(a, e), ...] (increasing, disjoint) of the epoch's rows
    not yet read.
    """

    def __init__(self, rows, batch_size, rank, world_size, drop_last, rest=None):
        if int(batch_size) < 1:
            raise ValueError("batch_size must be at least 1, not %r" % (batch_size,))
        if int(world_size) < 1 or not 0 <= int(rank) < int(world_size):
            raise ValueError("rank %r is not in 0 .. world_size - 1 (world_size %r)" % (rank, world_size))
        self.rows, self.batch_size = int(rows), int(batch_size)
        self.rank, self.world_size, self.drop_last = int(rank), int(world_size), bool(drop_last)
        self.rest = None if rest is None else [(int(a), int(e)) for a, e in rest]
        if self.rest is None:
            total = self.rows
        else:
            prev = 0
            for a, e in self.rest:
                if not prev <= a < e <= self.rows:
                    raise ValueError("rest: ranges %r are not increasing, disjoint, nonempty ranges of 0 .. %d"
                                     % (self.rest[:8], self.rows))
                prev = e
            self._starts = [0]  # position of each rest range's first row in the sequence
            for a, e in self.rest:
                self._starts.append(self._starts[-1] + e - a)
            total = self._starts[-1]
        self.total = total  # rows of the sequence
        self.first = self.rank * total // self.world_size
        self.end = (self.rank + 1) * total // self.world_size
        if self.drop_last:
            self.count = total // self.world_size // self.batch_size
        else:
            self.count = -(-(self.end - self.first) // self.batch_size)

    def batch(self, b):
        """Positions [a, e) of batch b (0 <= b < count) in the sequence (rest=None: rows of the shuffled order)."""
        a = self.first + b * self.batch_size
        return a, min(a + self.batch_size, self.end)

    def global_ranges(self, a, e):
        """Positions [a, e) of the sequence as ranges of rows of the shuffled order: [(a, e), ...], in order."""
        if self.rest is None:
            return [(a, e)] if a < e else []
        out = []
        k = bisect.bisect_right(self._starts, a) - 1
        while a < e:
            lo, hi = self.rest[k]
            take = min(e - a, hi - lo - (a - self._starts[k]))
            g = lo + a - self._starts[k]
            if out and out[-1][1] == g:
                out[-1] = (out[-1][0], g + take)
            else:
                out.append((g, g + take))
            a += take
            k += 1
        return out

    def pieces(self, b):
        """Batch b as ranges of rows of the shuffled order: [(a, e)] (more than one only after a resize)."""
        return self.global_ranges(*self.batch(b))

    def remaining(self, done):
        """The rows every rank of this schedule has not read after `done` batches, as ranges of the shuffled
        order (increasing, disjoint, merged): the rest an elastic resume splits over another world size."""
        out = []
        for r in range(self.world_size):
            first, end = r * self.total // self.world_size, (r + 1) * self.total // self.world_size
            for a, e in self.global_ranges(min(first + done * self.batch_size, end), end):
                if out and out[-1][1] == a:
                    out[-1] = (out[-1][0], e)
                else:
                    out.append((a, e))
        return out

    def worker_batches(self, done, worker, workers):
        """The batches worker `worker` of `workers` reads after `done` batches: done + worker, + workers..."""
        if not 0 <= worker < workers:
            raise ValueError("worker %r is not in 0 .. %r" % (worker, workers - 1))
        return range(min(done, self.count) + worker, self.count, workers)
