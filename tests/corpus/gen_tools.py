# SPDX-License-Identifier: BSD-3-Clause
"""Corpus files written by HDF5's own command-line tools (hdf5-tools) and h5shuf_gendata.

- tools-import: h5import of two text files: /data/x (N, 4) big-endian float64, chunks (50, 4), deflate 6,
  extendible along rows; /data/y (N,) int16 contiguous.
- tools-repack: h5shuf_gendata's example file through h5repack -f GZIP=6 -l X:CHUNK=64x4x8x3 -l
  ids:CHUNK=100: every dataset deflated, X's chunks splitting its rows (64 rows x half a row).
- tools-h5copy: a file assembled by h5copy -p from the example: /train/images, /train/labels,
  /train/ids (records) and /classes, in groups h5copy creates.
"""

import os
import shutil
import subprocess

import numpy as np

TOOLS = ("h5import", "h5repack", "h5copy")
MISSING = None if all(shutil.which(t) for t in TOOLS) else "hdf5-tools is not installed (h5import, h5repack, h5copy)"

X_CONF = """PATH /data/x
INPUT-CLASS TEXTFP
INPUT-SIZE 64
RANK 2
DIMENSION-SIZES {n} 4
OUTPUT-CLASS FP
OUTPUT-SIZE 64
OUTPUT-ARCHITECTURE IEEE
OUTPUT-BYTE-ORDER BE
CHUNKED-DIMENSION-SIZES 50 4
COMPRESSION-TYPE GZIP
COMPRESSION-PARAM 6
MAXIMUM-DIMENSIONS -1 4
"""

Y_CONF = """PATH /data/y
INPUT-CLASS TEXTIN
INPUT-SIZE 32
RANK 1
DIMENSION-SIZES {n}
OUTPUT-CLASS IN
OUTPUT-SIZE 16
OUTPUT-ARCHITECTURE STD
OUTPUT-BYTE-ORDER LE
"""


def _run(*args):
    subprocess.run([str(a) for a in args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)


def _import(d):
    path = os.path.join(d, "tools-import.h5")
    rng = np.random.default_rng(31)
    n = 300
    src = os.path.join(d, "import-src")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "x.txt"), "w") as f:
        for row in rng.standard_normal((n, 4)) * 100:
            f.write(" ".join("%.6f" % v for v in row) + "\n")
    with open(os.path.join(src, "y.txt"), "w") as f:
        for v in rng.integers(-30000, 30000, n):
            f.write("%d\n" % v)
    for name, conf in (("x", X_CONF), ("y", Y_CONF)):
        with open(os.path.join(src, name + ".conf"), "w") as f:
            f.write(conf.format(n=n))
    _run("h5import", os.path.join(src, "x.txt"), "-c", os.path.join(src, "x.conf"),
         os.path.join(src, "y.txt"), "-c", os.path.join(src, "y.conf"), "-o", path)
    return {"name": "tools-import", "file": path, "records": ["/data/x", "/data/y"]}


def _repack(d, example):
    path = os.path.join(d, "tools-repack.h5")
    _run("h5repack", "-f", "GZIP=6", "-l", "X:CHUNK=64x4x8x3", "-l", "ids:CHUNK=100", example, path)
    return {"name": "tools-repack", "file": path, "records": ["/X", "/y", "/ids"]}


def _h5copy(d, example):
    path = os.path.join(d, "tools-h5copy.h5")
    _run("h5copy", "-p", "-i", example, "-o", path, "-s", "/X", "-d", "/train/images")
    _run("h5copy", "-i", example, "-o", path, "-s", "/y", "-d", "/train/labels")
    _run("h5copy", "-i", example, "-o", path, "-s", "/ids", "-d", "/train/ids")
    _run("h5copy", "-i", example, "-o", path, "-s", "/classes", "-d", "/classes")
    return {"name": "tools-h5copy", "file": path, "records": ["/train/images", "/train/labels", "/train/ids"]}


def generate(d, gendata):
    """Write the hdf5-tools corpus into directory d (gendata: the h5shuf_gendata binary); return its cases."""
    example = os.path.join(d, "gendata-example.h5")
    _run(gendata, "example", example)
    return [dict(c, writer="tools", kind="hdf5") for c in (_import(d), _repack(d, example), _h5copy(d, example))]
