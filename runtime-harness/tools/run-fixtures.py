#!/usr/bin/env python3
"""Runs every fixture region under the harness, each in its own process.

    run-fixtures.py --build BUILD --out DIR [--jobs N] [--only SUBSTRING]

A region that breaks capture can leave the CUDA context or libtorch's
allocator in a state later regions should not inherit, so every region gets
a fresh process: `cudagraph-run -o DIR/reports/REGION.jsonl -- FIXTURE
--region REGION`. Writes DIR/regions.tsv (every region the fixtures list),
DIR/reports/*.jsonl (symbolized by the launcher) and DIR/logs/*.log.
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.dirname(HERE)


def fixture_commands(build):
    """(flavour, command prefix) for each fixture program that exists."""
    out = []
    for flavour, exe in (("raw", "cudagraph-fixtures-raw"),
                         ("torch", "cudagraph-fixtures-torch")):
        path = os.path.join(build, "bin", exe)
        if os.path.exists(path):
            out.append((flavour, [path]))
    script = os.path.join(HARNESS, "fixtures", "python", "regions.py")
    out.append(("python", [sys.executable, script]))
    return out


def list_regions(command):
    listed = subprocess.run(command + ["--list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=300)
    if listed.returncode != 0:
        sys.stderr.write("run-fixtures: %s --list failed:\n%s" %
                         (" ".join(command), listed.stderr))
        return []
    return [line.split("\t") for line in listed.stdout.splitlines() if line.strip()]


def run_region(build, out, command, name, timeout):
    report = os.path.join(out, "reports", name + ".jsonl")
    log = os.path.join(out, "logs", name + ".log")
    if os.path.exists(report):
        os.remove(report)
    launcher = os.path.join(build, "bin", "cudagraph-run")
    start = time.time()
    with open(log, "w") as f:
        try:
            rc = subprocess.run([launcher, "-o", report, "--"] + command +
                                ["--region", name], stdout=f, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        f.write("\n[run-fixtures] rc=%s seconds=%.1f\n" % (rc, time.time() - start))
    return name, rc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=180)
    parser.add_argument("--only", default="")
    args = parser.parse_args()

    os.makedirs(os.path.join(args.out, "reports"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    jobs = []
    with open(os.path.join(args.out, "regions.tsv"), "w") as tsv:
        for flavour, command in fixture_commands(args.build):
            for fields in list_regions(command):
                name = fields[0]
                tsv.write("\t".join([flavour] + fields) + "\n")
                if args.only in name:
                    jobs.append((command, name))
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_region, args.build, args.out, command, name,
                               args.timeout) for command, name in jobs]
        for future in concurrent.futures.as_completed(futures):
            name, rc = future.result()
            if rc != 0:
                failures += 1
                print("run-fixtures: %s exited with %s" % (name, rc), flush=True)
    print("run-fixtures: %d regions run, %d exited non-zero" % (len(jobs), failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
