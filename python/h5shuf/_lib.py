# SPDX-License-Identifier: BSD-3-Clause
"""_lib.py - the ctypes glue: finding libh5shuf, the mirrors of its public structs, its functions.

The library is found in this order: the file named by $H5SHUF_LIBRARY; the one a pip install built
into the package (_bin/libh5shuf.so.1, setup.py); the one `cmake --install` recorded beside this
package (_installed.py); the system's (ctypes.util.find_library, i.e. the
ldconfig cache); the build tree of a source checkout (build/libh5shuf.so beside python/).  It is loaded
on first use, so `import h5shuf` works without it (the readers need only h5py and numpy).

The structs mirror include/h5shuf.h field for field; tests/python_api.py compares every offset and size
with the C compiler's (tests/layout_probe.c), so a change to the header that is not made here fails.  Each
begins with struct_size, set to the mirror's size when it is made (h5shuf.h, "The ABI"): the library reads
and fills a mirror only as far as it reaches.
"""

import ctypes
import ctypes.util
import os
import threading

from . import __version__

# include/h5shuf.h's enums
PHASE_SCATTER, PHASE_SPLIT, PHASE_GATHER, PHASE_CREATE, PHASE_SELECT, PHASE_VERIFY = 1, 2, 3, 4, 5, 6
PHASE_NAMES = {PHASE_SCATTER: "scatter", PHASE_SPLIT: "split", PHASE_GATHER: "gather", PHASE_CREATE: "create",
               PHASE_SELECT: "select", PHASE_VERIFY: "verify"}
OVERSIZE = {"recurse": 0, "restart": 1}
STRATEGY = {"auto": 0, "two-pass": 1, "direct": 2}
STRATEGY_DIRECT = 2

PROGRESS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64)

_u64, _int, _str, _uint = ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint

# The SONAME: what a pip install bundles, and the ABI this package's mirrors are of.
SONAME = "libh5shuf.so.1"


class _Sized(ctypes.Structure):
    """A public struct that begins with struct_size: set to the mirror's sizeof when it is made."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.struct_size = ctypes.sizeof(self)


class Options(_Sized):
    """h5shuf_options (filled with the defaults by h5shuf_options_init_size, _run.py)."""
    _fields_ = [
        ("struct_size", ctypes.c_size_t), ("seed", _u64), ("seed_set", _int), ("mem_limit_bytes", _u64),
        ("tmpdir", _str), ("on_oversize", _int), ("force", _int), ("progress", PROGRESS_FN),
        ("progress_user", ctypes.c_void_p), ("compression", _str), ("chunk_shape", _str), ("index_path", _str),
        ("scratch_compression", _str), ("threads", _uint),
        ("source_index_path", _str), ("shards", _u64), ("split", _str), ("head_rows", _u64), ("head_set", _int),
        ("drop_references", _int), ("allow_lossy", _int), ("check", _int), ("strategy", _int),
        ("allow_external", _int), ("checkpoint_bytes", _u64), ("checkpoint_seconds", ctypes.c_double),
        ("resume", _int), ("checkpoint_sync", _int), ("mix", _str), ("mix_rows", _u64), ("mix_rows_set", _int),
        ("allow_repeat", _int), ("stratify", _int), ("reserved0", _int),
    ]


# The fields of h5shuf_plan in the order of the header (the --json report names most of them).
PLAN_FIELDS = [
    "rows", "row_bytes", "total_bytes", "ndatasets", "piles", "pile_target_rows", "pile_bound_rows", "slab_rows",
    "pile_buffer_rows", "mem_limit_bytes", "mem_planned_bytes", "seed", "restarts", "splits", "scratch_bytes",
    "pile_bound_bytes", "input_stored_bytes", "scratch_estimate_bytes", "output_estimate_bytes",
    "scratch_free_bytes", "output_free_bytes",
]


class Plan(_Sized):
    """h5shuf_plan."""
    _fields_ = [("struct_size", ctypes.c_size_t)] + [(name, _u64) for name in PLAN_FIELDS] + [
        ("same_filesystem", _int), ("threads", _uint), ("pipelined", _int), ("strategy", _int),
        ("direct_windows", _u64), ("direct_slots", _u64), ("direct_min_bytes", _u64), ("slab_cache_bytes", _u64),
        ("exchanged_bytes", _u64),
    ]


class Mixing(_Sized):
    """h5shuf_mixing."""
    _fields_ = [
        ("struct_size", ctypes.c_size_t), ("window_rows", _u64), ("first_row", _u64), ("ninputs", ctypes.c_size_t),
        ("counts", ctypes.POINTER(_u64)), ("expected", ctypes.POINTER(ctypes.c_double)), ("chi2", ctypes.c_double),
        ("df", _u64), ("p_value", ctypes.c_double),
    ]


class MixingWindows(_Sized):
    """h5shuf_mixing_windows."""
    _fields_ = [
        ("struct_size", ctypes.c_size_t), ("window_rows", _u64), ("windows", _u64), ("rows_min", _u64),
        ("rows_max", _u64), ("chi2", ctypes.c_double),
        ("df", _u64), ("p_value", ctypes.c_double), ("worst_chi2", ctypes.c_double), ("worst_first_row", _u64),
        ("worst_rows", _u64), ("worst_p_value", ctypes.c_double), ("below_001", _u64),
    ]


_JOB = ctypes.c_void_p
# name: (restype, argtypes)
_FUNCTIONS = {
    "h5shuf_options_init_size": (None, [ctypes.POINTER(Options), ctypes.c_size_t]),
    "h5shuf_job_create": (_JOB, [ctypes.POINTER(Options)]),
    "h5shuf_job_free": (None, [_JOB]),
    "h5shuf_job_add_input": (_int, [_JOB, _str]),
    "h5shuf_job_mix_text": (_str, [_JOB]),
    "h5shuf_job_set_output": (_int, [_JOB, _str]),
    "h5shuf_job_set_piles": (_int, [_JOB, _str]),
    "h5shuf_job_plan": (_int, [_JOB, ctypes.POINTER(Plan)]),
    "h5shuf_run": (_int, [_JOB]),
    "h5shuf_run_scatter": (_int, [_JOB]),
    "h5shuf_run_gather": (_int, [_JOB]),
    "h5shuf_verify": (_int, [_JOB]),
    "h5shuf_job_seed": (_u64, [_JOB]),
    "h5shuf_job_warning": (_str, [_JOB, ctypes.c_size_t]),
    "h5shuf_job_strategy_why": (_str, [_JOB]),
    "h5shuf_job_verify_text": (_str, [_JOB]),
    "h5shuf_job_dataset": (_str, [_JOB, ctypes.c_size_t]),
    "h5shuf_job_output_file": (_str, [_JOB, ctypes.c_size_t, ctypes.POINTER(_u64), ctypes.POINTER(_u64)]),
    "h5shuf_job_mixing": (_int, [_JOB, _u64, ctypes.POINTER(Mixing), ctypes.POINTER(Mixing)]),
    "h5shuf_job_mixing_windows": (_int, [_JOB, _u64, ctypes.POINTER(MixingWindows)]),
    "h5shuf_errmsg": (_str, [_JOB]),
    "h5shuf_strerror": (_str, [_int]),
    "h5shuf_register_filters": (_int, []),
    "h5shuf_version": (_str, []),
    "h5shuf_version_number": (_uint, []),
    "h5shuf_hdf5_version": (_str, []),
    "h5shuf_hdf5_threadsafe": (_int, []),
    "h5shuf_key": (_u64, [_u64, _u64]),
    "h5shuf_parse_size": (_int, [_str, ctypes.POINTER(_u64)]),
}

_lock = threading.Lock()
_lib = None
_path = None


class LibraryNotFound(ImportError):
    """libh5shuf could not be loaded; the message lists the places tried."""


def candidates():
    """The files tried, in order: [(where, path)].  $H5SHUF_LIBRARY, when set, is the only one."""
    env = os.environ.get("H5SHUF_LIBRARY")
    if env:
        return [("$H5SHUF_LIBRARY", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    bundled = os.path.join(here, "_bin", SONAME)  # pip install / wheel (setup.py)
    if os.path.exists(bundled):
        out.append(("package", bundled))
    try:
        from . import _installed  # written by cmake --install
        out.append(("installed", _installed.LIBRARY))
    except ImportError:
        pass
    found = ctypes.util.find_library("h5shuf")
    if found:
        out.append(("system", found))
    out.append(("build tree", os.path.join(here, "..", "..", "build", "libh5shuf.so")))
    return out


def _bind(lib):
    for name, (restype, argtypes) in _FUNCTIONS.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    version = lib.h5shuf_version().decode()
    if version.split(".")[:2] != __version__.split(".")[:2]:
        raise LibraryNotFound("libh5shuf %s does not match the h5shuf package %s" % (version, __version__))


def lib():
    """The loaded library (ctypes.CDLL), loading it on first use.  Raises LibraryNotFound."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for where, path in candidates():
            if where == "build tree" and not os.path.exists(path):
                tried.append("%s (%s): absent" % (path, where))
                continue
            try:
                cdll = ctypes.CDLL(path)
                _bind(cdll)
            except (OSError, AttributeError) as exc:
                tried.append("%s (%s): %s" % (path, where, exc))
                continue
            _lib, _path = cdll, path
            return _lib
        raise LibraryNotFound("h5shuf: cannot load libh5shuf; tried " + "; ".join(tried))


def path():
    """The file the library was loaded from (loading it if needed)."""
    lib()
    return _path


def text(raw):
    """A C string from the library as str (None stays None): UTF-8, a byte that is not part of valid UTF-8
    (a file name's, say) as the lone surrogate U+DC80 + byte, as os.fsdecode makes it and as the tool's
    --json writes it ("\\udcXX"), so os.fsencode gives the bytes back."""
    return None if raw is None else raw.decode("utf-8", "surrogateescape")
