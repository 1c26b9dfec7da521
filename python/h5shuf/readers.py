# SPDX-License-Identifier: BSD-3-Clause
"""readers.py - batches of a shuffled order for training loops: ShuffledReader and PileReader.

ShuffledReader reads an output of h5shuf (or its shards, in order) front to back in large blocks: the
file is already in shuffled order, so sequential reads are all a loader needs.  PileReader is the lazy
second pass (docs/lazy.md): over a pile file of `h5shuf scatter`, it loads one pile at a time, orders it
by the contract's keys (h5shuf.keys) and yields the rows `h5shuf gather` would write, in its order.

Both split the rows over ranks and DataLoader workers and resume mid-epoch the same way (_split.py:
rank r holds rows [floor(r*R/P), floor((r+1)*R/P)), cut into batches; worker w of W reads every W-th
batch, so a DataLoader delivers the same batches in the same order for any number of workers).  Files
are opened when iteration starts, in the process that iterates (a DataLoader worker has its own handles).
When torch is importable the readers are torch.utils.data.IterableDatasets: use them with
DataLoader(reader, batch_size=None, num_workers=W).
"""

import os

import h5py
import numpy as np

from . import _split, errors
from .keys import order as _key_order

try:  # the readers are IterableDatasets when torch is there; nothing else of torch is needed
    from torch.utils.data import IterableDataset as _Base
    from torch.utils.data import get_worker_info as _worker_info
except Exception:  # noqa: BLE001 - torch absent or broken: plain iterables
    _Base, _worker_info = object, None

# A ShuffledReader read, when one worker reads consecutive batches: whole batches of at least this many
# bytes.  Larger reads were slower from the page cache (fresh pages, no cache reuse: docs/python.md).
BLOCK_BYTES = 2 << 20
STATE_FORMAT = "h5shuf-reader"


def _register_filters():
    """Let h5py read zstd, lzf, lzo, bitshuffle and lz4 datasets through libh5shuf's filters, when the library
    loads and shares h5py's HDF5 (Debian's h5py does); otherwise HDF5_PLUGIN_PATH or hdf5plugin must serve."""
    try:
        from . import _lib
        _lib.lib().h5shuf_register_filters()
    except ImportError:
        pass


def _names(datasets):
    if isinstance(datasets, (str, bytes)):
        datasets = [datasets]
    names = [os.fsdecode(d) for d in datasets]
    if not names:
        raise ValueError("no dataset")
    return names


def _row_datasets(path):
    """The datasets h5shuf shuffled in an output file (datasets=None): every dataset whose first dimension
    is the file's rows, but for the index and source index h5shuf names in h5shuf_index and
    h5shuf_source_index.  The file's rows: its h5shuf_row_range (a shard, a split, a head), else its index's
    length, else the row count the most datasets hold (a tie raises ValueError naming the candidates: name
    the datasets then)."""
    found = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.append(("/" + name, obj.shape[0])) if isinstance(
            obj, h5py.Dataset) and obj.shape else None)
        a = f.attrs
        skip = {"/" + _text(a[k]).lstrip("/") for k in ("h5shuf_index", "h5shuf_source_index") if k in a}
        rows = None
        if "h5shuf_row_range" in a:
            r = a["h5shuf_row_range"]
            lo, hi = [int(x) for x in (_text(r).split() if isinstance(r, (str, bytes)) else r)]
            rows = hi - lo
        elif "h5shuf_index" in a and _text(a["h5shuf_index"]) in f:
            rows = f[_text(a["h5shuf_index"])].shape[0]
    found = [(n, k) for n, k in found if n not in skip]
    if rows is None:
        counts = {}
        for _, k in found:
            counts[k] = counts.get(k, 0) + 1
        best = sorted(counts.items(), key=lambda kv: -kv[1])
        if not best:
            raise ValueError("%s: no dataset with rows" % path)
        if len(best) > 1 and best[0][1] == best[1][1]:
            raise ValueError("%s: cannot tell which datasets hold the rows (%s): name them" % (path, "; ".join(
                "%d rows: %s" % (k, ", ".join(n for n, m in found if m == k)) for k, c in best if c == best[0][1])))
        rows = best[0][0]
    names = [n for n, k in found if k == rows]
    if not names:
        raise ValueError("%s: no dataset of its %d rows" % (path, rows))
    return names


class _Reader(_Base):
    """What both readers share: the schedule of batches, the epoch, the state."""

    def _setup(self, rows, batch_size, rank, world_size, drop_last):
        self._base = _split.Schedule(rows, batch_size, rank, world_size, drop_last)
        self.epoch = 0
        self._resume = None  # (epoch, batches done, Schedule of that epoch) from load_state_dict
        self._done = 0       # batches this object has yielded in this process, in this epoch

    @property
    def _schedule(self):
        """This epoch's schedule: the usual one, or that of a state loaded for this epoch (another world size)."""
        if self._resume and self._resume[0] == self.epoch:
            return self._resume[2]
        return self._base

    @property
    def rows(self):
        """R: the rows of the shuffled order over all ranks."""
        return self._base.rows

    def __len__(self):
        """Batches the next iteration of this rank yields (all of them, less those a loaded state skips)."""
        return self._schedule.count - self._start()

    def _start(self):
        if self._resume and self._resume[0] == self.epoch:
            return min(self._resume[1], self._resume[2].count)
        return 0

    def set_epoch(self, epoch):
        """Start epoch `epoch` (an int).  The order does not change; a loaded state applies to its own epoch
        only, so with DataLoader workers call this before each epoch, as with DistributedSampler."""
        self.epoch = int(epoch)
        self._done = self._start()

    def state_dict(self, batches_done=None):
        """The position in the epoch: a dict of ints, a bool (and lists of ints), for load_state_dict().

        batches_done: batches of this rank the training loop has consumed in this epoch; default: those
        this object has yielded itself.  Through a DataLoader with workers the object in the training
        process yields nothing: pass the loop's count of batches taken from the DataLoader.  After a
        state of another world size was loaded, batches_done counts from that resume, and the state holds
        "rest" (version 2): the ranges of rows the epoch had left then.
        """
        s = self._schedule
        done = self._done if batches_done is None else int(batches_done)
        out = {"format": STATE_FORMAT, "version": 1, "rows": s.rows, "batch_size": s.batch_size, "rank": s.rank,
               "world_size": s.world_size, "drop_last": s.drop_last, "epoch": self.epoch, "batches_done": done}
        if s.rest is not None:
            out["version"], out["rest"] = 2, [[a, e] for a, e in s.rest]
        return out

    def load_state_dict(self, state):
        """Resume: the next iteration of the state's epoch goes on from where the state's ranks were.

        The same world size: each rank skips the state's batches_done batches (on every worker); the rank
        may differ (ranks consume batches in step).  Another world size (elastic resume, _split.py): the
        rows the state's ranks had not read in that epoch are split over this world size, so the epoch
        goes on from the same global position, every row of it read once (at most once with drop_last).
        Raises ValueError when the state is of another reader setup (rows, batch_size, drop_last differ).
        """
        if state.get("format") != STATE_FORMAT or state.get("version") not in (1, 2):
            raise ValueError("not a state of an h5shuf reader: %r" % (state,))
        b = self._base
        for key, mine in (("rows", b.rows), ("batch_size", b.batch_size), ("drop_last", b.drop_last)):
            if state[key] != mine:
                raise ValueError("state of another setup: %s %r, this reader has %r" % (key, state[key], mine))
        rest = state.get("rest") if state["version"] == 2 else None
        then = _split.Schedule(b.rows, b.batch_size, 0, int(state["world_size"]), b.drop_last, rest)
        done = int(state["batches_done"])
        if not 0 <= done <= then.count:
            raise ValueError("batches_done %r is not in 0 .. %d" % (state["batches_done"], then.count))
        if then.world_size == b.world_size:
            now = _split.Schedule(b.rows, b.batch_size, b.rank, b.world_size, b.drop_last, then.rest)
        else:
            now = _split.Schedule(b.rows, b.batch_size, b.rank, b.world_size, b.drop_last, then.remaining(done))
            done = 0
        self.epoch = int(state["epoch"])
        self._resume = (self.epoch, done, now)
        self._done = done

    def __iter__(self):
        info = _worker_info() if _worker_info is not None else None
        return self._iterate(*((info.id, info.num_workers) if info is not None else (0, 1)))

    def _iterate(self, worker, workers):
        """The batches of worker `worker` of `workers` (a generator)."""
        start = self._start()
        sched = self._schedule
        batches = sched.worker_batches(start, worker, workers)
        if workers == 1:
            self._done = start
        source = self._open(workers)
        try:
            for b in batches:
                pieces = sched.pieces(b)
                if len(pieces) == 1:
                    batch = source.read(pieces[0][0], pieces[0][1], b)
                else:  # after a change of world size a batch may join ranges of the order
                    parts = [source.read(a, e, b) for a, e in pieces]
                    batch = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
                if workers == 1:
                    self._done = b + 1
                yield batch
        finally:
            source.close()
        if workers == 1 and self._resume and self._resume[0] == self.epoch:  # a state loaded for it is spent
            self._resume = None


class _Shards:
    """Rows [a, e) of the datasets over a list of files, their rows concatenated in order."""

    def __init__(self, paths, names, starts, block_rows, cache_bytes):
        self.files = [h5py.File(p, "r", rdcc_nbytes=cache_bytes) for p in paths]
        # Opened once: a dataset's chunk cache lives as long as the dataset is open.
        self.datasets = [{name: f[name] for name in names} for f in self.files]
        self.names, self.starts, self.block_rows = names, starts, block_rows
        self.block = None  # (a, e, {name: rows})

    def _rows(self, a, e):
        out = {}
        for name in self.names:
            parts = []
            for ds, lo, hi in zip(self.datasets, self.starts[:-1], self.starts[1:]):
                if a < hi and e > lo:
                    parts.append(ds[name][max(a, lo) - lo:min(e, hi) - lo])
            out[name] = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return out

    def read(self, a, e, _batch):
        blk = self.block
        if blk is None or not (blk[0] <= a and e <= blk[1]):
            end = max(e, min(a + self.block_rows, self.starts[-1]))
            blk = self.block = (a, end, self._rows(a, end))
        return {name: rows[a - blk[0]:e - blk[0]] for name, rows in blk[2].items()}

    def close(self):
        self.block = None
        self.datasets = []
        for f in self.files:
            f.close()


class ShuffledReader(_Reader):
    """Batches of a shuffled h5shuf output (or of its shards, in order), read sequentially in large blocks.

    path_or_shards: a file, or a list of files (shards) whose rows follow one another.
    datasets: a dataset path or a list of them ("/X", "/y"), present in every file with the same dtype
        and dims[1:]; their rows are aligned (shuffled together).  None: the datasets h5shuf shuffled, as
        the first file tells them (those whose first dimension is its rows, not the index datasets; see
        _row_datasets), as PileReader takes None.
    batch_size: rows per batch.  rank, world_size: this process's part (rank r of P holds rows
        [floor(r*R/P), floor((r+1)*R/P)) of the R rows); drop_last: keep full batches only, the same
        number on every rank (floor(floor(R/P)/batch_size)).
    Iterating yields dicts {dataset path: numpy array (rows, *dims[1:])}, views of blocks of whole
    batches and at least 2 MiB (BLOCK_BYTES) read one after the other (one worker), or batch by batch
    (workers: each reads every W-th batch, in blocks of 2 MiB only when batches are tiny); each
    dataset's chunk cache holds two of its largest chunks.  In a DataLoader (batch_size=None) the
    batches are split over its workers.
    state_dict()/load_state_dict(): resume exactly mid-epoch.  Raises KeyError for a missing dataset,
    ValueError for datasets of different rows or shapes, OSError for a file h5py cannot open.
    """

    def __init__(self, path_or_shards, datasets, batch_size, *, rank=0, world_size=1, drop_last=False):
        if isinstance(path_or_shards, (str, bytes, os.PathLike)):
            path_or_shards = [path_or_shards]
        self.paths = [os.fspath(p) for p in path_or_shards]
        self.datasets = _row_datasets(self.paths[0]) if datasets is None else _names(datasets)
        _register_filters()
        starts, shape, self.row_bytes, chunk_bytes = [0], {}, 0, 0
        for p in self.paths:
            with h5py.File(p, "r") as f:
                rows = None
                for name in self.datasets:
                    ds = f[name]
                    if rows is not None and ds.shape[0] != rows:
                        raise ValueError("%s:%s has %d rows, %s has %d" % (p, name, ds.shape[0], self.datasets[0],
                                                                          rows))
                    rows = ds.shape[0]
                    kind = (ds.dtype, ds.shape[1:])
                    if ds.chunks:
                        chunk_bytes = max(chunk_bytes, ds.dtype.itemsize * int(np.prod(ds.chunks, dtype=np.int64)))
                    if shape.setdefault(name, kind) != kind:
                        raise ValueError("%s:%s is %s %s, the first file's is %s %s" % (p, name, *kind, *shape[name]))
                starts.append(starts[-1] + rows)
        for dtype, dims in shape.values():
            self.row_bytes += dtype.itemsize * int(np.prod(dims, dtype=np.int64))
        self._starts = starts
        # Each dataset's chunk cache holds two of the largest chunks: a chunk that batches or blocks share is
        # decoded once (HDF5 bypasses a cache smaller than the chunk, and decodes it again for every read).
        self._cache_bytes = max(1 << 20, 2 * chunk_bytes)
        self._setup(starts[-1], batch_size, rank, world_size, drop_last)

    def _open(self, workers):
        b = self._schedule.batch_size
        per = max(1, BLOCK_BYTES // max(1, b * self.row_bytes))  # batches a block holds
        # A worker reads every W-th batch: a block then holds W - 1 batches of others for each of its own,
        # worth reading only when batches are so small that a read's cost is in the call, not the bytes.
        block_rows = b * per if workers == 1 or per >= 4 * workers else 0
        return _Shards(self.paths, self.datasets, self._starts, block_rows, self._cache_bytes)


class _Piles:
    """Output rows [a, e) of a gather, from the piles: one pile in memory, in stored order, with its order."""

    def __init__(self, path, seed, offsets, keys):
        self.file = h5py.File(path, "r")
        self.seed, self.offsets, self.keys = seed, offsets, keys  # keys: {name: "dK"}
        self.pile = None  # (j, order, {name: rows as stored})

    def _load(self, j):
        self.pile = None  # the previous pile goes first: one in memory
        g = self.file["piles/%06d" % j]
        ids = g["index"][()]
        self.pile = (j, _key_order(self.seed, ids), {name: g[k][()] for name, k in self.keys.items()})

    def read(self, a, e, _batch):
        parts = []
        while a < e:
            j = int(np.searchsorted(self.offsets, a, side="right")) - 1
            if self.pile is None or self.pile[0] != j:
                self._load(j)
            stop = min(e, int(self.offsets[j + 1]))
            sel = self.pile[1][a - int(self.offsets[j]):stop - int(self.offsets[j])]
            parts.append({name: rows[sel] for name, rows in self.pile[2].items()})
            a = stop
        if len(parts) == 1:
            return parts[0]
        return {name: np.concatenate([p[name] for p in parts]) for name in self.keys}

    def close(self):
        self.pile = None
        self.file.close()


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _pile_attr(path, attrs, name, kind, count=None):
    """Root attribute `name` of the pile file at `path` (its h5py attrs), of the shape and type a scatter
    writes: kind "int" (integers, none negative: Python ints) or "text" (strings: str); one value (count
    None: a scalar or an array of one) or a list of them (count 0: one or more, an array).  Raises
    errors.UnsupportedError ("PATH: damaged pile file: attribute NAME ...") for any other."""
    def bad(why):
        return errors.UnsupportedError("%s: damaged pile file: attribute %s %s" % (path, name, why))
    if name not in attrs:
        raise bad("is missing")
    try:
        v = attrs[name]
    except Exception as exc:  # noqa: BLE001 - a type h5py cannot read: the same refusal
        raise bad("cannot be read: %s" % exc) from None
    if isinstance(v, h5py.Empty):
        raise bad("holds no value")
    a = np.asarray(v)
    if count is None and a.size != 1:
        raise bad("holds %d values, not 1" % a.size)
    if count == 0 and (a.ndim != 1 or a.size == 0):
        raise bad("holds %s, not a list of values" % ("no value" if a.size == 0 else "a scalar"))
    values = a.reshape(-1).tolist()
    if kind == "int":
        if a.dtype.kind not in "iu":
            raise bad("is of type %s, not an integer" % a.dtype)
        if any(x < 0 for x in values):
            raise bad("holds a negative value")
    elif not all(isinstance(x, (bytes, str)) for x in values):
        raise bad("is of type %s, not a string" % a.dtype)
    else:
        try:
            values = [_text(x) for x in values]
        except UnicodeDecodeError:
            raise bad("is not UTF-8 text") from None
    return values[0] if count is None else values


def _pile_header(path, f):
    """What a reader needs of pile file f (h5py, at `path`), each attribute checked (_pile_attr):
    (seed, the dataset names, /pile_table, the output row of each pile's first row followed by the rows
    of all).  errors.UnsupportedError for a file that is not a pile file of format 1, or a damaged one."""
    a = f.attrs
    try:
        fmt = _pile_attr(path, a, "h5shuf_format", "text")
    except errors.UnsupportedError:
        fmt = None
    if fmt != "h5shuf-piles":
        raise errors.UnsupportedError("%s: not a pile file of h5shuf scatter" % path)
    version = _pile_attr(path, a, "h5shuf_format_version", "int")
    if version != 1:
        raise errors.UnsupportedError("%s: pile file format version %d (this reader knows 1)" % (path, version))
    seed = _pile_attr(path, a, "h5shuf_seed", "int")
    names = _pile_attr(path, a, "h5shuf_datasets", "text", count=0)
    rows, piles = _pile_attr(path, a, "h5shuf_rows", "int"), _pile_attr(path, a, "h5shuf_piles", "int")
    t = f.get("pile_table")
    if (not isinstance(t, h5py.Dataset) or t.ndim != 1 or len(t) != piles or t.dtype.names is None
            or not {"rows", "offset"} <= set(t.dtype.names)):
        raise errors.UnsupportedError("%s: damaged pile file: no /pile_table of %d piles with rows and offsets"
                                      % (path, piles))
    table = t[()]
    offsets = np.append(table["offset"], np.uint64(rows)).astype(np.int64)
    return seed, names, table, offsets


class PileReader(_Reader):
    """The lazy second pass: batches of the rows `h5shuf gather` would write, read from a pile file.

    piles_h5: a pile file of `h5shuf scatter` (format 1, docs/lazy.md).  datasets: None (all), or the
        paths of the inputs' datasets to read ("/X"), as recorded in its h5shuf_datasets attribute.
    batch_size, rank, world_size, drop_last: as for ShuffledReader, over the gather's output order.
    Iterating loads one pile at a time (every dataset's rows of it, as stored, and its ids), sorts its
    ids by the contract's key (h5shuf.keys) and yields dicts {dataset path: numpy array}, batches of
    output rows: the gathered output's rows, row for row, without writing it.  Memory: one pile (its
    rows and 24 bytes a row of ids and order) plus a batch.  In a DataLoader every worker loads each
    pile of its rank (it yields every W-th batch of it), so workers multiply the pile reads by W.
    Raises errors.UnsupportedError for a file that is not a pile file of format 1, a damaged one (an
    attribute or /pile_table of another shape or type than a scatter writes: the message names it) or
    datasets of variable-length rows, KeyError for a dataset the file does not hold.  zstd piles are read through
    libh5shuf's filters when the library loads (else set HDF5_PLUGIN_PATH, or import hdf5plugin).
    """

    def __init__(self, piles_h5, datasets=None, batch_size=256, *, rank=0, world_size=1, drop_last=False):
        self.path = os.fspath(piles_h5)
        _register_filters()
        with h5py.File(self.path, "r") as f:
            self.seed, names, table, self._offsets = _pile_header(self.path, f)
            want = names if datasets is None else _names(datasets)
            keys = {}
            for name in want:
                hits = [k for k, n in enumerate(names) if n.lstrip("/") == name.lstrip("/")]
                if not hits:
                    raise KeyError("%s: no dataset %s among %s" % (self.path, name, names))
                keys[name] = "d%d" % hits[0]
            for j in range(len(table)):
                if any(k + "_data" in f["piles/%06d" % j] for k in keys.values()):
                    raise errors.UnsupportedError("%s: variable-length rows: PileReader reads fixed-size rows only"
                                                  % self.path)
                if int(table["rows"][j]):
                    break
        self.datasets, self._keys = list(keys), keys
        self._setup(int(self._offsets[-1]), batch_size, rank, world_size, drop_last)

    def _open(self, workers):
        return _Piles(self.path, self.seed, self._offsets, self._keys)
