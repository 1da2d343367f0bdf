#!/usr/bin/env python3
"""Measures the project index on a real multi-file project and writes the
numbers to docs/performance.md.

For a build directory with a compile database (nvcc commands are fine):
  parse     clang++-19 -fsyntax-only on every unit (the translated commands
            `cudagraph-tidy --export-clang-database` writes), one at a time;
            the sum of wall times divided by the cores is what a parallel
            parse of the project costs at best;
  cold      `cudagraph-tidy -p BUILD --index` with no index (wall time);
  no-op     the same again, nothing changed;
  touch     the same after appending a comment to one source file;
  editor    one file analyzed with and without the warm index, alternating,
            to show what reading the index costs an editor run.

Usage: python3 bench/index.py BUILD [--tidy build/bin/cudagraph-tidy]
           [--touch FILE] [--editor FILE] [--reps 5] [--jobs N]
           [--name "ggml (CUDA backend)"] [--write docs/performance.md]

bench/index-projects.txt names the projects measured (repo@commit and how
they were configured).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, measure, shim_dir  # noqa: E402


def run(cmd, **kw):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)
    wall = time.perf_counter() - start
    return proc.returncode, wall, proc.stdout.decode(errors="replace")


def parse_commands(tidy, build, clang, shim):
    """The translated clang commands of BUILD, as -fsyntax-only runs."""
    out = tempfile.mkdtemp(prefix="cudagraph-index-db-")
    code, _, text = run([tidy, "-p", build, "--export-clang-database=" + out])
    if code:
        sys.exit("bench: exporting the database failed:\n" + text)
    entries = json.load(open(os.path.join(out, "compile_commands.json")))
    shutil.rmtree(out)
    cmds = []
    for e in entries:
        args = list(e["arguments"])
        keep = []
        skip = False
        for i, a in enumerate(args[1:]):
            if skip:
                skip = False
                continue
            if a in ("-c",):
                continue
            if a == "-o":
                skip = True
                continue
            keep.append(a)
        # The analysis parses the host side of a CUDA unit only (clang-tidy
        # runs the host compilation): so does the baseline.
        host_only = ["--cuda-host-only"] if "cuda" in keep else []
        cmds.append((e["directory"], [clang, "-fsyntax-only", "-Wno-unknown-cuda-version",
                                      "-isystem", shim] + host_only + keep))
    return cmds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--tidy", default=os.path.join(ROOT, "build/bin/cudagraph-tidy"))
    p.add_argument("--clang", default="clang++-19")
    p.add_argument("--touch", help="source file to edit for the incremental run")
    p.add_argument("--editor", help="source file for the editor run")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--name", default=None)
    p.add_argument("--write")
    a = p.parse_args()
    build = os.path.abspath(a.build)
    index_dir = os.path.join(build, "cudagraph-index")
    shim = shim_dir()

    cmds = parse_commands(a.tidy, build, a.clang, shim)
    units = len(cmds)
    print("bench: %d units" % units, flush=True)

    parse_wall = 0.0
    parse_failed = 0
    for directory, cmd in cmds:
        code, wall, _ = run(cmd, cwd=directory)
        parse_wall += wall
        parse_failed += code != 0
    parse_parallel = parse_wall / a.jobs
    print("bench: parse sum %.1f s, / %d cores = %.1f s (%d units with errors)"
          % (parse_wall, a.jobs, parse_parallel, parse_failed), flush=True)

    shutil.rmtree(index_dir, ignore_errors=True)
    index_cmd = [a.tidy, "-p", build, "--index", "--index-jobs=%d" % a.jobs]
    code, cold, text = run(index_cmd)
    print(text.strip().splitlines()[-1] if text.strip() else "", flush=True)
    if code not in (0, 1):
        sys.exit("bench: --index failed:\n" + text[-3000:])
    summary_line = [l for l in text.splitlines() if "wrote" in l]
    _, noop, _ = run(index_cmd)
    touched = None
    if a.touch:
        with open(a.touch, "a") as f:
            f.write("\n// cudagraph-index bench edit\n")
        _, touched, touch_text = run(index_cmd)
        with open(a.touch) as f:
            content = f.read()
        with open(a.touch, "w") as f:
            f.write(content.replace("\n// cudagraph-index bench edit\n", ""))
        run(index_cmd)

    editor = None
    if a.editor:
        with_index = [a.tidy, "--quiet", "-p", build, a.editor]
        without = with_index  # run while the index is moved away
        hidden = index_dir + ".hidden"
        w, wo = [], []
        measure_ok = lambda cmd: run(cmd)[1]
        measure_ok(with_index)
        for _ in range(a.reps):
            w.append(measure_ok(with_index))
            os.rename(index_dir, hidden)
            wo.append(measure_ok(without))
            os.rename(hidden, index_dir)
        editor = (statistics.median(wo), statistics.median(w),
                  sorted(x / y for x, y in zip(w, wo)))

    name = a.name or os.path.basename(os.path.dirname(build))
    rows = [
        "| project | units | parse, sum / cores (s) | index cold (s) | cold / parse | no-op refresh (s) | one file touched (s) |",
        "|---|---|---|---|---|---|---|",
        "| %s | %d | %.1f | %.1f | **%.2f** | %.2f | %s |" % (
            name, units, parse_parallel, cold, cold / parse_parallel, noop,
            "%.1f" % touched if touched is not None else "-"),
    ]
    if editor:
        rows += ["", "| editor run on %s | without index (s) | with warm index (s) | ratio (median) | pairwise range |"
                 % os.path.basename(a.editor), "|---|---|---|---|---|",
                 "| | %.2f | %.2f | **%.3f** | %.3f-%.3f |" % (
                     editor[0], editor[1], editor[1] / editor[0], editor[2][0], editor[2][-1])]
    text = "\n".join(rows)
    print(text)
    if summary_line:
        print(summary_line[-1])
    if a.write:
        begin, end = "<!-- index-bench:begin -->", "<!-- index-bench:end -->"
        doc = open(a.write).read()
        if begin not in doc:
            doc += "\n%s\n%s\n" % (begin, end)
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        stamp = ("Measured %s on this machine (%d cores, %d index jobs); parse = clang++-19 "
                 "-fsyntax-only --cuda-host-only (the analysis parses the host side) on the "
                 "same translated commands, one at a time; %d alternating editor repetitions." %
                 (time.strftime("%Y-%m-%d"), os.cpu_count(), a.jobs, a.reps))
        with open(a.write, "w") as f:
            f.write(head + begin + "\n" + stamp + "\n\n" + text + "\n" + end + tail)


if __name__ == "__main__":
    main()
