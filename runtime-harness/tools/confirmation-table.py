#!/usr/bin/env python3
"""Writes docs/confirmation.md: one row per fixture region with the static
verdict (findings inside the region's lines, or else findings in helpers
whose call chain passes through them) next to the GPU's (the probe's
verdict and the harness's root cause), and whether they agree.

    confirmation-table.py --results DIR --fixes F.yaml [--fixes ...]
                          --source-root ROOT --known KNOWN.yaml -o OUT.md

DIR is the unpacked gpu-results folder of a device run (env.json,
fixtures/regions.tsv, fixtures/reports/*.jsonl).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))

from cudagraph_harness import findings as findings_mod  # noqa: E402
from cudagraph_harness import join as join_mod  # noqa: E402
from cudagraph_harness import manifest  # noqa: E402
from cudagraph_harness import reports as reports_mod  # noqa: E402
from cudagraph_harness.findings import InputError  # noqa: E402
from cudagraph_harness.hazards import Catalog  # noqa: E402

POSITIVE = {"capture_error", "framework_error", "escaped_work", "silent_divergence"}


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def short(text, limit=64):
    text = text.split("\n")[0]
    return text if len(text) <= limit else text[:limit - 1] + "…"


def died_after_root_cause(events):
    """The verdict of a region whose program died before the probe could
    write one, when the harness had already recorded the capture's root
    cause (every event before a crash is on disk)."""
    for event in events:
        if event.get("event") == "capture_error" and event.get("root_cause"):
            return {"verdict": "capture_error", "result": event.get("result", ""),
                    "root_cause_api": event.get("api", ""), "died": True}
    return None


def gpu_detail(region, verdict, events, matcher):
    if verdict is None:
        return "not run", None
    kind = verdict.get("verdict")
    site_line = None
    root = [e for e in events if e.get("root_cause") or e["event"] == "escape"
            or (e["event"] == "framework_error" and not e.get("root_cause_seq"))]
    for event in root:
        site = event.get("site")
        if site and matcher.same(site["file"], region["file"]):
            site_line = site["line"]
            break
    at = " @%d" % site_line if site_line else ""
    if kind == "capture_error":
        text = "capture error %s %s%s" % (verdict.get("result", ""),
                                          verdict.get("root_cause_api", ""), at)
    elif kind == "framework_error":
        text = "framework error%s: %s" % (at, short(verdict.get("message", ""), 56))
    elif kind == "escaped_work":
        text = "escaped work: %s%s" % (verdict.get("escape_api", ""), at)
    elif kind == "silent_divergence":
        text = "silent divergence, max diff %s" % verdict.get("max_diff")
    elif kind == "eager_failed":
        text = "eager run failed: %s" % short(verdict.get("message", ""), 48)
    else:
        text = "captured, replays equal eager"
    if verdict.get("died"):
        text += ", then the program died"
    return text.strip(), site_line


def in_region(location, region, matcher):
    """Whether a finding or note lies inside the region's lines."""
    line = location.get("line")
    return bool(line) and matcher.same(location.get("file"), region["file"]) \
        and any(a <= line <= b for a, b in region["spans"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--fixes", action="append", default=[])
    parser.add_argument("--source-root", required=True)
    parser.add_argument("--known")
    parser.add_argument("--confirm-json", help="cudagraph-confirm --json output")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()

    try:
        catalog = Catalog()
        sources = findings_mod.SourceFiles([args.source_root])
        findings, compile_errors = [], []
        for path in args.fixes:
            found, skipped = findings_mod.load_fixes(path, sources, catalog)
            findings.extend(found)
            compile_errors.extend(skipped.get("clang-diagnostic-error", []))
        env = reports_mod.load_json_file(os.path.join(args.results, "env.json"))
        known_entries = findings_mod._load_yaml(args.known) if args.known else []
        confirm = reports_mod.load_json_file(args.confirm_json) if args.confirm_json else None
    except InputError as err:
        print("confirmation-table: error: %s" % err, file=sys.stderr)
        return 2

    fixtures_dir = os.path.join(args.source_root, "runtime-harness", "fixtures")
    regions = manifest.scan(fixtures_dir)
    matcher = join_mod.PathMatcher([args.source_root])
    known = join_mod.Known(known_entries, matcher)
    report_dir = os.path.join(args.results, "fixtures", "reports")

    helper_findings = [f for f in findings
                       if not any(in_region(f, r, matcher) for r in regions)]
    rows, python_rows, notes = [], [], []
    agree_count = explained = 0
    for region in regions:
        verdict, events = None, []
        path = os.path.join(report_dir, region["name"] + ".jsonl")
        if os.path.exists(path):
            runtime = reports_mod.load([path])
            verdict = runtime.verdicts.get(region["name"])
            events = runtime.events
            if verdict is None:
                verdict = died_after_root_cause(events)
        gpu_text, _ = gpu_detail(region, verdict, events, matcher)
        gpu_positive = bool(verdict) and verdict.get("verdict") in POSITIVE
        hazard = catalog.hazard(region["hazard"]) or {}
        check = hazard.get("check", "?")
        status = catalog.check_status(check)
        if region["flavour"] == "python":
            python_rows.append("| `%s` | %s | %s |" % (region["name"], region["hazard"],
                                                       cell(gpu_text)))
            continue
        inside = [(f, f["line"]) for f in findings if in_region(f, region, matcher)]
        if not inside:
            # Reached from the region: a finding in a helper (outside every
            # region) whose call chain (a note) passes through its lines.
            # The first such note: the call into the helper.
            inside = [(f, next(n["line"] for n in f["notes"]
                               if in_region(n, region, matcher)))
                      for f in helper_findings
                      if any(in_region(n, region, matcher) for n in f["notes"])]
        if inside:
            static_text = ", ".join(sorted({
                "%s @%d%s" % (f["check"].replace("cudagraph-", ""), f["line"],
                              "" if via == f["line"] else " (via @%d)" % via)
                for f, via in inside}))
        elif any(matcher.same(e["file"], region["file"]) for e in compile_errors):
            static_text = "no finding (file did not compile against the stubs)"
        else:
            static_text = "no finding"
        static_positive = bool(inside)
        agree = verdict is not None and verdict.get("verdict") != "eager_failed" \
            and static_positive == gpu_positive
        check_text = check.replace("cudagraph-", "") + (" (planned)" if status == "Planned" else "")
        rows.append("| `%s` | %s | %s | %s | %s |" % (
            region["name"], cell(check_text), cell(static_text), cell(gpu_text),
            "yes" if agree else "no"))
        if agree:
            agree_count += 1
            continue
        reason = None
        if verdict is None:
            notes.append("- `%s`: **did not run on the GPU**" % region["name"])
            continue
        if verdict.get("verdict") == "eager_failed":
            notes.append("- `%s`: **the region fails even without capture** (%s)"
                         % (region["name"], verdict.get("message", "")))
            continue
        negative = ".neg" in region["name"]
        if negative and gpu_positive:
            notes.append("- `%s`: **a negative region failed on the GPU**: %s"
                         % (region["name"], gpu_text))
            continue
        if status == "Planned" and gpu_positive and not static_positive:
            reason = "%s is planned in the catalog: no static check reports %s yet" % (
                check, region["hazard"])
        elif hazard.get("gpu_verdict") == "CapturedNow" and static_positive and not gpu_positive:
            reason = ("%s is captured on libtorch %s (its pinned host allocator is "
                      "capture-aware); the check warns for older releases and raw "
                      "cudaHostAlloc" % (region["hazard"], env.get("torch", "?")))
        else:
            reason = known.reason(region=region["name"], hazard=region["hazard"])
        if reason:
            explained += 1
        notes.append("- `%s`: %s" % (region["name"], reason or "**not explained**"))

    total = len(rows)
    lines = ["# Static findings confirmed on a GPU", "",
             "Generated by `scripts/roundtrip.sh confirm` from a real GPU run; do not edit "
             "by hand. Each fixture region (runtime-harness/fixtures) was analyzed by "
             "`cudagraph-tidy` here and run on the GPU under the runtime harness: warmed "
             "up eagerly, captured, replayed with fresh inputs and compared with eager "
             "execution. See docs/harness.md.", "",
             "- GPU: %s (compute capability %s, %s), driver %s" % (
                 env.get("gpu", "?"), env.get("compute_capability", "?"),
                 env.get("gpu_memory", "?"), env.get("driver", "?")),
             "- CUDA: nvcc %s; torch %s built for CUDA %s; g++ %s; Python %s" % (
                 env.get("nvcc", "?"), env.get("torch", "?"), env.get("torch_cuda", "?"),
                 env.get("gcc", "?"), env.get("python", "?")),
             "- Date of the GPU run: %s" % env.get("date", "?"), ""]
    summary = ("**%d C++/CUDA regions: %d agree, %d disagree (%d of them explained "
               "below).**" % (total, agree_count, total - agree_count, explained))
    lines.append(summary)
    if confirm:
        s = confirm["summary"]
        lines += ["", "`cudagraph-confirm` over the same run: %d findings, %d confirmed at "
                  "the same file:line on the GPU, %d not reproduced (%d explained), %d not "
                  "reached; %d runtime failures no finding predicted (%d explained)." % (
                      s["findings"], s["confirmed"], s["not_reproduced"],
                      s["not_reproduced_explained"], s["not_reached"], s["unpredicted"],
                      s["unpredicted_explained"])]
    lines += ["", "In the static column, `check @line` is a finding and its line (with "
              "`(via @line)`, a finding in a helper outside the region, and the region's "
              "call that reaches it); in the gpu column, `@line` is the line the harness named as the root cause (or "
              "the escaping call) in the same file.", "",
              "| fixture | check | static | gpu | agree |",
              "|---|---|---|---|---|"] + rows
    lines += ["", "## Disagreements", ""]
    lines += notes or ["None."]
    lines += ["", "## Python fixtures (runtime only)", "",
              "`cudagraph-tidy` reads C++ and CUDA; these regions show the harness on a "
              "Python program using PyTorch (runtime-harness/fixtures/python/regions.py).", "",
              "| fixture | hazard | gpu |", "|---|---|---|"] + python_rows + [""]
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("confirmation-table: %s: %d regions, %d agree, %d disagree (%d explained), "
          "%d Python regions" % (args.output, total, agree_count, total - agree_count,
                                 explained, len(python_rows)))
    return 0 if agree_count + explained == total else 1


if __name__ == "__main__":
    sys.exit(main())
