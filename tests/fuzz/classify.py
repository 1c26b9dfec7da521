#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Sort fuzzer crashes by whose code crashed: h5shuf's sources, or libhdf5 (or another library).

usage: tests/fuzz/classify.py [--fuzzer BIN] [--summary] [--log LOG]... [INPUT...]

Each INPUT (a crash-*, leak-*, oom-*, timeout-* file of libFuzzer) is run once more by the fuzzer BIN
(a libFuzzer binary runs the files it is given), under the limits of .ci/run; each --log is a report
already written (libFuzzer's, or a sanitizer's).  The report's stack -- the first one, or for leaks every
one -- is read from the top, skipping the frames of the sanitizers and libFuzzer (the runtime, its
interceptors and allocation hooks) and of libc; the first frame left decides:
  h5shuf   a source file of this repository (src/, tests/fuzz/: a property of the target failed)
  libhdf5  libhdf5 (its module, or an H5 function without a source of ours)
  other:M  another module M (a filter plugin, libz, libzstd...)
  unknown  no frame left (e.g. libFuzzer's -rss_limit_mb, which prints no stack)
One line per report: CLASS, the kind (SEGV, heap-buffer-overflow, leak, out-of-memory, timeout, ...), the
signature (the first three named frames left, past HDF5's allocators H5FL_/H5MM_; else module+offset) and
the input, tab-separated.
--summary then counts the distinct signatures of each class.  Exit status 1 when any report is h5shuf's
(a bug of ours: fix it and add the input to the corpus), else 0; 2 on a usage error.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-fA-F]+\s+(?:in (\S+))?\s*(.*?)\s*(?:\(BuildId: [0-9a-f]+\))?\s*$")
RUNTIME_FUNCS = re.compile(r"^(__asan|__lsan|__ubsan|__sanitizer|__interceptor_|__interception|fuzzer::|___interceptor_"
                           r"|__sanitizer_print_stack_trace|_ZN6fuzzer|__msan|LLVMFuzzerRunDriver)")
ALLOC_FUNCS = {"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign", "valloc",
               "reallocarray", "strdup", "strndup", "memcpy", "memmove", "memset", "memcmp", "strlen", "strcmp",
               "strncmp", "strchr", "strnlen", "bcmp", "pread", "read", "write", "pwrite"}
LIBC_FUNCS = {"raise", "abort", "__libc_start_main", "__libc_start_call_main", "_start", "__assert_fail",
              "__assert_fail_base", "pthread_kill", "__pthread_kill_implementation", "__pthread_kill_internal",
              "gsignal", "<signal handler called>"}
KIND = re.compile(r"ERROR: (?:AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer): ([A-Za-z-]+)"
                  r"|runtime error: ([^\n]*)")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module_of(loc):
    """(source file or None, module or None) of a frame's location text."""
    if not loc:
        return None, None
    m = re.match(r"^\(?([^()+]+)\+0x[0-9a-fA-F]+\)?$", loc.strip())
    if m:
        return None, m.group(1)
    return loc.strip().split(":")[0], None


def frame_class(func, loc, binary_names):
    """'skip' for sanitizer, libFuzzer and libc frames; else 'h5shuf', 'libhdf5', 'other:M'."""
    src, mod = module_of(loc)
    name = func or ""
    path = src or mod or ""
    base = os.path.basename(path)
    if RUNTIME_FUNCS.match(name) or "compiler-rt" in path or "libclang_rt" in base or "/sanitizer_common/" in path \
            or re.match(r"(asan|lsan|ubsan|sanitizer)_", base) or "/libfuzzer/" in path.lower() or "FuzzerLoop" in base \
            or "FuzzerDriver" in base or "FuzzerMain" in base or "FuzzerUtil" in base:
        return "skip"
    if name in ALLOC_FUNCS and (mod and os.path.basename(mod) in binary_names or (src is None and mod is None)):
        return "skip"  # an interceptor compiled into the fuzzer binary
    if name in LIBC_FUNCS or re.search(r"(^|/)(libc|libm|libpthread|ld-linux[^/]*)\.so", path) or "sysdeps/" in path \
            or "/glibc" in path or base.startswith("libc-") or "libstdc++" in base or "libgcc_s" in base:
        return "skip"
    if src and (src.startswith(ROOT + "/src/") or src.startswith(ROOT + "/tests/") or re.search(r"(^|/)(src/(lib|cli|plugin)|tests/fuzz)/", src)):
        return "h5shuf"
    if "libhdf5" in base or (name.startswith("H5") and not src):
        return "libhdf5"
    if mod and os.path.basename(mod) in binary_names:
        return "h5shuf"  # (the fuzzer binary holds only h5shuf's code besides the runtime)
    return "other:" + (base or "?")


def stacks(text):
    """The report's stacks: lists of (func, loc), in order."""
    out, cur = [], []
    for line in text.splitlines():
        m = FRAME.match(line)
        if m:
            if m.group(1) == "0" and cur:
                out.append(cur)
                cur = []
            cur.append((m.group(2), m.group(3)))
        elif cur and not line.strip().startswith("#"):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def classify(text, binary_names):
    """(class, kind, signature) of one report."""
    km = KIND.search(text)
    kind = (km.group(1) or "runtime-error: " + km.group(2)) if km else ("leak" if "leak of" in text else "?")
    sts = stacks(text)
    if "LeakSanitizer" in text:
        kind = "leak"
    else:
        sts = sts[:1]
    best = None
    for st in sts:
        kept = [(f, l, c) for f, l in st for c in [frame_class(f, l, binary_names)] if c != "skip"]
        if not kept:
            continue
        # the signature: named frames past the allocators (every leak of HDF5's starts in H5FL_/H5MM_)
        named = [f for f, _, _ in kept if f and not re.match(r"H5(FL|MM)_", f)]
        sig = " < ".join(named[:3]) if named else os.path.basename((kept[0][1] or "?").strip("()"))
        got = (kept[0][2], kind, sig)
        if got[0] == "h5shuf":
            return got
        best = best or got
    return best or ("unknown", kind, "-")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fuzzer", help="the libFuzzer binary that runs INPUTs")
    ap.add_argument("--log", action="append", default=[], help="a report already written")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("inputs", nargs="*")
    a = ap.parse_args()
    if a.inputs and not a.fuzzer:
        ap.error("INPUTs need --fuzzer")
    names = {os.path.basename(a.fuzzer)} if a.fuzzer else set()
    names |= {"fuzz_file", "fuzz_parse", "fuzz_zstd", "fuzz_lzf", "fuzz_lzo", "fuzz_bshuf", "replay_file"}
    reports = [(p, open(p, errors="replace").read()) for p in a.log]
    # (the slow unwinder for leaks: libhdf5 has no frame pointers, the fast one stops at its first frame)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:symbolize=1:fast_unwind_on_malloc=0:malloc_context_size=40:"
               + os.environ.get("ASAN_OPTIONS", ""),
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    for p in a.inputs:
        try:
            r = subprocess.run([a.fuzzer, "-rss_limit_mb=2048", "-malloc_limit_mb=2048", "-timeout=60", p],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=a.timeout)
            out = r.stdout.decode(errors="replace")
            if r.returncode == 0:
                out = "(no crash on replay)"
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace") + "\nERROR: libFuzzer: timeout (classify.py)"
        reports.append((p, out))
    ours = 0
    seen = collections.defaultdict(collections.Counter)
    for p, text in reports:
        if text == "(no crash on replay)":
            print("none\t-\t(no crash on replay)\t%s" % p)
            continue
        cls, kind, sig = classify(text, names)
        ours += cls == "h5shuf"
        seen[cls][(kind, sig)] += 1
        print("%s\t%s\t%s\t%s" % (cls, kind, sig, p), flush=True)
    if a.summary:
        for cls in sorted(seen):
            print("# %s: %d reports, %d distinct stacks" % (cls, sum(seen[cls].values()), len(seen[cls])))
            for (kind, sig), n in seen[cls].most_common():
                print("#   %4d  %s  %s" % (n, kind, sig))
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
