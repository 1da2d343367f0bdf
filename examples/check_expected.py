#!/usr/bin/env python3
"""Hold examples/README.md to what cudagraph-tidy reports on examples/.

    python3 examples/check_expected.py --tool BUILD/bin/cudagraph-tidy \
        [--cuda DIR] [--torch-api DIR]

The README's "Expected findings" table lists each location (`file:line`,
with more lines of the same file as `:line`) and the check that must report
there; "Must not be flagged" lists locations where no check may. The script
analyzes every source of examples/ with the compilation database
compile_db.py writes, and prints one line per disagreement: an expected
finding that is missing, a finding on a clean line, or a finding the README
does not list. It ends with a count and exits 1 on any disagreement.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compile_db  # noqa: E402

WARNING_RE = re.compile(
    r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):\d+: warning: .*\[(?P<check>cudagraph-[a-z-]+)\]$")
LOCATIONS_RE = re.compile(r"`([^`]*:\d+|:\d+)`")


def locations(cell):
    """`a/b.cu:48`, `:56` -> [("a/b.cu", 48), ("a/b.cu", 56)]."""
    out, current = [], None
    for loc in LOCATIONS_RE.findall(cell):
        path, _, line = loc.rpartition(":")
        if path:
            current = path
        if current is None:
            sys.exit(f"examples/README.md: location {loc!r} names no file")
        out.append((current, int(line)))
    return out


def read_tables(readme):
    expected, clean, section = set(), set(), None
    with open(readme) as f:
        for raw in f:
            line = raw.strip()
            if line.startswith("## "):
                section = line[3:].strip()
                continue
            if not line.startswith("| `"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if section == "Expected findings":
                check = cells[1].strip("`")
                if not check.startswith("cudagraph-"):
                    sys.exit(f"examples/README.md: no check in row: {line}")
                for loc in locations(cells[0]):
                    expected.add(loc + (check,))
            elif section == "Must not be flagged":
                clean.update(locations(cells[0]))
    if not expected:
        sys.exit("examples/README.md: no expected findings read")
    return expected, clean


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--torch-api", default="/usr/include/torch/csrc/api/include")
    args = ap.parse_args()

    expected, clean = read_tables(os.path.join(HERE, "README.md"))
    with tempfile.TemporaryDirectory() as db:
        entries = compile_db.entries(args.cuda, args.torch_api)
        with open(os.path.join(db, "compile_commands.json"), "w") as f:
            json.dump(entries, f)
        run = subprocess.run(
            [args.tool, "-p", db, "--quiet"] + [e["file"] for e in entries],
            capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.stderr.write(run.stdout + run.stderr)
        sys.exit(f"check_expected: {args.tool} exited {run.returncode}")

    found = set()
    for line in run.stdout.splitlines():
        m = WARNING_RE.match(line)
        if m:
            path = os.path.relpath(m["file"], HERE)
            found.add((path, int(m["line"]), m["check"]))

    problems = []
    for path, line, check in sorted(expected - found):
        problems.append(f"missing: {path}:{line} {check}")
    for path, line, check in sorted(found - expected):
        why = "on a line listed as clean" if (path, line) in clean else "not in the README"
        problems.append(f"unexpected: {path}:{line} {check} ({why})")
    for p in problems:
        print(p)
    print(f"{len(expected & found)} of {len(expected)} expected findings reported, "
          f"{len(clean)} clean lines, {len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
