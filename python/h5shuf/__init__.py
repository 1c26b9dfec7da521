# SPDX-License-Identifier: BSD-3-Clause
"""h5shuf - globally shuffle the rows of HDF5 datasets larger than memory, and read them in training loops.

    import h5shuf
    report = h5shuf.shuffle(["train.h5"], "shuffled.h5", seed=42, memory="4G")
    for batch in h5shuf.ShuffledReader("shuffled.h5", ["/X", "/y"], 256, rank=rank, world_size=world):
        ...  # batch["/X"]: (<= 256, ...) numpy array

The functions run libh5shuf (the C library of the `h5shuf` tool, through ctypes): the same options, the
same output bytes, the tool's --json report as a dict.  Inputs and outputs are the tool's specs,
"FILE.h5" or "FILE.h5:/path[,/path...]".  Sizes are bytes, or text with a binary suffix ("512M", "1G").
Failures raise h5shuf.Error (a subclass per status: h5shuf.errors).  docs/python.md has the guide.

h5shuf.Epochs gives a new exact order every epoch (epoch e: seed epoch_seed(seed, e)), reading pile files
that background processes scatter while the previous epoch is read (docs/python.md).

The readers (ShuffledReader, PileReader) need only h5py and numpy; they are imported on first use, with
torch when it is installed (they are then torch IterableDatasets, split over DataLoader workers).
"""

import os

__version__ = "0.1.0"

from . import _run  # noqa: E402
from .errors import (AmbiguousError, BudgetError, CanceledError, Error, HDF5Error,  # noqa: E402,F401
                     InternalError, InvalidArgumentError, IOFailureError, MismatchError, NoSpaceError,
                     NotFoundError, NotHDF5Error, OutOfMemoryError, OutputExistsError, SameFileError,
                     UnsupportedError)
from ._run import H5shufWarning  # noqa: E402,F401
from ._lib import LibraryNotFound  # noqa: E402,F401
from .keys import keys  # noqa: E402,F401

__all__ = ["shuffle", "plan", "scatter", "gather", "verify", "keys", "library_path", "ShuffledReader", "PileReader",
           "Epochs", "epoch_seed",
           "Error", "H5shufWarning", "LibraryNotFound", "AmbiguousError", "BudgetError", "CanceledError", "HDF5Error",
           "InternalError", "InvalidArgumentError", "IOFailureError", "MismatchError", "NoSpaceError", "NotFoundError",
           "NotHDF5Error", "OutOfMemoryError", "OutputExistsError", "SameFileError", "UnsupportedError"]

_OPTIONS_DOC = """
    Other options (keyword arguments, as the tool's): chunk_rows (rows per output chunk, or a whole chunk
    shape "64x256"), scratch_compression (filters of the scratch piles, default "zstd:1+shuffle"), tmpdir
    (directory of the scratch file), on_oversize ("recurse" or "restart"), strategy ("auto", "two-pass",
    "direct"), split ("train=0.9,val=0.1" or {"train": 0.9, "val": 0.1}; fractions exact, as Fraction(1, 3),
    Decimal or "1/3" too: split k ends at row floor(N * (F_0 + ... + F_k) / sum F)), head (rows: only the
    first N of the shuffle), source_index (path of an (N,) dataset of input numbers), check (verify the output
    before it is renamed into place), force (replace an existing output), drop_references, allow_lossy,
    allow_external (read datasets whose rows are in other files: external storage, virtual datasets),
    mixing_window (with several inputs: the mixing report of the first and last W output rows; 0: the
    default window), resume (continue the interrupted run of the same call from its last checkpoint: the
    output is the uninterrupted run's, byte for byte), checkpoint (work a kill may cost at most: a size
    such as "1G", or (size, seconds); "off": no checkpoints; default ("1G", 60)), checkpoint_sync (sync every
    checkpoint to the disk, so that it survives a crash of the machine too, not only a kill), mix (a mixture
    of domains, "web=0.7,code=0.3" or {"web": 0.7, "code": 0.3}, every input then "web=in.h5:/tok": each
    domain exactly its share of the rows), rows (the rows of a mix; default: the most it allows without
    repeating a row), allow_repeat (let a mix repeat a domain's rows), stratify (with shards or split: every
    output file holds each mix domain's, else each input's, share of its rows within one row)."""


def shuffle(inputs, output, *, seed=None, memory="1G", compression=None, shards=None, index=None, threads=0,
            progress=None, **options):
    """Shuffle the rows of the inputs into output, as `h5shuf [OPTIONS] INPUT... OUTPUT` does.

    inputs: a spec or a list of specs ("in.h5", "in.h5:/X,/y"), concatenated along axis 0 in order; a
        weight as "in.h5:/X@2.5", or inputs given as (spec, weight) pairs or a {spec: weight} dict: floor(w)
        copies of each row and exactly round(frac(w) * n) more, drawn from the seed (docs/algorithm.md,
        "Mixtures").
    output: the output spec ("out.h5", "out.h5:/images,/labels"), written under a temporary name and
        renamed into place on success.
    seed: the permutation's seed, 0 .. 2**64-1 (None: random, returned in the report's "seed").
    memory: the budget of buffers, bytes (int) or "512M"/"1G"/... (K = 1024).
    compression: output filters: None or "keep" (the first input's), "none", "gzip:4", "zstd:3+shuffle"...
    shards: K >= 1 writes K files out-00000-of-0000K.h5 ... (shard s: output rows floor(s*N/K) ..).
    index: path of an (N,) uint64 dataset written in the output: the input row of each output row.
    threads: threads that (de)compress chunks; 0: one per CPU.  The output bytes are the same for any.
    progress: None (quiet), True (a tqdm bar per pass when tqdm is installed, else a plain line on
        stderr), or a callable progress(phase, rows_done, rows_total) with phase "scatter", "split",
        "gather", "select" (--head's scan of keys) or "verify" (check), called after every block of a
        few MiB (or 2^20 rows of a scan); an exception it raises cancels the run and is
        re-raised once the run has cleaned up.
    Returns the run's report, the dict `h5shuf --json` prints: "seed", "datasets", "plan" (rows,
    row_bytes, piles, bytes of memory and disk...), "outputs" (file, first_row, rows), "passes" (name,
    rows, bytes, seconds), "seconds", "restarts", "piles_split", "scratch_bytes", "peak_rss_bytes" ...
    Raises h5shuf.Error (a subclass per status: NotFoundError for a missing input, OutputExistsError,
    BudgetError, NoSpaceError...) with the library's one-line message naming the file and dataset;
    KeyboardInterrupt on Ctrl-C, after the run has removed its scratch and partial output (SIGTERM,
    SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 and SIGXCPU left at their default end the process after that
    cleanup, docs/python.md); TypeError for an unknown option.  Warnings of the run (references written null...) are issued as H5shufWarning.
    """
    o = _run._options(seed, memory, compression, shards, index, threads, options)
    return _run.execute("shuffle", _run._specs(inputs), os.fsdecode(output), None, o, progress,
                        options.get("mixing_window"))


def plan(inputs, output, *, seed=None, memory="1G", compression=None, shards=None, index=None, threads=0,
         **options):
    """The plan of shuffle(inputs, output, ...) without running it, as `h5shuf --plan --json` gives it.

    Same arguments as shuffle() (no progress).  Returns the report without the run's figures: "seed",
    "datasets", "plan" (rows, row_bytes, piles, pile_target_rows and pile_bound_rows in rows,
    mem_planned_bytes, scratch_estimate_bytes, output_estimate_bytes, scratch_free_bytes... in bytes,
    "strategy"), "outputs".  Nothing is written.  Raises h5shuf.Error as shuffle() does.
    """
    o = _run._options(seed, memory, compression, shards, index, threads, options)
    return _run.execute("shuffle", _run._specs(inputs), os.fsdecode(output), None, o, None,
                        options.get("mixing_window"), plan_only=True)


def scatter(inputs, piles, *, seed=None, memory="1G", compression=None, index=None, threads=0, progress=None,
            **options):
    """Pass 1 only, as `h5shuf scatter`: the piles in the pile file `piles` (format: docs/lazy.md).

    Arguments as shuffle()'s (no check); compression, chunk_rows and index are recorded for gather().
    The pile file is written under a temporary name and renamed into place; nothing is left on failure.
    Returns the report (its "output" is the pile file; "plan" holds the piles).  Raises as shuffle().
    """
    o = _run._options(seed, memory, compression, None, index, threads, options)
    return _run.execute("scatter", _run._specs(inputs), None, os.fsdecode(piles), o, progress,
                        options.get("mixing_window"))


def gather(piles, output, *, seed=None, memory="1G", compression=None, index=None, threads=0, progress=None,
           **options):
    """Pass 2 only, as `h5shuf gather`: the output from a pile file, byte for byte shuffle()'s.

    piles: a pile file of scatter().  The inputs it records must still be in place and unchanged
    (MismatchError otherwise); seed, if given, must be the pile file's.  Output options given here
    replace those recorded.  memory must hold the largest pile (BudgetError says how much it needs).
    Returns the report (its "inputs" is [piles]).  Raises as shuffle(); the pile file is only read.
    """
    o = _run._options(seed, memory, compression, None, index, threads, options)
    return _run.execute("gather", [], os.fsdecode(output), os.fsdecode(piles), o, progress, None)


def verify(inputs, output, *, memory="1G", threads=0):
    """Check that output holds a permutation of the inputs' rows, datasets still aligned (`h5shuf verify`).

    inputs: specs as for shuffle(); weights may be left out: those the run took (and mix's) are read from
        the output.
    output: the output file, or one file of a set of shards or splits (the others are found beside it by
        their names), or a list of the set's files; a head (shuffle(head=R)) is checked as the first R rows
        of the shuffle of its seed.  Streams both once, with 128-bit multiset hashes, in memory bytes; with
        the seed and an index in the output, the exact order is checked too.  Returns {"status": "ok",
        "inputs", "output", "checked" (what was verified, one line), "seconds"}.  Raises MismatchError
        naming the file and dataset and what differs ("rows differ", "misaligned", row counts, types, a
        file of the set missing), or another h5shuf.Error.
    """
    if isinstance(output, (str, bytes, os.PathLike)):
        output = [output]
    return _run.verify(_run._specs(inputs), [os.fsdecode(p) for p in output], memory, threads)


def library_path():
    """The file libh5shuf was loaded from ($H5SHUF_LIBRARY, installed, system, build tree: in that order).

    Raises LibraryNotFound (an ImportError) listing the places tried.
    """
    from . import _lib
    return _lib.path()


_LAZY = ("ShuffledReader", "PileReader", "Epochs", "epoch_seed")


def __dir__():
    # The readers and Epochs are imported on first use (below), but listed with the rest.
    return sorted(set(globals()) | set(_LAZY))


def __getattr__(name):
    # The readers import h5py (and torch when it is installed) on first use only.
    if name in ("ShuffledReader", "PileReader"):
        from . import readers
        return getattr(readers, name)
    if name in ("Epochs", "epoch_seed"):
        from . import epochs
        return getattr(epochs, name)
    raise AttributeError("module 'h5shuf' has no attribute %r" % name)


for _f in (shuffle, plan, scatter):
    _f.__doc__ += _OPTIONS_DOC
del _f

