# SPDX-License-Identifier: BSD-3-Clause
"""python_env: what the tests of the Python package (python_api.py, python_readers.py) share.

usage of those tests: /usr/bin/python3 tests/python_X.py H5SHUF LIBH5SHUF.so LAYOUT_PROBE PYTHON_DIR HEADER
       [--sanitized ASAN_RUNTIME]

The package is imported from PYTHON_DIR (the source tree's python/) with $H5SHUF_LIBRARY naming the
build's libh5shuf.so, so the tests never pick up an installed one.  In a sanitizer build the library is
instrumented: /usr/bin/python3 can load it only with the ASan runtime first in the process, so ctest
passes its path and the test re-executes itself with LD_PRELOAD set and LeakSanitizer off (the
interpreter, numpy, h5py and torch keep memory to the end, thousands of reports that are not the
library's; its own leaks are the CLI and C suites' concern).  ASan and UBSan stay on.  Without a runtime
path the test skips (77), saying why.
"""

import os
import sys
import tempfile

import oracle_h5py as orc

ARGS = None


def setup():
    """Parse argv, re-execute under the ASan runtime if needed, import the package; returns the args."""
    global ARGS
    argv = sys.argv[1:]
    runtime = None
    if "--sanitized" in argv:
        i = argv.index("--sanitized")
        runtime = argv[i + 1] if i + 1 < len(argv) else ""
        del argv[i:i + 2]
    if len(argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    h5shuf_exe, library, probe, pydir, header = (os.path.abspath(a) for a in argv)
    if runtime is not None and "libasan" not in os.environ.get("LD_PRELOAD", ""):
        if not runtime or not os.path.isabs(runtime) or not os.path.exists(runtime):
            print("SKIP: sanitizer build and no ASan runtime to preload (%r): /usr/bin/python3 cannot load the "
                  "instrumented libh5shuf.so" % runtime, flush=True)
            sys.exit(77)
        env = dict(os.environ, LD_PRELOAD=runtime,
                   ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":abort_on_error=1:detect_leaks=0")
        print("sanitizer build: re-executing with LD_PRELOAD=%s, ASan and UBSan on, LeakSanitizer off" % runtime,
              flush=True)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    os.environ["H5SHUF_LIBRARY"] = library
    sys.path.insert(0, pydir)
    ARGS = type("Args", (), dict(h5shuf=h5shuf_exe, library=library, probe=probe, pydir=pydir, header=header))
    return ARGS


def dataloader_order(gens):
    """Batches in the order a DataLoader takes them from its workers: in turn, skipping finished ones."""
    out, live = [], list(gens)
    while live:
        for g in list(live):
            try:
                out.append(next(g))
            except StopIteration:
                live.remove(g)
    return out


def main(cases):
    """Run cases [(name, fn)] in a temporary directory (also $TMPDIR); print the tally; exit status."""
    with tempfile.TemporaryDirectory(prefix="h5shuf_python.") as tmp:
        os.environ["TMPDIR"] = tmp
        for name, fn in cases:
            d = os.path.join(tmp, name.replace(" ", "_").replace("/", "_"))
            os.makedirs(d)
            orc.run_case(name, fn, d)
    print("%d passed, %d failed" % (orc.PASSED, orc.FAILED), flush=True)
    return 0 if orc.FAILED == 0 else 1
