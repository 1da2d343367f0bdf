#!/usr/bin/env python3
"""Score cudagraph-tidy's findings on a real-code corpus against blind hand
labels (the HAZARD/SAFE format of ops-labels.txt):

    owner/repo@commit:path:LINE <check-name> HAZARD|SAFE <reason>

A finding is matched to the labels of its line (any check: the labeler names
one family, the tool may file the same call under another, as with a
synchronous cudaMemcpy). Findings on HAZARD lines are true; findings on SAFE
lines are false; findings on unlabeled lines are listed for reading and are
scored with --adjudicated (a triage file in run.py's format) when given.
HAZARD labels whose reason says [cross-file] are left out of recall: a
single-translation-unit run cannot see them. The other exits of a capture
left open, notes of the one warning at its first exit, count as found, as
does the work of a region whose begin may name the legacy stream (notes of
the warning at the begin: it runs eagerly on that path); so do
the calls of a helper that holds a finding (the first note of its chain and
the "is also called here" notes after it, constructions and destructions
by the standard library included; further calls of its chain for a label of
the finding's check), the use of an event recorded
into a capture that a capture-bound-event finding names ("uses the event
here"), the captured copy or launch that a per-call-input finding (reported
at the variable's declaration) names ("the graph is given the address of"),
and the begin of a capture a capture-left-open finding names, for
a capture-left-open label there.

Usage:
    python3 scripts/realcode/score_labels.py --results RESULTS.json \\
        --labels scripts/realcode/ops-labels.txt [--adjudicated TRIAGE]
"""

import argparse
import json
import os
import re
import sys

LABEL_RE = re.compile(
    r"^(?P<loc>\S+:\d+)\s+(?P<check>cudagraph-[a-z-]+)\s+(?P<verdict>HAZARD|SAFE)\s*(?P<reason>.*)$")
TRIAGE_RE = re.compile(
    r"^(?P<loc>\S+:\d+)\s+(?P<check>cudagraph-[a-z-]+)\s+(?P<verdict>TRUE|FALSE)\b\s*(?P<reason>.*)$")


NOTE_RE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):\d+: (?P<text>.*)$")


def read_labels(path):
    labels = {}
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = LABEL_RE.match(line)
            if not m:
                sys.exit(f"{path}:{lineno}: cannot parse label: {line}")
            labels.setdefault(m.group("loc"), []).append(m.groupdict())
    return labels



TREES = "/tmp/cudagraph-realcode"
_canon_cache = {}


def canon(loc):
    """`repo@commit:path:line` with the path resolved through symbolic links
    in the fetched tree (a unit `x.cuda.cu` that links to `x.hip.cpp` is that
    file), when the tree is there."""
    if loc in _canon_cache:
        return _canon_cache[loc]
    out = loc
    m = re.match(r"(?P<repo>[^@]+)@(?P<commit>[0-9a-f]{40}):(?P<path>.+):(?P<line>\d+)$", loc)
    if m:
        root = os.path.join(TREES, m.group("repo").replace("/", "+") + "@" + m.group("commit"))
        full = os.path.join(root, m.group("path"))
        if os.path.islink(full):
            real = os.path.realpath(full)
            if real.startswith(os.path.realpath(root) + os.sep):
                out = (f"{m.group('repo')}@{m.group('commit')}:"
                       f"{os.path.relpath(real, os.path.realpath(root))}:{m.group('line')}")
    _canon_cache[loc] = out
    return out

def read_triage(path):
    verdicts = {}
    if not path:
        return verdicts
    with open(path) as f:
        for raw in f:
            m = TRIAGE_RE.match(raw.strip())
            if m:
                verdicts[(m.group("loc"), m.group("check"))] = m.group("verdict")
    return verdicts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--labels", required=True)
    parser.add_argument("--adjudicated")
    args = parser.parse_args()

    labels = {}
    for loc, items in read_labels(args.labels).items():
        labels.setdefault(canon(loc), []).extend(items)
    adjudicated = {(canon(loc), check): verdict
                   for (loc, check), verdict in read_triage(args.adjudicated).items()}
    with open(args.results) as f:
        results = json.load(f)

    findings = set()
    for entry in results:
        prefix = f"{entry['repo']}@{entry['commit']}:"
        for finding in entry.get("findings", []):  # skipped entries have none
            findings.add((canon(prefix + f"{finding['file']}:{finding['line']}"), finding["check"]))

    true, false, unread = [], [], []
    for loc, check in sorted(findings):
        verdicts = {label["verdict"] for label in labels.get(loc, [])}
        judged = adjudicated.get((loc, check))
        if "HAZARD" in verdicts or judged == "TRUE":
            true.append((loc, check))
        elif "SAFE" in verdicts or judged == "FALSE":
            false.append((loc, check))
        else:
            unread.append((loc, check))

    # A capture left open is reported once, at its first exit; its other
    # exits are notes of that warning ("this path also returns with the
    # capture open") and count as found.
    found_lines = {loc for loc, _ in findings}
    chain_steps = set()
    for entry in results:
        prefix = f"{entry['repo']}@{entry['commit']}:"
        for finding in entry.get("findings", []):
            for note in finding.get("notes", []):
                m = NOTE_RE.match(note)
                if m and ("also returns with the capture open" in m.group("text") or
                          "runs eagerly on the legacy stream" in m.group("text")):
                    found_lines.add(canon(prefix + f"{m.group('file')}:{m.group('line')}"))
            # The calls of the function that holds the finding: the first
            # note of its chain and the other calls listed after it.
            for i, note in enumerate(finding.get("notes", [])):
                m = NOTE_RE.match(note)
                text = m.group("text") if m else ""
                if m and (" is also called here " in text or
                          " also runs " in text or
                          " also constructs a " in text or
                          " also destroys a " in text or
                          " uses the event here" in text or
                          (i == 0 and (" is called here " in text or
                                       " constructs a " in text or
                                       " destroys a " in text or
                                       " runs during capture when " in text))):
                    found_lines.add(canon(prefix + f"{m.group('file')}:{m.group('line')}"))
                # A call further up the chain finds a label of the same
                # check there (the call through which the hazard is reached).
                # A per-call input reported at its declaration: the copy or
                # launch that hands its address to the graph.
                if m and (finding["check"] == "cudagraph-frozen-host-state" and
                          text.startswith("the graph is given the address of ")):
                    found_lines.add(canon(prefix + f"{m.group('file')}:{m.group('line')}"))
                if m and " is called here " in text:
                    chain_steps.add((canon(prefix + f"{m.group('file')}:{m.group('line')}"),
                                     finding["check"]))
    # A capture left open may be labeled at its begin: a capture-left-open
    # finding whose note names that begin finds it.
    left_open_begins = set()
    for entry in results:
        prefix = f"{entry['repo']}@{entry['commit']}:"
        for finding in entry.get("findings", []):
            if finding["check"] != "cudagraph-capture-left-open":
                continue
            for note in finding.get("notes", []):
                m = NOTE_RE.match(note)
                if m and m.group("text").startswith("CUDA graph capture begins here"):
                    left_open_begins.add(canon(prefix + f"{m.group('file')}:{m.group('line')}"))
    def is_missed(loc, label):
        return (loc not in found_lines and (loc, label["check"]) not in chain_steps and
                not (label["check"] == "cudagraph-capture-left-open" and loc in left_open_begins))

    hazards = [(loc, label) for loc, ls in labels.items() for label in ls
               if label["verdict"] == "HAZARD"]
    in_scope = [(loc, label) for loc, label in hazards if "[cross-file]" not in label["reason"]]
    missed = [(loc, label) for loc, label in in_scope if is_missed(loc, label)]
    missed_all = [(loc, label) for loc, label in hazards if is_missed(loc, label)]

    print(f"findings: {len(findings)} (TRUE {len(true)}, FALSE {len(false)}, unlabeled {len(unread)})")
    judged = len(true) + len(false)
    if judged:
        print(f"precision over labeled findings: {len(true)}/{judged} = {len(true) / judged:.3f}")
    hit = len(in_scope) - len(missed)
    if in_scope:
        print(f"recall over in-TU HAZARD labels: {hit}/{len(in_scope)} = {hit / len(in_scope):.3f}")
    if hazards:
        hit_all = len(hazards) - len(missed_all)
        print(f"recall over all HAZARD labels (cross-file included): {hit_all}/{len(hazards)}")
    for title, rows in (("FALSE", false), ("unlabeled", unread)):
        if rows:
            print(f"{title}:")
            for loc, check in rows:
                print(f"  {loc} {check}")
    if missed:
        print("missed:")
        for loc, label in missed:
            print(f"  {loc} {label['check']}  {label['reason'][:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
