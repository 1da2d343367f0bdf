#!/usr/bin/env python3
"""Prints the fault matrix of a run-faults.py result as Markdown.

    faults-table.py FAULTS.json|gpu-results.tgz

One row per case: the exit status (the same with and without the harness,
or both shown), whether the results were identical, what the report held,
and the checks that failed. Then the fixture-region comparison.
"""

import io
import json
import sys
import tarfile


def load(path):
    if path.endswith((".tgz", ".tar.gz")):
        with tarfile.open(path) as tar:
            member = next(m for m in tar.getmembers() if m.name.endswith("faults/faults.json"))
            return json.load(io.TextIOWrapper(tar.extractfile(member), encoding="utf-8"))
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def held(case):
    events = case.get("events", {})
    parts = []
    for kind in ("capture_begin", "capture_error", "capture_end", "target_signal",
                 "fork_child", "harness_start", "harness_end", "subscriber_conflict"):
        if events.get(kind):
            parts.append("%s %d" % (kind, events[kind]))
    roots = case.get("root_causes") or []
    if roots:
        parts.append("root cause " + ", ".join(
            "%s (%s)" % (r.get("api"), r.get("result")) for r in roots[:2]))
    return "; ".join(parts)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        data = load(sys.argv[1])
    except (OSError, ValueError, StopIteration, tarfile.TarError) as err:
        sys.stderr.write("faults-table: cannot read %s: %s\n" % (sys.argv[1], err or "no faults.json"))
        return 2
    out = sys.stdout
    out.write("| case | exit status | results with/without harness | report | checks |\n")
    out.write("|---|---|---|---|---|\n")
    for case in data["cases"]:
        if case.get("skipped"):
            out.write("| %s | not run | | | %s |\n" % (case["case"], case["skipped"]))
            continue
        same_status = case["exit_status"] == case["exit_status_harness"]
        status = str(case["exit_status"]) if same_status else "%s / %s" % (
            case["exit_status"], case["exit_status_harness"])
        identical = next((c["ok"] for c in case["checks"]
                          if c["check"].startswith("same results")), False)
        failed = [c["check"] for c in case["checks"] if not c["ok"]]
        passed = sum(1 for c in case["checks"] if c["ok"])
        verdict = "%d of %d pass" % (passed, len(case["checks"]))
        if failed:
            verdict += "; failed: " + "; ".join(failed)
        out.write("| %s | %s | %s | %s | %s |\n" % (
            case["case"], status, "identical" if identical else "DIFFERENT",
            held(case), verdict))
    fi = data.get("fixture_identity")
    if fi:
        out.write("\nFixture regions run with and without the harness (%s compared): "
                  "%d of %d identical.\n" % (", ".join(fi["compared"]), fi["identical"],
                                             fi["regions"]))
        for d in fi["differing"]:
            out.write("- %s: without %s, with %s\n" % (d["region"], d["plain"], d["harness"]))
        refined = fi.get("verdicts_refined_by_harness") or []
        if refined:
            out.write("\nVerdicts the harness refined (same results; the harness saw more): %d\n"
                      % len(refined))
    return 0


if __name__ == "__main__":
    sys.exit(main())
