#!/usr/bin/env python3
"""Measures cudagraph-tidy (all cudagraph checks) against clang++-19
-fsyntax-only on the same translation units, and writes the ratios to
docs/performance.md.

Both commands parse the same code with the same flags; the runs alternate
(parse, tidy, parse, tidy, ...) so that machine noise hits both alike, and the
ratio of medians of CPU time (user + sys) is reported, with wall time and
peak memory alongside.

With --instructions, each command runs once under valgrind's callgrind and
the ratio of instructions executed is reported instead: slower (about 50x),
but the same on every run, where CPU time on a shared machine scatters by
10-20% between identical runs. Both commands of a unit run side by side.

Usage: python3 bench/run.py [--reps N] [--tidy build/bin/cudagraph-tidy]
                            [--write docs/performance.md]
       python3 bench/run.py --instructions [--only SUBSTR] [--write ...]
"""

import argparse
import concurrent.futures
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA = "/usr/local/cuda"
TORCH_API = "/usr/include/torch/csrc/api/include"


def shim_dir():
    """Stand-ins clang++ needs to parse what cudagraph-tidy parses (the tool
    provides them in memory)."""
    d = tempfile.mkdtemp(prefix="cudagraph-bench-")
    for rel in ("texture_fetch_functions.h", "c10/cuda/impl/cuda_cmake_macros.h"):
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("#pragma once\n")
    return d


def cases(shim):
    torch = ["-std=c++17", "-I" + TORCH_API, "-isystem", CUDA + "/include"]
    cuda = ["-x", "cuda", "--cuda-host-only", "--cuda-path=" + CUDA, "-std=c++17",
            "-Wno-unknown-cuda-version"]
    return [
        ("libtorch TU (<torch/torch.h>, Debian 1.13)",
         os.path.join(ROOT, "bench/inputs/torch_op.cpp"), torch, ["-isystem", shim]),
        ("CUDA TU (CUDA 13 runtime + Thrust)",
         os.path.join(ROOT, "bench/inputs/graph_capture.cu"), cuda,
         ["-isystem", shim, "-isystem", CUDA + "/include/cccl"]),
        ("examples/server/graph_runner.cpp",
         os.path.join(ROOT, "examples/server/graph_runner.cpp"), torch, ["-isystem", shim]),
    ]


def measure(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # cudagraph-tidy exits 1 when it reports findings.
    if proc.returncode not in (0, 1):
        sys.exit("bench: command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd),
                                                        proc.stdout.decode()[-2000:]))
    return cpu, wall, after.ru_maxrss


def instructions(cmd):
    """Instructions \p cmd executes (callgrind's total, children included)."""
    out = tempfile.mkdtemp(prefix="cudagraph-bench-ir-")
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                           "--callgrind-out-file=" + os.path.join(out, "cg.%p")] + cmd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    refs = [int(m.replace(",", "")) for m in
            re.findall(r"I\s+refs:\s+([\d,]+)", proc.stderr.decode(errors="replace"))]
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    os.rmdir(out)
    if proc.returncode not in (0, 1) or not refs:
        sys.exit("bench: valgrind run failed (%d): %s" % (proc.returncode, " ".join(cmd)))
    return sum(refs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tidy", default=os.path.join(ROOT, "build/bin/cudagraph-tidy"))
    parser.add_argument("--clang", default="clang++-19")
    parser.add_argument("--write", help="update this Markdown file between markers")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under callgrind instead of timing")
    parser.add_argument("--only", help="measure the units whose name contains this")
    args = parser.parse_args()
    if not os.path.exists(args.tidy):
        sys.exit("bench: %s not found; build first (bash scripts/test.sh)" % args.tidy)

    shim = shim_dir()
    rows = []
    selected = [c for c in cases(shim) if not args.only or args.only in c[0]]
    if args.instructions:
        return count_instructions(args, selected)
    for name, path, flags, parse_only in selected:
        parse_cmd = [args.clang, "-fsyntax-only"] + flags + parse_only + [path]
        tidy_cmd = [args.tidy, "--quiet", "--checks=-*,cudagraph-*", path, "--"] + flags
        measure(parse_cmd)  # warm the file cache
        measure(tidy_cmd)
        parse, tidy = [], []
        for _ in range(args.reps):
            parse.append(measure(parse_cmd))
            tidy.append(measure(tidy_cmd))
        p_cpu = statistics.median(c for c, _, _ in parse)
        t_cpu = statistics.median(c for c, _, _ in tidy)
        p_wall = statistics.median(w for _, w, _ in parse)
        t_wall = statistics.median(w for _, w, _ in tidy)
        ratios = sorted(t[0] / p[0] for p, t in zip(parse, tidy))
        rows.append((name, p_cpu, t_cpu, t_cpu / p_cpu, ratios[0], ratios[-1],
                     p_wall, t_wall))
        print("%-45s parse %.2fs  tidy %.2fs  ratio %.3f (pairs %.3f-%.3f)"
              % (name, p_cpu, t_cpu, t_cpu / p_cpu, ratios[0], ratios[-1]), flush=True)

    table = ["| translation unit | clang++-19 -fsyntax-only (CPU s) | cudagraph-tidy (CPU s) "
             "| ratio | pairwise range | wall s (parse / tidy) |", "|---|---|---|---|---|---|"]
    for name, p, t, r, lo, hi, pw, tw in rows:
        table.append("| %s | %.2f | %.2f | **%.3f** | %.3f-%.3f | %.2f / %.2f |"
                     % (name, p, t, r, lo, hi, pw, tw))
    text = "\n".join(table)
    print(text)
    if args.write:
        begin, end = "<!-- static-bench:begin -->", "<!-- static-bench:end -->"
        doc = open(args.write).read() if os.path.exists(args.write) else \
            "# Performance\n\n%s\n%s\n" % (begin, end)
        if begin not in doc:
            doc += "\n%s\n%s\n" % (begin, end)
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        stamp = "Measured %s on this machine (%d cores), %d interleaved repetitions, medians." % (
            time.strftime("%Y-%m-%d"), os.cpu_count(), args.reps)
        with open(args.write, "w") as f:
            f.write(head + begin + "\n" + stamp + "\n\n" + text + "\n" + end + tail)


def count_instructions(args, selected):
    rows = ["| translation unit | clang++-19 -fsyntax-only (instructions) "
            "| cudagraph-tidy (instructions) | ratio |", "|---|---|---|---|"]
    for name, path, flags, parse_only in selected:
        parse_cmd = [args.clang, "-fsyntax-only"] + flags + parse_only + [path]
        tidy_cmd = [args.tidy, "--quiet", "--checks=-*,cudagraph-*", path, "--"] + flags
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            parse, tidy = pool.map(instructions, [parse_cmd, tidy_cmd])
        print("%-45s parse %.3fG  tidy %.3fG  ratio %.3f"
              % (name, parse / 1e9, tidy / 1e9, tidy / parse), flush=True)
        rows.append("| %s | %.3f G | %.3f G | **%.3f** |" % (name, parse / 1e9, tidy / 1e9,
                                                           tidy / parse))
    text = "\n".join(rows)
    print(text)
    if args.write:
        begin, end = "<!-- static-bench-ir:begin -->", "<!-- static-bench-ir:end -->"
        doc = open(args.write).read()
        if begin not in doc:
            doc = doc.replace("<!-- static-bench:end -->",
                              "<!-- static-bench:end -->\n\n%s\n%s" % (begin, end), 1)
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        stamp = ("Instructions executed (valgrind callgrind, one run each, children included), "
                 "measured %s." % time.strftime("%Y-%m-%d"))
        with open(args.write, "w") as f:
            f.write(head + begin + "\n" + stamp + "\n\n" + text + "\n" + end + tail)


if __name__ == "__main__":
    main()
