# SPDX-License-Identifier: BSD-3-Clause
"""_run.py - shuffle, plan, scatter, gather and verify: a job of the library built, run and reported.

Each function does what the command-line tool does for the same arguments (src/cli/commands.c), through
the same public API, so the output bytes are the tool's; it returns the report the tool's --json prints
(src/cli/report.c: the same keys and values) as a dict.  A failure raises the h5shuf.Error subclass of
its status with the library's one-line message.

Ctrl-C: while a run is going on in the main thread, SIGINT only sets a flag (Python runs the handler when
the library next calls back, after a block of a few MiB); the callback then returns nonzero, the library
cancels the run and removes its temporary files, and KeyboardInterrupt is raised (through the handler that
was there before).  The other signals that end a process and that a terminal, a pipe or a scheduler sends
(SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGXCPU), when their disposition is the default one,
cancel the run the same way, as the tool does; once the run has cleaned up, the default disposition is put
back and the signal raised again, so the process ends of it as it would have (a handler of the caller's,
or an ignored signal, is left alone).  An exception raised by a progress callable cancels the run the same
way and is re-raised once the run has cleaned up.
"""

import ctypes
import decimal
import fractions
import os
import resource
import signal
import threading
import time
import warnings

from . import _lib, _progress, errors

OPTION_NAMES = ("chunk_rows", "scratch_compression", "tmpdir", "on_oversize", "strategy", "split", "head",
                "source_index", "check", "force", "drop_references", "allow_lossy", "allow_external",
                "mixing_window", "resume", "checkpoint", "checkpoint_sync", "mix", "rows", "allow_repeat",
                "stratify")


class H5shufWarning(UserWarning):
    """Something a run did that its options allowed but a user should know (the tool's "warning:" lines)."""


def _bytes(s):
    return os.fsencode(s) if s is not None else None


def _size(memory):
    """A budget in bytes from an int or a size text ("512M", "1G"; K = 1024)."""
    if isinstance(memory, bool) or not isinstance(memory, (int, str)):
        raise TypeError("memory: an int (bytes) or a size such as '512M', not %r" % (memory,))
    if isinstance(memory, int):
        if not 0 < memory < 2 ** 64:
            raise errors.InvalidArgumentError("memory: %d bytes is out of range" % memory)
        return memory
    out = ctypes.c_uint64()
    if _lib.lib().h5shuf_parse_size(memory.encode(), ctypes.byref(out)) != 0:
        raise errors.InvalidArgumentError("memory: '%s' is not a size (e.g. 512M, 1G)" % memory)
    return out.value


def _weight_text(w):
    """A weight as the spec's "@W" takes it: decimal digits, no exponent ("2.5", "0.25", "3")."""
    if isinstance(w, str):
        return w
    if isinstance(w, bool) or not isinstance(w, (int, float, decimal.Decimal)):
        raise errors.InvalidArgumentError("a weight is a number, not %r" % (w,))
    d = decimal.Decimal(repr(w)) if isinstance(w, float) else decimal.Decimal(w)
    if not d.is_finite() or d < 0:
        raise errors.InvalidArgumentError("a weight must be a finite number, 0 or more, not %r" % (w,))
    return format(d.normalize(), "f")


def _specs(inputs):
    """The input specs: a spec, a list of specs or of (spec, weight) pairs, or a {spec: weight} dict."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    if isinstance(inputs, dict):
        inputs = list(inputs.items())
    specs = [os.fsdecode(x[0]) + "@" + _weight_text(x[1]) if isinstance(x, tuple) else os.fsdecode(x)
             for x in inputs]
    if not specs:
        raise errors.InvalidArgumentError("no input")
    return specs


def _fraction_text(f):
    """A --split fraction as the library parses it exactly: a Fraction as "p/q", a Decimal or an int as
    written, a float as its shortest repr ("0.1", not the binary value's 55 digits)."""
    if isinstance(f, str):
        return f
    if isinstance(f, fractions.Fraction):
        return "%d/%d" % (f.numerator, f.denominator)
    if isinstance(f, (int, decimal.Decimal)) and not isinstance(f, bool):
        return str(f)
    return repr(float(f))


def _split_text(split):
    if split is None or isinstance(split, str):
        return split
    return ",".join("%s=%s" % (name, _fraction_text(f)) for name, f in dict(split).items())


def _options(seed, memory, compression, shards, index, threads, extra):
    """h5shuf_options from the keyword arguments (extra: OPTION_NAMES)."""
    unknown = sorted(set(extra) - set(OPTION_NAMES))
    if unknown:
        raise TypeError("unknown option%s: %s" % ("s" if len(unknown) > 1 else "", ", ".join(unknown)))
    o = _lib.Options()
    _lib.lib().h5shuf_options_init_size(ctypes.byref(o), ctypes.sizeof(o))
    if seed is not None:
        if not 0 <= int(seed) < 2 ** 64:
            raise errors.InvalidArgumentError("seed: %d is not a 64-bit unsigned integer" % seed)
        o.seed, o.seed_set = int(seed), 1
    o.mem_limit_bytes = _size(memory)
    o.compression, o.index_path = _bytes(compression), _bytes(index)
    o.shards, o.threads = int(shards or 0), int(threads)
    chunk = extra.get("chunk_rows")
    o.chunk_shape = _bytes(str(chunk)) if chunk is not None else None
    o.scratch_compression = _bytes(extra.get("scratch_compression"))
    o.tmpdir = _bytes(os.fspath(extra["tmpdir"])) if extra.get("tmpdir") is not None else None
    for name, table, field in (("on_oversize", _lib.OVERSIZE, "on_oversize"), ("strategy", _lib.STRATEGY, "strategy")):
        value = extra.get(name)
        if value is not None:
            if value not in table:
                raise errors.InvalidArgumentError("%s: '%s' is not one of %s" % (name, value, ", ".join(table)))
            setattr(o, field, table[value])
    o.split = _bytes(_split_text(extra.get("split")))
    if extra.get("head") is not None:
        o.head_rows, o.head_set = int(extra["head"]), 1
    o.source_index_path = _bytes(extra.get("source_index"))
    mix = extra.get("mix")
    if isinstance(mix, dict):  # {"web": 0.7, "code": 0.3}
        mix = ",".join("%s=%s" % (name, _weight_text(p)) for name, p in mix.items())
    o.mix = _bytes(mix)
    if extra.get("rows") is not None:
        o.mix_rows, o.mix_rows_set = int(extra["rows"]), 1
    for flag in ("check", "force", "drop_references", "allow_lossy", "allow_external", "resume", "checkpoint_sync",
                 "allow_repeat", "stratify"):
        setattr(o, flag, 1 if extra.get(flag) else 0)
    checkpoint = extra.get("checkpoint")
    if checkpoint is not None:  # a size ("1G", bytes), (size, seconds), or "off"/False
        if checkpoint in ("off", False):
            o.checkpoint_bytes = 0
        else:
            size, secs = checkpoint if isinstance(checkpoint, tuple) else (checkpoint, None)
            o.checkpoint_bytes = _size(size)
            if secs is not None:
                o.checkpoint_seconds = float(secs)
    return o


# The signals that cancel a run in the main thread (_Signals): SIGINT through Python's handler, the others
# when their disposition is the default (the process would end without removing the run's files).
_CANCEL_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGPIPE", "SIGUSR1",
                                                            "SIGUSR2", "SIGXCPU") if hasattr(signal, name))


class _Signals:
    """A signal during a run: the handler only records it (the first one), which the progress callback turns
    into a cancel; deliver() then hands it on once the run has cleaned up."""

    def __init__(self):
        self.hit = None
        self.previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT,) + _CANCEL_SIGNALS:
                previous = signal.getsignal(sig)
                if (previous not in (signal.SIG_IGN, None)) if sig == signal.SIGINT else previous == signal.SIG_DFL:
                    self.previous[sig] = previous
                    signal.signal(sig, self._handler)
        return self

    def _handler(self, signum, frame):
        if self.hit is None:
            self.hit = signum

    def __exit__(self, *exc):
        for sig, previous in self.previous.items():
            signal.signal(sig, previous)
        return False

    def deliver(self):
        """Hand a signal that came during the run to what was there before: Ctrl-C to the previous handler
        (KeyboardInterrupt), another signal to its default action (the process ends of it)."""
        if self.hit is None:
            return
        if self.hit == signal.SIGINT:
            previous = self.previous.get(signal.SIGINT)
            if callable(previous):
                previous(signal.SIGINT, None)
            raise KeyboardInterrupt
        signal.raise_signal(self.hit)  # (its default disposition is back: this ends the process)
        raise errors.CanceledError("canceled by signal %d" % self.hit)


class _Callback:
    """The progress callback of one run: records passes, draws, calls the user's callable, cancels."""

    def __init__(self, progress, signals):
        self.user = progress if callable(progress) else None
        self.display = _progress.Display() if progress is True else None
        self.signals = signals
        self.passes = _progress.Passes(0)
        self.exc = None
        self.fn = _lib.PROGRESS_FN(self._call)

    def _call(self, _user, phase, done, total):
        try:
            if phase != _lib.PHASE_CREATE and self.exc is None:
                ended = self.passes.update(phase, done, total)
                if ended and self.display:
                    self.display.end(ended)
                name = _lib.PHASE_NAMES.get(phase, "?")
                if self.display:
                    self.display.update(name, done, total, self.passes.row_bytes)
                if self.user:
                    self.user(name, done, total)
        except BaseException as exc:  # noqa: B902 - KeyboardInterrupt too: it cancels the run
            if self.exc is None:
                self.exc = exc
        return 1 if self.exc is not None or self.signals.hit is not None else 0

    def finish(self):
        ended = self.passes.finish()
        if ended and self.display:
            self.display.end(ended)


class _Job:
    """One h5shuf_job: created from options, freed on exit; check() raises a status as its Error."""

    def __init__(self, options):
        self.lib = _lib.lib()
        self.job = self.lib.h5shuf_job_create(ctypes.byref(options))
        if not self.job:
            raise errors.OutOfMemoryError("out of memory")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lib.h5shuf_job_free(self.job)
        self.job = None
        return False

    def check(self, status):
        if status != 0:
            raise errors.from_status(status, _lib.text(self.lib.h5shuf_errmsg(self.job)))

    def listed(self, fn, *args):
        """[fn(job, k, *args) for k = 0, 1, ... until it returns NULL], as str."""
        out, k = [], 0
        while True:
            item = fn(self.job, k, *args)
            if item is None:
                return out
            out.append(_lib.text(item))
            k += 1


# The "plan" object of the --json report: report.c's fields, in its order.
REPORT_PLAN_FIELDS = ("rows", "row_bytes", "total_bytes", "piles", "pile_target_rows", "pile_bound_rows", "slab_rows",
                      "pile_buffer_rows", "mem_limit_bytes", "mem_planned_bytes", "input_stored_bytes",
                      "scratch_estimate_bytes", "output_estimate_bytes", "scratch_free_bytes", "output_free_bytes",
                      "threads", "pile_bound_bytes", "strategy", "direct_windows", "direct_slots", "direct_min_bytes",
                      "slab_cache_bytes")


def _plan_dict(p):
    d = {name: getattr(p, name) for name in REPORT_PLAN_FIELDS}
    d["strategy"] = "direct" if p.strategy == _lib.STRATEGY_DIRECT else "two-pass"
    return d


def _mixing(job, window):
    first, last = _lib.Mixing(), _lib.Mixing()
    job.check(job.lib.h5shuf_job_mixing(job.job, window, ctypes.byref(first), ctypes.byref(last)))
    out = []
    for name, m in (("first", first), ("last", last)):
        out.append({"window": name, "first_row": m.first_row, "rows": m.window_rows, "chi2": m.chi2, "df": m.df,
                    "p_value": m.p_value, "counts": [m.counts[f] for f in range(m.ninputs)],
                    "expected": [m.expected[f] for f in range(m.ninputs)]})
    return out


def _mixing_windows(job, window):
    m = _lib.MixingWindows()
    job.check(job.lib.h5shuf_job_mixing_windows(job.job, window, ctypes.byref(m)))
    return {name: getattr(m, name) for name, _ in _lib.MixingWindows._fields_ if name != "struct_size"}


def _report(job, p, inputs, output, mixing, cb, seconds, check):
    """The dict the tool's --json prints for this job (cb None: a plan, no passes)."""
    L = job.lib
    r = {"h5shuf_version": _lib.text(L.h5shuf_version()), "status": "ok", "inputs": list(inputs), "output": output,
         "seed": p.seed, "datasets": job.listed(L.h5shuf_job_dataset), "plan": _plan_dict(p)}
    outputs, first, rows = [], ctypes.c_uint64(), ctypes.c_uint64()
    k = 0
    while True:
        name = L.h5shuf_job_output_file(job.job, k, ctypes.byref(first), ctypes.byref(rows))
        if name is None:
            break
        outputs.append({"file": _lib.text(name), "first_row": first.value, "rows": rows.value})
        k += 1
    r["outputs"] = outputs
    mix = _lib.text(L.h5shuf_job_mix_text(job.job))
    if mix:  # --mix: what the plan chose, a string a line
        r["mix"] = mix.splitlines()
    if mixing is not None:
        r["mixing"], r["mixing_windows"] = mixing
    if cb is not None:
        r["passes"] = cb.passes.records
        r["seconds"] = round(seconds, 3)
        r["restarts"], r["piles_split"], r["scratch_bytes"] = p.restarts, p.splits, p.scratch_bytes
        r["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if check:
            r["check"] = "ok"
    return r


def execute(kind, inputs, output, piles, options, progress, mixing_window, plan_only=False):
    """Build a job of `kind` ("shuffle", "scatter", "gather"), plan it, run it unless plan_only; the report.

    inputs: the input specs (a gather: none); output: the output spec (a scatter: none); piles: the pile file.
    """
    t0 = time.monotonic()
    signals = _Signals()
    cb = _Callback(progress, signals)
    options.progress = cb.fn
    with _Job(options) as job:
        L = job.lib
        for spec in inputs:
            job.check(L.h5shuf_job_add_input(job.job, os.fsencode(spec)))
        if output is not None:
            job.check(L.h5shuf_job_set_output(job.job, os.fsencode(output)))
        if piles is not None:
            job.check(L.h5shuf_job_set_piles(job.job, os.fsencode(piles)))
        p = _lib.Plan()
        job.check(L.h5shuf_job_plan(job.job, ctypes.byref(p)))
        if not plan_only:
            cb.passes.row_bytes = p.row_bytes
            run = {"shuffle": L.h5shuf_run, "scatter": L.h5shuf_run_scatter, "gather": L.h5shuf_run_gather}[kind]
            with signals:
                status = run(job.job)
            cb.finish()
            if cb.exc is not None:
                raise cb.exc
            signals.deliver()
            job.check(status)
            job.check(L.h5shuf_job_plan(job.job, ctypes.byref(p)))  # the run's figures: restarts, splits...
        for text in job.listed(L.h5shuf_job_warning):
            warnings.warn(text, H5shufWarning, stacklevel=3)
        shown = [piles] if kind == "gather" else inputs
        mixing = (_mixing(job, mixing_window), _mixing_windows(job, mixing_window)) \
            if mixing_window is not None and len(shown) > 1 else None
        return _report(job, p, shown, piles if kind == "scatter" else output, mixing,
                       None if plan_only else cb, time.monotonic() - t0, options.check)


def verify(inputs, outputs, memory, threads):
    """h5shuf_verify over specs; outputs: the files of a set after the inputs, the last one the job's output
    (the library takes the others back from the end of the inputs); raises the Error of a failed check."""
    t0 = time.monotonic()
    o = _options(None, memory, None, None, None, threads, {})
    with _Job(o) as job:
        L = job.lib
        for spec in list(inputs) + outputs[:-1]:
            job.check(L.h5shuf_job_add_input(job.job, os.fsencode(spec)))
        job.check(L.h5shuf_job_set_output(job.job, os.fsencode(outputs[-1])))
        job.check(L.h5shuf_verify(job.job))
        checked = _lib.text(L.h5shuf_job_verify_text(job.job))
    return {"h5shuf_version": _lib.text(L.h5shuf_version()), "status": "ok", "inputs": list(inputs),
            "output": outputs[-1] if len(outputs) == 1 else list(outputs), "checked": checked,
            "seconds": round(time.monotonic() - t0, 3)}
