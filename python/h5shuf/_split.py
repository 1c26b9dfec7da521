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
"""


class Schedule:
    """The batches of one rank: rows [first, end) of the R rows, count batches of batch_size rows."""

    def __init__(self, rows, batch_size, rank, world_size, drop_last):
        if int(batch_size) < 1:
            raise ValueError("batch_size must be at least 1, not %r" % (batch_size,))
        if int(world_size) < 1 or not 0 <= int(rank) < int(world_size):
            raise ValueError("rank %r is not in 0 .. world_size - 1 (world_size %r)" % (rank, world_size))
        self.rows, self.batch_size = int(rows), int(batch_size)
        self.rank, self.world_size, self.drop_last = int(rank), int(world_size), bool(drop_last)
        self.first = self.rank * self.rows // self.world_size
        self.end = (self.rank + 1) * self.rows // self.world_size
        if self.drop_last:
            self.count = self.rows // self.world_size // self.batch_size
        else:
            self.count = -(-(self.end - self.first) // self.batch_size)

    def batch(self, b):
        """Rows [a, e) of batch b (0 <= b < count) in the shuffled order."""
        a = self.first + b * self.batch_size
        return a, min(a + self.batch_size, self.end)

    def worker_batches(self, done, worker, workers):
        """The batches worker `worker` of `workers` reads after `done` batches: done + worker, + workers..."""
        if not 0 <= worker < workers:
            raise ValueError("worker %r is not in 0 .. %r" % (worker, workers - 1))
        return range(min(done, self.count) + worker, self.count, workers)
