# SPDX-License-Identifier: BSD-3-Clause
"""epochs.py - a new exact uniform order every epoch, without writing a shuffled file: h5shuf.Epochs.

Epoch e is the permutation of seed epoch_seed(seed, e) = K(seed, e), the contract's key of row e under
`seed` (word 0 of Philox4x64-10, counter (e, 0, 0, 0), key (seed, 0); h5shuf.keys, the library's
h5shuf_key): the rows `h5shuf -s K(seed, e) INPUT... OUT` writes, in that order.  Its rows are read
through the lazy second pass (docs/lazy.md): a pile file of `h5shuf scatter -s K(seed, e)`, read pile by
pile, each sorted by its keys in memory (PileReader's _Piles).  While epoch e is read, epoch e+1's scatter
runs in a background process (another Python running h5shuf.scatter through the same libh5shuf, with its
own memory budget), so after epoch 0 the training loop finds the next epoch's piles ready.

Files: a private directory made with mkdtemp (mode 0700) in `tmpdir` holds epoch-E.h5, the pile file of
epoch E (scatter writes it as .epoch-E.h5.h5shuf-XXXXXX and renames it into place when complete).  At most
two pile files exist: the epoch being read and the next (the older one is deleted when an epoch starts,
before the next scatter starts).  close() (or the end of a `with` block, or the interpreter's exit) stops a
running scatter, whose library then removes its temporary file, and removes the directory.  A background
scatter whose training process dies gets SIGINT (Linux's parent-death signal) and cleans up the same way.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import h5py
import numpy as np

from . import _lib, _run, errors, readers
from .keys import keys as _keys

STATE_KIND = "h5shuf-epochs"
# epoch-E.h5, and scatter's temporary name for it, .epoch-E.h5.h5shuf-XXXXXX
_PILE_NAME = re.compile(r"^\.?epoch-([0-9]+)\.h5(\.h5shuf-.*)?$")


def epoch_seed(seed, epoch):
    """The seed of epoch `epoch` (int >= 0) of an Epochs of seed `seed` (int, 0 .. 2**64-1): K(seed, epoch),
    the contract's key of row `epoch` (Philox4x64-10 word 0, counter (epoch, 0, 0, 0), key (seed, 0)).  An int,
    0 .. 2**64-1.  numpy alone gives it too: np.random.Philox(key=seed, counter=epoch - 1).random_raw(4)[0]
    (numpy increments its counter before use)."""
    if int(epoch) < 0:
        raise ValueError("epoch %r is negative" % (epoch,))
    return int(_keys(seed, np.array([int(epoch)], dtype=np.uint64))[0])


_CHILD = r"""
import ctypes, json, os, signal, sys
a = json.loads(sys.argv[1])
try:  # Linux: SIGINT when the training process dies, so the scatter cancels and removes its temporary file
    if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT, 0, 0, 0) == 0 and os.getppid() != a["parent"]:
        sys.exit(130)
except (OSError, AttributeError):
    pass
for stale in a["delete"]:  # the older epochs' pile files, before this one is written
    try:
        os.unlink(stale)
    except FileNotFoundError:
        pass
if a["nice"]:
    os.nice(a["nice"])
sys.path.insert(0, a["path"])
import time
import h5shuf
t0 = time.monotonic()
try:
    r = h5shuf.scatter(a["inputs"], a["piles"], seed=a["seed"], memory=a["memory"], threads=a["threads"],
                       **a["options"])
except KeyboardInterrupt:
    sys.exit(130)
except h5shuf.Error as exc:
    sys.stdout.write(json.dumps({"status": getattr(exc, "status", -1), "error": str(exc)}))
    sys.exit(1)
sys.stdout.write(json.dumps({"seconds": r["seconds"], "piles": r["plan"]["piles"], "t0": t0, "t1": time.monotonic()}))
"""


class _Scatter:
    """A background scatter of one epoch: the child process, its report file, when it started."""

    def __init__(self, epoch, seed, path, args, env):
        self.epoch, self.seed, self.path = epoch, seed, path
        self.out = tempfile.TemporaryFile()  # the child's report (a line of JSON) or error; no name
        self.started = time.monotonic()
        self.ended = None
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(args)], stdout=self.out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)

    def wait(self):
        """Wait for the child; returns its report {"seconds", "piles"}.  Raises the h5shuf.Error it failed with."""
        rc = self.proc.wait()
        if self.ended is None:
            self.ended = time.monotonic()
        self.out.seek(0)
        text = self.out.read().decode("utf-8", "replace")
        self.out.close()
        try:
            report = json.loads(text.strip().splitlines()[-1]) if text.strip() else {}
        except ValueError:
            report = {}
        if rc == 0 and "seconds" in report:
            return report
        if "error" in report:
            raise errors.from_status(report["status"], report["error"])
        raise errors.Error("the scatter of epoch %d ended with status %d: %s" % (self.epoch, rc, text.strip()[-400:]))

    def stop(self, grace=30.0):
        """Cancel: SIGINT (the library removes its temporary file), SIGKILL after `grace` seconds."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.out.closed:
            self.out.close()


def _unlink(paths):
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def _cleanup(state):
    """Stop the background scatter and remove the private directory (state: the owner's dict)."""
    if state.get("pid") != os.getpid():
        return  # a forked DataLoader worker's copy: the training process owns the files
    bg = state.pop("bg", None)
    if bg is not None:
        bg.stop()
    d = state.pop("dir", None)
    if d is not None:
        shutil.rmtree(d, ignore_errors=True)


class Epochs(readers._Reader):
    """Batches of a new exact uniform permutation of the inputs every epoch, read lazily from pile files.

    inputs: the input specs, as for h5shuf.shuffle ("train.h5", "train.h5:/X,/y", weights, a list).
    tmpdir: an existing directory for the pile files (two at most, each about the inputs' rows' size, or
        less with scratch_compression); a private subdirectory is made in it and removed by close().
    seed: int, 0 .. 2**64-1, the same on every rank: epoch e is the permutation of seed
        epoch_seed(seed, e) = K(seed, e), row for row the output of `h5shuf -s K(seed, e) INPUT... OUT`.
    datasets: None (all the shuffled datasets) or the paths to read ("/X", ["/X", "/y"]).
    batch_size, rank, world_size, drop_last: as for ShuffledReader: rank r of P reads rows
        [floor(r*R/P), floor((r+1)*R/P)) of epoch e's order, in batches; DataLoader workers read every
        W-th batch; state_dict()/load_state_dict() resume mid-epoch, also at another world size.
    memory: the scatter's memory budget (bytes or "512M", "1G"): the background process's buffers, and it
        bounds the piles, so a reader holds one pile (its rows and 24 bytes a row) at a time.
    threads: the scatter's (de)compression threads (0: one per CPU).  nice: added to the background
        scatter's nice value (0: the training process's priority).  epochs: the number of epochs, when
        known (no scatter is started past the last); None: unbounded.
    options: other options of h5shuf.scatter (scratch_compression "none" for the fastest reading, or the
        tool's default, on_oversize, allow_external...).

    Iterating yields dicts {dataset path: numpy array} of the current epoch (set_epoch(e); 0 at first, or
    the epoch of a loaded state).  In the training process, set_epoch(e) (or the first iteration) makes
    epoch e's pile file ready: it waits for the background scatter of e (the wait is self.waits[e], in
    seconds), or runs the scatter now for the first epoch, deletes the pile file of any other epoch, and
    starts e+1's scatter in the background.  Call set_epoch before each epoch: DataLoader workers read
    the pile file the training process made ready.  Every rank runs its own scatters (the same piles:
    the order of an epoch is the same on every rank); give node-local or per-rank tmpdirs as disk allows.
    Raises h5shuf.Error as h5shuf.scatter does (from the first epoch's scatter or a background one).
    """

    def __init__(self, inputs, tmpdir, seed, datasets=None, batch_size=256, *, rank=0, world_size=1,
                 drop_last=False, memory="1G", threads=0, nice=0, epochs=None, **options):
        if seed is None or isinstance(seed, bool) or not 0 <= int(seed) < 2 ** 64:
            raise ValueError("seed: an int 0 .. 2**64-1, the same on every rank, not %r" % (seed,))
        unknown = sorted(set(options) - set(_run.OPTION_NAMES) - {"progress"})
        if unknown or "tmpdir" in options or "resume" in options:
            raise TypeError("Epochs: unknown or unusable option(s): %s" % ", ".join(unknown or ["tmpdir/resume"]))
        self.seed, self.inputs = int(seed), _run._specs(inputs)
        self.memory, self.threads, self.nice, self.epochs = memory, int(threads), int(nice), epochs
        # No checkpoints by default: a scatter that dies is simply run again for its epoch.
        self._options = dict({"checkpoint": "off"}, **{k: v for k, v in options.items() if k != "progress"})
        self.waits = {}     # epoch: seconds set_epoch waited for its pile file
        # epoch: {"background": bool, "started", "ended": time.monotonic() of the process's start and of the
        # wait that saw it end; "t0", "t1": the scatter call's start and end in the process (the same clock,
        # system-wide on Linux); "seconds": the library's; "piles"}
        self.scatters = {}
        readers._register_filters()
        # The private directory: nobody else can create, swap or read names in it.
        self._own = {"pid": os.getpid(), "dir": tempfile.mkdtemp(prefix="h5shuf-epochs.", dir=os.fspath(tmpdir))}
        self._finalizer = weakref.finalize(self, _cleanup, self._own)
        self.directory = self._own["dir"]
        try:
            o = _run._options(self.epoch_seed(0), memory, None, None, None, self.threads, self._options)
            plan = _run.execute("scatter", self.inputs, None, self._path(0), o, None, None, plan_only=True)
        except BaseException:
            self.close()
            raise
        names = plan["datasets"]
        want = names if datasets is None else readers._names(datasets)
        self._keys = {}
        for name in want:
            hits = [k for k, n in enumerate(names) if n.lstrip("/") == name.lstrip("/")]
            if not hits:
                self.close()
                raise KeyError("no dataset %s among the inputs' shuffled datasets %s" % (name, names))
            self._keys[name] = "d%d" % hits[0]
        self.datasets = list(self._keys)
        self._ready = None  # (epoch, path, seed, offsets) of the pile file made ready
        self._setup(int(plan["plan"]["rows"]), batch_size, rank, world_size, drop_last)

    # -- the pile files ----------------------------------------------------------------------------------

    def epoch_seed(self, epoch):
        """K(self.seed, epoch): the seed of epoch `epoch`'s permutation (epoch_seed())."""
        return epoch_seed(self.seed, epoch)

    def _path(self, epoch):
        return os.path.join(self._own["dir"], "epoch-%d.h5" % epoch)

    def _owner(self):
        return self._own.get("pid") == os.getpid() and self._own.get("dir") is not None

    def _start_scatter(self, epoch, background, delete=()):
        env = dict(os.environ, H5SHUF_LIBRARY=_lib.path())
        args = {"inputs": self.inputs, "piles": self._path(epoch), "seed": self.epoch_seed(epoch),
                "memory": self.memory, "threads": self.threads, "options": self._options, "nice": self.nice,
                "parent": os.getpid(), "delete": list(delete), "path": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
        bg = _Scatter(epoch, args["seed"], args["piles"], args, env)
        self.scatters[epoch] = {"started": bg.started, "background": background}
        return bg

    def _finish(self, bg):
        try:
            report = bg.wait()
        finally:
            self.scatters[bg.epoch]["ended"] = bg.ended
        self.scatters[bg.epoch].update(report)

    def _prepare(self, epoch):
        """Make epoch `epoch`'s pile file ready (training process only); start the next one's scatter."""
        if self._ready is not None and self._ready[0] == epoch:
            return
        t0 = time.monotonic()
        bg = self._own.get("bg")
        if bg is not None and bg.epoch != epoch:  # set_epoch jumped: that scatter is of no use
            self._own.pop("bg")
            bg.stop()
            bg = None
        # The other epochs' pile files (and a stopped scatter's temporary file) go before the next scatter
        # writes: two at most.  The next scatter's process deletes them first thing (unlinking a pile file
        # of a GiB drops its cached pages, half a second the loop need not wait); a thread when none starts.
        stale = [os.path.join(self._own["dir"], n) for n in os.listdir(self._own["dir"])
                 if _PILE_NAME.match(n) and int(_PILE_NAME.match(n).group(1)) != epoch]
        self._ready = None
        if bg is None:
            bg = self._start_scatter(epoch, background=False, delete=stale)
            self._own["bg"] = bg
            stale = []
        try:
            self._finish(bg)
        finally:
            self._own.pop("bg", None)
        path = self._path(epoch)
        with h5py.File(path, "r") as f:
            seed, _, _, offsets = readers._pile_header(path, f)
        if seed != self.epoch_seed(epoch) or int(offsets[-1]) != self.rows:
            raise errors.InternalError("%s: seed %d and %d rows, expected %d and %d" % (
                path, seed, int(offsets[-1]), self.epoch_seed(epoch), self.rows))
        self._ready = (epoch, path, seed, offsets)
        self.waits[epoch] = time.monotonic() - t0
        if self.epochs is None or epoch + 1 < self.epochs:
            self._own["bg"] = self._start_scatter(epoch + 1, background=True, delete=stale)
        elif stale:
            threading.Thread(target=_unlink, args=(stale,), daemon=True).start()

    def pile_files(self):
        """The pile files in the private directory now, a running scatter's temporary file included (names)."""
        d = self._own.get("dir")
        return sorted(n for n in os.listdir(d) if _PILE_NAME.match(n)) if d else []

    # -- the reader --------------------------------------------------------------------------------------

    def set_epoch(self, epoch):
        """Start epoch `epoch` (int >= 0): in the training process, wait for its pile file (self.waits) and
        start the next epoch's scatter; in a DataLoader worker's copy, only the epoch number changes."""
        super().set_epoch(epoch)
        if self._owner():
            self._prepare(self.epoch)

    def __iter__(self):
        if self._owner():
            self._prepare(self.epoch)
        return super().__iter__()

    def _open(self, workers):
        if self._ready is None or self._ready[0] != self.epoch:
            raise RuntimeError("h5shuf.Epochs: epoch %d's pile file is not ready in this process: call "
                               "set_epoch(%d) in the training process before iterating through DataLoader "
                               "workers" % (self.epoch, self.epoch))
        _, path, seed, offsets = self._ready
        return readers._Piles(path, seed, offsets, self._keys)

    def state_dict(self, batches_done=None):
        """The position: the readers' state (epoch, batches_done, ranks...) and this object's seed."""
        out = super().state_dict(batches_done)
        out["kind"], out["seed"] = STATE_KIND, self.seed
        return out

    def load_state_dict(self, state):
        """Resume from state_dict() of an Epochs of the same inputs and seed (at any world size: the readers'
        rule).  The state's epoch is made ready at the next set_epoch or iteration.  Raises ValueError
        for a state of another seed or setup."""
        if state.get("kind") != STATE_KIND or int(state.get("seed", -1)) != self.seed:
            raise ValueError("not a state of an h5shuf.Epochs of seed %d: kind %r, seed %r" % (
                self.seed, state.get("kind"), state.get("seed")))
        super().load_state_dict(state)

    def close(self):
        """Stop a running scatter and remove the directory and its pile files (training process only)."""
        self._ready = None
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        # A DataLoader worker started by spawn gets a copy without the process handle: a reader only.
        d = dict(self.__dict__)
        d["_own"] = {"pid": None, "dir": self._own.get("dir")}
        d["_finalizer"] = None
        return d
