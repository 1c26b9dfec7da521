#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/licence.py - the licence of every source file: LICENSE at the root is the BSD 3-Clause licence,
and every source file carries `SPDX-License-Identifier: BSD-3-Clause` within its first 3 lines.

    licence.py ROOT    check the tree at ROOT; exit 1 naming every file without the line

The files: those git tracks when ROOT is the top of a git checkout (CI's fresh clone, scripts/chroot.sh's
clone), else a walk of ROOT (a copy without .git, such as chsync's), skipping build*/ folders, .git and
__pycache__.  A source file is any CMakeLists.txt, any .c .h .py .sh .cmake .in file, and every file
under .ci/, bench/ and scripts/ (scripts without an extension); the fuzzers' corpus
(tests/fuzz/corpus) is data, and so are the files of other extensions (testdata's .h5, tests/abi's .gz,
the .supp and .expected lists, the docs).
"""
import os
import subprocess
import sys

SPDX = "SPDX-License-Identifier: BSD-3-Clause"
EXTENSIONS = (".c", ".h", ".py", ".sh", ".cmake", ".in")
SCRIPT_DIRS = (".ci/", "bench/", "scripts/")
DATA_DIRS = ("tests/fuzz/corpus/",)
# The BSD 3-Clause licence's own sentences, as LICENSE must hold them (whitespace aside).
LICENCE_TEXT = (
    "Redistribution and use in source and binary forms, with or without modification, are permitted "
    "provided that the following conditions are met:",
    "Redistributions of source code must retain the above copyright notice, this list of conditions and "
    "the following disclaimer.",
    "Redistributions in binary form must reproduce the above copyright notice, this list of conditions and "
    "the following disclaimer in the documentation and/or other materials provided with the distribution.",
    "Neither the name of the copyright holder nor the names of its contributors may be used to endorse or "
    "promote products derived from this software without specific prior written permission.",
    "THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS \"AS IS\"",
)


def is_source(path):
    """path: relative to the root, '/'-separated."""
    if path.startswith(DATA_DIRS):
        return False
    name = path.rsplit("/", 1)[-1]
    return name == "CMakeLists.txt" or name.endswith(EXTENSIONS) or path.startswith(SCRIPT_DIRS)


def tracked(root):
    """The files git tracks when root is the top of a git checkout, else None."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            return None
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode().split("\0") if p]


def walked(root):
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not (x.startswith("build") or x in (".git", "__pycache__")))
        for n in names:
            files.append(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
    return sorted(files)


def has_spdx(path):
    with open(path, "rb") as f:
        head = [f.readline() for _ in range(3)]
    return any(SPDX.encode() in line for line in head)


def main(argv):
    if len(argv) != 2:
        print("usage: licence.py ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    problems = []
    try:
        with open(os.path.join(root, "LICENSE"), encoding="utf-8") as f:
            text = " ".join(f.read().split())
        if not text.startswith("BSD 3-Clause License"):
            problems.append("LICENSE: does not begin with 'BSD 3-Clause License'")
        if "Copyright (c) 2026, the h5shuf authors" not in text:
            problems.append("LICENSE: no line 'Copyright (c) 2026, the h5shuf authors'")
        for sentence in LICENCE_TEXT:
            if sentence not in text:
                problems.append("LICENSE: lacks the BSD-3-Clause text '%s...'" % sentence[:50])
    except OSError as e:
        problems.append("LICENSE: %s" % e.strerror)
    files = tracked(root)
    how = "git ls-files"
    if files is None:
        files, how = walked(root), "a walk of the tree"
    sources = [p for p in files if is_source(p) and os.path.isfile(os.path.join(root, p))]
    missing = [p for p in sources if not has_spdx(os.path.join(root, p))]
    for p in missing:
        problems.append("%s: no '%s' in its first 3 lines" % (p, SPDX))
    for line in problems:
        print("licence: " + line)
    print("licence: %d source files (%s), %d without the SPDX line; LICENSE %s"
          % (len(sources), how, len(missing),
             "bad" if any(x.startswith("LICENSE") for x in problems) else "BSD-3-Clause"))
    if len(sources) < 100:
        print("licence: fewer than 100 source files found under %s: the wrong root?" % root)
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
