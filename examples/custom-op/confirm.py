"""Compares cudagraph-tidy's findings on ops.cu with what the ops did when
Python captured them on a GPU (capture.py's results).

    python3 confirm.py --tool cudagraph-tidy --results RESULTS.json
                       [--harness-log LOG] [-- extra compiler flags]

Each finding names its op in the note "'fn' is registered here as custom op
'graphops::NAME'". An op with a finding of a check that fails capture
(host-sync, device-alloc, pinned-alloc, status-query, capture-unsafe-call)
is predicted to fail ("error"); one with only cudagraph-legacy-stream
findings to run eagerly outside the graph ("diverged"); one with none to be
captured ("captured"). With the harness's log (its "root cause" lines), the
line of each failing call is compared too. Exits 1 on any disagreement.
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "ops.cu")
FAILS = {"cudagraph-host-sync", "cudagraph-device-alloc", "cudagraph-pinned-alloc",
         "cudagraph-status-query", "cudagraph-capture-unsafe-call",
         "cudagraph-data-dependent-branch", "cudagraph-rng-generator"}
DIAG = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):\d+: (?P<kind>warning|note): (?P<msg>.*?)(?: \[(?P<check>[\w.,-]+)\])?$")
OP_NOTE = re.compile(r"registered here as custom op '(?:\w+::)?(?P<op>\w+)'")
ROOT_CAUSE = re.compile(r"root cause of capture \d+: .* at (?P<file>\S+):(?P<line>\d+) \((?P<fn>\w+)\(")


def static_findings(tool, flags):
    out = subprocess.run([tool, SOURCE, "--checks=-*,cudagraph-*", "--"] + flags,
                         capture_output=True, text=True).stdout
    by_op, current = {}, None
    for line in out.splitlines():
        m = DIAG.match(line)
        if not m:
            continue
        if m.group("kind") == "warning":
            current = (int(m.group("line")), m.group("check"))
        elif current:
            op = OP_NOTE.search(m.group("msg"))
            if op:
                by_op.setdefault(op.group("op"), set()).add(current)
                current = None
    return by_op


def predicted(findings):
    checks = {check for _, check in findings}
    if checks & FAILS:
        return "error"
    if checks:
        return "diverged"
    return "captured"


def main():
    argv = sys.argv[1:]
    flags = []
    if "--" in argv:
        split = argv.index("--")
        argv, flags = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--harness-log")
    args = parser.parse_args(argv)
    if not flags:
        flags = ["-x", "cuda", "-std=c++17"]

    with open(args.results) as f:
        results = json.load(f)
    causes = {}
    if args.harness_log:
        with open(args.harness_log) as f:
            for line in f:
                m = ROOT_CAUSE.search(line)
                if m and os.path.basename(m.group("file")) == "ops.cu":
                    causes[m.group("fn")] = int(m.group("line"))
    by_op = static_findings(args.tool, flags)

    print(f"GPU run: {results.get('device')}, torch {results.get('torch')}, CUDA {results.get('cuda')}")
    print(f"{'op':<22} {'static':<9} {'GPU':<9} {'lines (static / harness)':<26} verdict")
    disagree = 0
    for entry in results["ops"]:
        op = entry["op"]
        findings = by_op.get(op, set())
        want = predicted(findings)
        lines = sorted({line for line, _ in findings})
        cause = causes.get(op)
        agree = want == entry["outcome"] and (cause is None or cause in lines)
        disagree += not agree
        shown = ",".join(map(str, lines)) or "-"
        print(f"{op:<22} {want:<9} {entry['outcome']:<9} {shown + ' / ' + (str(cause) if cause else '-'):<26} "
              f"{'agree' if agree else 'DISAGREE'}")
    print(f"{len(results['ops']) - disagree} of {len(results['ops'])} ops agree")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
