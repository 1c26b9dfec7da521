# SPDX-License-Identifier: BSD-3-Clause
"""_cli.py - the `h5shuf` console script of a pip install: runs the tool bundled in the package.

pip installs the tool built with the library as h5shuf/_bin/h5shuf (setup.py) and this script as the
venv's bin/h5shuf; main() replaces the Python process with the tool (exec), so its options, output,
exit status and signal handling (Ctrl-C removes its scratch) are the tool's own.
"""

import os
import sys


def tool_path():
    """The bundled tool's file (h5shuf/_bin/h5shuf), or None when this installation has none (cmake --install
    puts the tool in PREFIX/bin instead, and a source tree's is build/h5shuf)."""
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "h5shuf")
    return exe if os.access(exe, os.X_OK) else None


def main():
    """Exec the bundled tool with this process's arguments; returns 127 (after one line on stderr) only
    when there is no bundled tool."""
    exe = tool_path()
    if exe is None:
        sys.stderr.write("h5shuf: this installation of the Python package has no bundled tool (%s/_bin/h5shuf)\n"
                         % os.path.dirname(os.path.abspath(__file__)))
        return 127
    os.execv(exe, ["h5shuf"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
