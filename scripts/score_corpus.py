#!/usr/bin/env python3
"""Score cudagraph-* diagnostics against the labeled corpus in test/corpus.

Every corpus source file carries its expected diagnostics as end-of-line
comments:

    auto v = t.item<float>(); // expect: cudagraph-host-sync
    if (v > 0) {              // expect: cudagraph-data-dependent-branch

Lines without such a comment expect nothing. For each file this script runs

    <tool> --checks=-*,cudagraph-* [--load <plugin>] <file> -- <flags>

where <flags> come from <corpus>/FLAGS (a `cpp:` line for C++ files and a
`cu:` line for CUDA files; paths in it are relative to the repository root,
which is also the working directory of the tool). Diagnostics of the form
`path:line:col: warning: message [check-name]` located in the corpus file and
belonging to a cudagraph-* check are compared, as a set of
(file, line, check) triples, with the labels.

Exit status: 0 after scoring (whatever the scores), 1 when --min-precision or
--min-recall is given and the overall value falls below it, 2 when the tool
could not be run or could not process a corpus file (compiler errors, crash,
no cudagraph checks enabled, timeout).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT / "test" / "corpus"

KNOWN_CHECKS = (
    "cudagraph-host-sync",
    "cudagraph-status-query",
    "cudagraph-pinned-alloc",
    "cudagraph-data-dependent-branch",
    "cudagraph-capture-left-open",
    "cudagraph-device-alloc",
    "cudagraph-legacy-stream",
    "cudagraph-capture-unsafe-call",
    "cudagraph-unjoined-fork",
    "cudagraph-rng-generator",
    "cudagraph-frozen-host-state",
)
CHECK_PREFIX = "cudagraph-"

CPP_SUFFIXES = {".cpp", ".cc", ".cxx"}
CU_SUFFIXES = {".cu"}

LABEL_RE = re.compile(r"//\s*expect:(?P<body>.*)$")
CHECK_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
# path:line:col: severity: message [check-a,check-b]
DIAG_RE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+):\s+"
    r"(?P<sev>warning|error|fatal error|note|remark):\s+"
    r"(?P<msg>.*?)"
    r"(?:\s+\[(?P<names>[^\[\]\s]+)\])?\s*$"
)

Key = Tuple[str, int, str]  # (file relative to corpus, line, check)


class ScoreError(Exception):
    """The tool could not be run at all."""


@dataclass
class Diagnostic:
    path: str
    line: int
    col: int
    severity: str
    message: str
    checks: List[str]


@dataclass
class FileResult:
    rel: str
    command: List[str]
    returncode: Optional[int]
    diagnostics: List[Diagnostic] = field(default_factory=list)
    found: Set[Key] = field(default_factory=set)
    failure: Optional[str] = None
    output: str = ""


# --------------------------------------------------------------------------
# Corpus side


def read_flags(corpus: Path) -> Dict[str, List[str]]:
    flags_file = corpus / "FLAGS"
    if not flags_file.is_file():
        raise ScoreError(f"missing flags file: {flags_file}")
    flags: Dict[str, List[str]] = {}
    for raw in flags_file.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kind, sep, rest = line.partition(":")
        if not sep or kind.strip() not in ("cpp", "cu"):
            raise ScoreError(f"{flags_file}: cannot parse line: {raw!r}")
        flags[kind.strip()] = shlex.split(rest)
    for kind in ("cpp", "cu"):
        if kind not in flags:
            raise ScoreError(f"{flags_file}: no '{kind}:' line")
    return flags


def corpus_files(corpus: Path) -> List[Path]:
    files = [p for p in sorted(corpus.iterdir())
             if p.is_file() and p.suffix in (CPP_SUFFIXES | CU_SUFFIXES)]
    return files


def file_kind(path: Path) -> str:
    return "cu" if path.suffix in CU_SUFFIXES else "cpp"


def parse_labels(path: Path, rel: str, warnings: List[str]) -> Set[Key]:
    labels: Set[Key] = set()
    for lineno, text in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        m = LABEL_RE.search(text)
        if not m:
            continue
        names = [n.strip() for n in m.group("body").split(",")]
        names = [n for n in names if n]
        if not names:
            warnings.append(f"{rel}:{lineno}: empty expect: label")
        for name in names:
            if not CHECK_NAME_RE.match(name):
                warnings.append(f"{rel}:{lineno}: malformed check name in label: {name!r}")
                continue
            if name not in KNOWN_CHECKS:
                warnings.append(f"{rel}:{lineno}: label names an unknown check: {name}")
            labels.add((rel, lineno, name))
    return labels


def source_line(corpus: Path, rel: str, line: int, cache: Dict[str, List[str]]) -> str:
    if rel not in cache:
        try:
            cache[rel] = (corpus / rel).read_text(errors="replace").splitlines()
        except OSError:
            cache[rel] = []
    lines = cache[rel]
    if 1 <= line <= len(lines):
        return lines[line - 1].strip()
    return ""


# --------------------------------------------------------------------------
# Tool side


def parse_diagnostics(output: str) -> List[Diagnostic]:
    diags: List[Diagnostic] = []
    for raw in output.splitlines():
        m = DIAG_RE.match(raw.rstrip("\r"))
        if not m:
            continue
        names = m.group("names")
        checks = [n.strip() for n in names.split(",")] if names else []
        diags.append(Diagnostic(path=m.group("path"), line=int(m.group("line")),
                                col=int(m.group("col")), severity=m.group("sev"),
                                message=m.group("msg"), checks=checks))
    return diags


def same_file(diag_path: str, target: Path, cwd: Path) -> bool:
    p = Path(diag_path)
    if not p.is_absolute():
        p = cwd / p
    try:
        return os.path.realpath(p) == os.path.realpath(target)
    except OSError:
        return False


def run_one(tool: str, load: Optional[str], path: Path, rel: str, flags: List[str],
            timeout: float, score_checks: Optional[Set[str]]) -> FileResult:
    cmd = [tool, "--checks=-*,cudagraph-*"]
    if load:
        cmd.append(f"--load={load}")
    cmd += [str(path), "--"] + flags
    result = FileResult(rel=rel, command=cmd, returncode=None)
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace", timeout=timeout)
    except FileNotFoundError:
        raise ScoreError(f"cannot run tool: {tool}: no such file")
    except PermissionError:
        raise ScoreError(f"cannot run tool: {tool}: permission denied")
    except OSError as e:
        raise ScoreError(f"cannot run tool: {tool}: {e}")
    except subprocess.TimeoutExpired:
        result.failure = f"timed out after {timeout:g}s"
        return result

    result.returncode = proc.returncode
    result.output = proc.stdout + ("\n" if proc.stdout and proc.stderr else "") + proc.stderr
    result.diagnostics = parse_diagnostics(result.output)

    compile_errors = [d for d in result.diagnostics
                      if d.severity in ("error", "fatal error")
                      and not any(c.startswith(CHECK_PREFIX) for c in d.checks)]
    cg_diags = [d for d in result.diagnostics
                if d.severity != "note" and any(c.startswith(CHECK_PREFIX) for c in d.checks)]

    if proc.returncode < 0:
        result.failure = f"tool killed by signal {-proc.returncode}"
    elif compile_errors:
        first = compile_errors[0]
        result.failure = (f"{len(compile_errors)} compiler error(s), first: "
                          f"{first.path}:{first.line}:{first.col}: {first.message}")
    elif proc.returncode != 0 and not cg_diags:
        lines = [l.strip() for l in result.output.strip().splitlines() if l.strip()]
        errs = [l for l in lines if l.lower().startswith("error")]
        detail = errs[-1] if errs else (lines[-1] if lines else "")
        result.failure = f"exit status {proc.returncode}" + (f": {detail}" if detail else "")

    for d in cg_diags:
        if not same_file(d.path, path, REPO_ROOT):
            continue
        for c in d.checks:
            if not c.startswith(CHECK_PREFIX):
                continue
            if score_checks is not None and c not in score_checks:
                continue
            result.found.add((rel, d.line, c))
    return result


# --------------------------------------------------------------------------
# Scoring


def ratio(num: int, den: int) -> Optional[float]:
    return None if den == 0 else num / den


def fmt(v: Optional[float]) -> str:
    return "  n/a" if v is None else f"{v:5.3f}"


def score(expected: Set[Key], found: Set[Key], score_checks: Optional[Set[str]] = None) -> dict:
    tp = expected & found
    fp = found - expected
    fn = expected - found
    shown = set(score_checks) if score_checks is not None else set(KNOWN_CHECKS)
    checks = sorted({k[2] for k in expected | found} | shown)
    per_check = {}
    for c in checks:
        t = sum(1 for k in tp if k[2] == c)
        p = sum(1 for k in fp if k[2] == c)
        n = sum(1 for k in fn if k[2] == c)
        per_check[c] = {"tp": t, "fp": p, "fn": n,
                        "precision": ratio(t, t + p), "recall": ratio(t, t + n)}
    overall = {"tp": len(tp), "fp": len(fp), "fn": len(fn),
               "precision": ratio(len(tp), len(tp) + len(fp)),
               "recall": ratio(len(tp), len(tp) + len(fn))}
    return {"tp": tp, "fp": fp, "fn": fn, "per_check": per_check, "overall": overall}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tidy", required=True,
                    help="path to cudagraph-tidy or clang-tidy")
    ap.add_argument("--load", help="plugin shared object passed to the tool as --load=<so>")
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS),
                    help="corpus directory (default: test/corpus)")
    ap.add_argument("--json", help="write the full result to this file")
    ap.add_argument("--min-precision", type=float,
                    help="exit 1 if overall precision is below this value")
    ap.add_argument("--min-recall", type=float,
                    help="exit 1 if overall recall is below this value")
    ap.add_argument("--score-checks",
                    help="comma-separated cudagraph-* checks to score (default: every cudagraph-* "
                         "check the tool reports, plus the labeled ones)")
    ap.add_argument("-j", "--jobs", type=int, default=min(4, os.cpu_count() or 1),
                    help="files analyzed in parallel (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds allowed per file (default: %(default)s)")
    ap.add_argument("--files", nargs="*",
                    help="only these corpus files (names relative to the corpus)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each command and per-file counts")
    args = ap.parse_args(argv)

    corpus = Path(args.corpus)
    if not corpus.is_absolute():
        corpus = (Path.cwd() / corpus).resolve()
    if not corpus.is_dir():
        print(f"error: corpus directory not found: {corpus}", file=sys.stderr)
        return 2

    tool = args.tidy
    if os.sep in tool or (os.altsep and os.altsep in tool):
        tool = os.path.abspath(tool)
        if not os.path.isfile(tool) or not os.access(tool, os.X_OK):
            print(f"error: cannot run tool: {args.tidy}: not an executable file", file=sys.stderr)
            return 2
    load = args.load
    if load:
        load = os.path.abspath(load)
        if not os.path.isfile(load):
            print(f"error: plugin not found: {args.load}", file=sys.stderr)
            return 2

    score_checks: Optional[Set[str]] = None
    if args.score_checks:
        score_checks = {c.strip() for c in args.score_checks.split(",") if c.strip()}

    try:
        flags = read_flags(corpus)
    except ScoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    files = corpus_files(corpus)
    if args.files:
        wanted = set(args.files)
        files = [f for f in files if f.name in wanted]
        missing = wanted - {f.name for f in files}
        if missing:
            print(f"error: not in corpus: {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    if not files:
        print(f"error: no .cpp/.cu files in {corpus}", file=sys.stderr)
        return 2

    label_warnings: List[str] = []
    expected: Set[Key] = set()
    for f in files:
        expected |= parse_labels(f, f.name, label_warnings)
    if score_checks is not None:
        expected = {k for k in expected if k[2] in score_checks}
    for w in label_warnings:
        print(f"warning: {w}", file=sys.stderr)

    results: List[FileResult] = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = [pool.submit(run_one, tool, load, f, f.name, flags[file_kind(f)],
                                args.timeout, score_checks) for f in files]
            for fut in futs:
                results.append(fut.result())
    except ScoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    failures = [r for r in results if r.failure]
    if failures and len(failures) == len(results):
        print(f"error: the tool could not process any corpus file; no score computed.", file=sys.stderr)
        for r in failures:
            print(f"  {r.rel}: {r.failure}", file=sys.stderr)
        print("  first command: " + " ".join(shlex.quote(c) for c in failures[0].command), file=sys.stderr)
        return 2

    found: Set[Key] = set()
    for r in results:
        found |= r.found
        if args.verbose:
            print("$ " + " ".join(shlex.quote(c) for c in r.command))
            n_exp = sum(1 for k in expected if k[0] == r.rel)
            print(f"  {r.rel}: exit {r.returncode}, {len(r.found)} reported, {n_exp} expected"
                  + (f", FAILED: {r.failure}" if r.failure else ""))

    s = score(expected, found, score_checks)
    cache: Dict[str, List[str]] = {}

    print(f"corpus: {corpus}  files: {len(files)}  labeled: {len(expected)}  reported: {len(found)}")
    print()
    width = max(len(c) for c in s["per_check"]) + 2
    print(f"{'check':<{width}}{'TP':>5}{'FP':>5}{'FN':>5}  {'prec':>6} {'recall':>6}")
    for c, v in s["per_check"].items():
        print(f"{c:<{width}}{v['tp']:>5}{v['fp']:>5}{v['fn']:>5}  {fmt(v['precision']):>6} {fmt(v['recall']):>6}")
    o = s["overall"]
    print(f"{'overall':<{width}}{o['tp']:>5}{o['fp']:>5}{o['fn']:>5}  {fmt(o['precision']):>6} {fmt(o['recall']):>6}")

    def listing(title: str, keys: Set[Key]) -> List[dict]:
        rows = []
        for rel, line, check in sorted(keys):
            rows.append({"file": rel, "line": line, "check": check,
                         "source": source_line(corpus, rel, line, cache)})
        print()
        print(f"{title} ({len(rows)}):")
        for r in rows:
            print(f"  {r['file']}:{r['line']}  [{r['check']}]  {r['source']}")
        return rows

    fp_rows = listing("False positives", s["fp"])
    fn_rows = listing("False negatives", s["fn"])

    if failures:
        print(file=sys.stderr)
        print(f"error: the tool could not process {len(failures)} file(s):", file=sys.stderr)
        for r in failures:
            print(f"  {r.rel}: {r.failure}", file=sys.stderr)
            print("    $ " + " ".join(shlex.quote(c) for c in r.command), file=sys.stderr)

    if args.json:
        doc = {
            "tool": tool,
            "load": load,
            "corpus": str(corpus),
            "files": [{"file": r.rel, "returncode": r.returncode, "failure": r.failure,
                       "command": r.command,
                       "reported": [{"line": k[1], "check": k[2]} for k in sorted(r.found)],
                       "expected": [{"line": k[1], "check": k[2]}
                                    for k in sorted(k for k in expected if k[0] == r.rel)]}
                      for r in results],
            "per_check": s["per_check"],
            "overall": s["overall"],
            "true_positives": [{"file": k[0], "line": k[1], "check": k[2]} for k in sorted(s["tp"])],
            "false_positives": fp_rows,
            "false_negatives": fn_rows,
            "label_warnings": label_warnings,
        }
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")

    if failures:
        return 2
    status = 0
    if args.min_precision is not None:
        p = o["precision"] if o["precision"] is not None else 1.0
        if p < args.min_precision:
            print(f"overall precision {p:.3f} is below --min-precision {args.min_precision}",
                  file=sys.stderr)
            status = 1
    if args.min_recall is not None:
        r = o["recall"] if o["recall"] is not None else 1.0
        if r < args.min_recall:
            print(f"overall recall {r:.3f} is below --min-recall {args.min_recall}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
