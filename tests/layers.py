#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/layers.py - the rule of src/lib's folders: a folder only includes headers of its own and of the
folders below it (docs/architecture.md).

    layers.py ROOT             check the checkout at ROOT; exit 1 with one line per broken rule
    layers.py --selftest ROOT  copy ROOT's src/, include/ and CMakeLists.txt, plant each kind of break in
                               the copy, and check that every one is caught (and the unplanted copy passes)

"Below" is read from each folder's README.md, whose line "Builds on: A, B." names the folders it builds on
directly ("nothing" for none); a folder may include its own headers and those of every folder below it,
directly or through others.  Checked:
  - every file of src/lib lies in a folder that has a README.md with that line, naming folders that exist;
  - the folders' "Builds on" has no circle;
  - every #include "X" of a file in src/lib/F names a header of F, of a folder below F, or of include/,
    by its bare name (no path: a layer is reached through the include folders CMake gives it), and each
    header name is found once;
  - CMakeLists.txt's h5shuf_layer(NAME DIR ON ...) builds DIR on the same folders as its README says;
  - src/cli, the tool, includes only its own headers and include/'s (it runs over the public API, h5shuf.h,
    and sets test knobs through h5shuf_debug.h).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BUILDS_ON = re.compile(r'^Builds on:\s*(.*?)[.(]', re.M)
LAYER = re.compile(r'h5shuf_layer\(\s*(\w+)\s+(\w+)((?:\s+ON(?:\s+\w+)+?)?)\s+(?:LIBS|SOURCES)\b')


def check(root):
    """Every broken rule of the checkout at root, as one line each (none: the rules hold)."""
    errors = []
    lib = os.path.join(root, 'src', 'lib')
    folders = {}  # folder -> the folders it builds on directly
    for name in sorted(os.listdir(lib)):
        path = os.path.join(lib, name)
        if not os.path.isdir(path):
            if name != 'CMakeLists.txt':
                errors.append(f'src/lib/{name}: a file outside every folder of src/lib')
            continue
        readme = os.path.join(path, 'README.md')
        if not os.path.exists(readme):
            errors.append(f'src/lib/{name}: no README.md saying what it holds and what it builds on')
            continue
        m = BUILDS_ON.search(open(readme).read())
        if not m:
            errors.append(f'src/lib/{name}/README.md: no line "Builds on: ..."')
            continue
        words = [w.strip() for w in m.group(1).split(',') if w.strip()]
        folders[name] = [] if words == ['nothing'] else words
    for name, below in folders.items():
        for b in below:
            if b not in folders:
                errors.append(f'src/lib/{name}/README.md: builds on "{b}", which is no folder of src/lib')
    # Everything below each folder, and circles.
    closure = {}

    def below_of(name, path):
        if name in path:
            errors.append('src/lib: a circle of folders: ' + ' -> '.join(path + [name]))
            return set()
        if name not in closure:
            seen = set()
            for b in folders.get(name, []):
                if b in folders:
                    seen |= {b} | below_of(b, path + [name])
            closure[name] = seen
        return closure[name]

    for name in folders:
        below_of(name, [])
    # Where each header lies.
    home = {}
    for name in folders:
        for f in os.listdir(os.path.join(lib, name)):
            if f.endswith('.h'):
                home.setdefault(f, []).append(name)
    for h, where in home.items():
        if len(where) > 1:
            errors.append(f'src/lib: the header {h} is in more than one folder: {", ".join(sorted(where))}')
    public = set(os.listdir(os.path.join(root, 'include')))
    for name in folders:
        for f in sorted(os.listdir(os.path.join(lib, name))):
            if not f.endswith(('.c', '.h')):
                continue
            text = open(os.path.join(lib, name, f)).read()
            for inc in INCLUDE.findall(text):
                where = f'src/lib/{name}/{f}: #include "{inc}"'
                if '/' in inc:
                    errors.append(f'{where}: a path; name the header alone')
                elif inc in public:
                    continue
                elif inc not in home:
                    errors.append(f'{where}: no such header in src/lib or include')
                elif home[inc][0] != name and home[inc][0] not in closure.get(name, set()):
                    errors.append(f'{where}: {home[inc][0]} is not below {name} '
                                  f'(it builds on {", ".join(sorted(closure.get(name, []))) or "nothing"})')
    # CMake's layers build on what their READMEs say.
    cmake = open(os.path.join(root, 'CMakeLists.txt')).read()
    declared = {}
    for target, folder, on in LAYER.findall(cmake):
        declared[folder] = sorted(t[len('h5shuf_'):] for t in on.split()[1:])
        if target != 'h5shuf_' + folder:
            errors.append(f'CMakeLists.txt: the layer of src/lib/{folder} is named {target}, not h5shuf_{folder}')
    for name, below in folders.items():
        if name not in declared:
            errors.append(f'CMakeLists.txt: no h5shuf_layer(h5shuf_{name} {name} ...) for src/lib/{name}')
        elif declared[name] != sorted(below):
            errors.append(f'CMakeLists.txt: h5shuf_{name} builds ON {", ".join(declared[name]) or "nothing"}, '
                          f'its README on {", ".join(sorted(below)) or "nothing"}')
    # The tool over the public API.
    cli = os.path.join(root, 'src', 'cli')
    own = set(os.listdir(cli))
    for f in sorted(own):
        if f.endswith(('.c', '.h')):
            for inc in INCLUDE.findall(open(os.path.join(cli, f)).read()):
                if inc not in own and inc not in public:
                    errors.append(f'src/cli/{f}: #include "{inc}": the tool includes only its own headers '
                                  f'and include/\'s (h5shuf.h, h5shuf_debug.h)')
    return errors


def selftest(root):
    """Plant each kind of break in a copy of root; every one must be caught, the clean copy must pass."""
    def append(path, text):
        with open(path, 'a') as f:
            f.write(text)

    def replace(path, old, new):
        s = open(path).read()
        assert old in s, (path, old)
        open(path, 'w').write(s.replace(old, new, 1))

    plants = [
        ('the core including the orchestrator',
         lambda d: append(f'{d}/src/lib/core/keys.c', '\n#include "job.h"\n'), 'job is not below core'),
        ('a header of the HDF5 layer including a stage',
         lambda d: append(f'{d}/src/lib/hdf5/rows.h', '\n#include "writer.h"\n'), 'stages is not below hdf5'),
        ('two folders of one floor including each other',
         lambda d: append(f'{d}/src/lib/storage/files.c', '\n#include "codec.h"\n'), 'filters is not below storage'),
        ('an include by path', lambda d: append(f'{d}/src/lib/stages/gather.c', '\n#include "../job/job.h"\n'),
         'a path'),
        ('a file outside the folders', lambda d: open(f'{d}/src/lib/stray.c', 'w').close(),
         'outside every folder'),
        ('a circle of folders',
         lambda d: replace(f'{d}/src/lib/core/README.md', 'Builds on: nothing', 'Builds on: job'), 'a circle'),
        ('a folder without its README', lambda d: os.remove(f'{d}/src/lib/content/README.md'), 'no README.md'),
        ('CMake building a layer on another folder than its README',
         lambda d: replace(f'{d}/CMakeLists.txt', 'content ON h5shuf_hdf5', 'content ON h5shuf_stages'),
         'h5shuf_content builds ON'),
        ('the tool including a library header',
         lambda d: append(f'{d}/src/cli/main.c', '\n#include "plan.h"\n'), 'the tool includes only'),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        def fresh():
            d = os.path.join(tmp, 'copy')
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            shutil.copytree(os.path.join(root, 'src'), os.path.join(d, 'src'))
            shutil.copytree(os.path.join(root, 'include'), os.path.join(d, 'include'))
            shutil.copy(os.path.join(root, 'CMakeLists.txt'), d)
            return d
        clean = check(fresh())
        print(f'{"ok  " if not clean else "FAIL"} the unplanted copy passes ({len(clean)} broken rules)')
        failures += bool(clean)
        for what, plant, expect in plants:
            d = fresh()
            plant(d)
            errors = check(d)
            caught = any(expect in e for e in errors)
            print(f'{"ok  " if caught else "FAIL"} caught: {what}: {errors[0] if errors else "nothing reported"}')
            failures += not caught
    return failures


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--selftest':
        failures = selftest(sys.argv[2])
        print(f'layers selftest: {failures} failure(s)')
        return 1 if failures else 0
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    errors = check(sys.argv[1])
    for e in errors:
        print(e)
    lib = os.path.join(sys.argv[1], 'src', 'lib')
    counts = ', '.join(f'{d} {len([f for f in os.listdir(os.path.join(lib, d)) if f.endswith((".c", ".h"))])}'
                       for d in sorted(os.listdir(lib)) if os.path.isdir(os.path.join(lib, d)))
    print(f'layers: {len(errors)} broken rule(s); files per folder: {counts}')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
