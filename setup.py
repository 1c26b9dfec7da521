# SPDX-License-Identifier: BSD-3-Clause
"""setup.py - the build step of the PEP 517 package (pyproject.toml has the metadata).

`pip install .` / `pip wheel .` run this through setuptools.build_meta.  build_py configures and builds
the project's own CMake (the shared library and the tool only: no tests, no MPI, no install rules), in
build-pip/cmake (reused by the next build of the same checkout), then copies into the package:

    h5shuf/_bin/libh5shuf.so.1   the library python/h5shuf/_lib.py loads first (before any installed one)
    h5shuf/_bin/h5shuf           the command-line tool, run by the `h5shuf` console script (h5shuf._cli)

Both link Debian's HDF5 and codec libraries from the system, as the cmake build does: a wheel installs in
any virtual environment of a machine with those libraries (the same machine, or one with the same -dev
packages' runtime libraries).  The wheel is tagged py3-none-<platform>: it holds native code but no
Python extension module, so any Python 3 of that platform can load it.

Environment: H5SHUF_CMAKE_ARGS, extra configure flags (e.g. "-DHDF5_ROOT=/opt/hdf5"); H5SHUF_BUILD_JOBS,
parallel compile jobs (default: the number of CPUs).
"""

import os
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:
    try:  # setuptools 70.1 and later have their own
        from setuptools.command.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None
if bdist_wheel is None and {"bdist_wheel", "dist_info"} & set(sys.argv):
    # pip install --no-build-isolation builds a wheel with this interpreter's own packages; without the wheel
    # package setuptools says only "invalid command 'bdist_wheel'" (a pyenv or python.org Python's venv)
    sys.exit("h5shuf: building needs the 'wheel' package in %s: use Debian's /usr/bin/python3 with "
             "python3-wheel (docs/python.md, \"Installing\"), or run 'pip install setuptools wheel' in this "
             "environment first, or leave out --no-build-isolation" % sys.executable)

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithCMake(build_py):
    """build_py, then libh5shuf.so.1 and the h5shuf tool built by CMake, copied into the package's _bin/."""

    def run(self):
        super().run()
        build_base = self.get_finalized_command("build").build_base
        cmake_dir = os.path.join(os.path.abspath(build_base), "cmake")
        jobs = os.environ.get("H5SHUF_BUILD_JOBS") or str(os.cpu_count() or 1)
        configure = ["cmake", "-S", HERE, "-B", cmake_dir, "-DCMAKE_BUILD_TYPE=Release",
                     "-DH5SHUF_BUILD_TESTS=OFF", "-DH5SHUF_PYTHON=OFF", "-DH5SHUF_MPI=OFF"]
        configure += shlex.split(os.environ.get("H5SHUF_CMAKE_ARGS", ""))
        self.announce("h5shuf: " + " ".join(configure), level=2)
        subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", cmake_dir, "-j", jobs, "--target", "h5shuf_shared", "h5shuf"],
                       check=True)
        dest = os.path.join(self.build_lib, "h5shuf", "_bin")
        os.makedirs(dest, exist_ok=True)
        # The SONAME's file (libh5shuf.so.1, a link to libh5shuf.so.1.0.1.0; python/h5shuf/_lib.py SONAME):
        # copied as the file it names.
        for src, name in ((os.path.join(cmake_dir, "libh5shuf.so.1"), "libh5shuf.so.1"),
                          (os.path.join(cmake_dir, "h5shuf"), "h5shuf")):
            out = os.path.join(dest, name)
            if os.path.lexists(out):
                os.unlink(out)
            shutil.copy2(os.path.realpath(src), out)
            os.chmod(out, 0o755)


class BinaryDistribution(Distribution):
    """A distribution with native code: its wheel gets a platform tag (not py3-none-any)."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithCMake}
if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """py3-none-<platform>: native code loaded through ctypes, no CPython extension ABI."""

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = PlatformWheel

# build-pip/: not build/, which is the CMake build directory of scripts/build.sh.
setup(cmdclass=cmdclass, distclass=BinaryDistribution, options={"build": {"build_base": "build-pip"}})
