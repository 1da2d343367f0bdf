#!/usr/bin/env python3
"""Mutation fuzzer for cudagraph-confirm's inputs.

    fuzz_confirm.py [--seconds N] [--seed S] [--crashes DIR] [--replay DIR]

Takes the lit suite's confirm inputs (an --export-fixes YAML, harness report
JSONL files, a SARIF file), damages them (bit flips, truncation, spliced
lines, values of the wrong type, binary garbage, empty files) and runs
cudagraph-confirm's main() in-process on each damaged set. The only allowed
outcomes are exit status 0, 1 or 2 with no traceback; anything else is a
crash, saved under --crashes as a folder that --replay runs again.

Prints the number of runs, distinct outcomes and crashes; exit status 1 if
there was a crash.
"""

import argparse
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEEDS = os.path.join(ROOT, "test", "harness", "Inputs", "confirm")
CONFIRM = os.path.join(ROOT, "runtime-harness", "confirm", "cudagraph-confirm")


def load_confirm():
    loader = importlib.machinery.SourceFileLoader("cudagraph_confirm", CONFIRM)
    spec = importlib.util.spec_from_loader("cudagraph_confirm", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def seed_files():
    fixes = os.path.join(SEEDS, "fixes.yaml")
    sarif = os.path.join(SEEDS, "findings.sarif")
    reports = []
    for base, _, files in os.walk(os.path.join(SEEDS, "reports")):
        reports += [os.path.join(base, f) for f in sorted(files) if f.endswith(".jsonl")]
    with open(fixes, "rb") as f:
        fixes_text = f.read()
    with open(sarif, "rb") as f:
        sarif_text = f.read()
    report_texts = []
    for path in reports:
        with open(path, "rb") as f:
            report_texts.append(f.read())
    return fixes_text, sarif_text, report_texts


JUNK_VALUES = [None, 0, -1, 2 ** 64, 1.5, "", "x" * 300, [], {}, [1, "a"], {"a": None},
               True, "\u0000", "../../etc/passwd"]


def mutate_json_line(rng, line):
    try:
        value = json.loads(line)
    except ValueError:
        return line
    if not isinstance(value, dict) or not value:
        return line
    key = rng.choice(list(value))
    choice = rng.randrange(3)
    if choice == 0:
        value[key] = rng.choice(JUNK_VALUES)
    elif choice == 1:
        del value[key]
    else:
        value[rng.choice(["event", "root_cause_of", "site", "stack", "region", "api",
                          "result", "captures", "python_stack", "pid"])] = rng.choice(JUNK_VALUES)
    return json.dumps(value).encode()


def mutate(rng, data):
    """One to four damages to a byte string."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(9)
        if kind == 0 and data:  # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
        elif kind == 1 and data:  # truncation
            del data[rng.randrange(len(data)):]
        elif kind == 2:  # garbage inserted
            at = rng.randrange(len(data) + 1)
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        elif kind == 3:  # lines duplicated or swapped
            lines = bytes(data).split(b"\n")
            if len(lines) > 1:
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
                lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
            data = bytearray(b"\n".join(lines))
        elif kind == 4:  # a JSON value of the wrong type
            lines = bytes(data).split(b"\n")
            i = rng.randrange(len(lines))
            lines[i] = mutate_json_line(rng, lines[i])
            data = bytearray(b"\n".join(lines))
        elif kind == 5:  # empty
            data = bytearray()
        elif kind == 6:  # pure garbage
            data = bytearray(rng.randrange(256) for _ in range(rng.randint(1, 512)))
        elif kind == 7 and data:  # a YAML/JSON structural character
            i = rng.randrange(len(data))
            data[i:i] = rng.choice([b":", b"-", b"{", b"[", b"]", b"}", b"\"", b"'",
                                    b"\n  ", b"\t", b"&a", b"*a", b"!!python/object"])
        elif kind == 8 and data:  # a number made huge or negative
            digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
            if digits:
                i = rng.choice(digits)
                data[i:i + 1] = rng.choice([b"99999999999999999999", b"-1", b"1e309", b"0x1"])
    return bytes(data)


def write_case(folder, fixes, sarif, reports):
    os.makedirs(os.path.join(folder, "reports"), exist_ok=True)
    with open(os.path.join(folder, "fixes.yaml"), "wb") as f:
        f.write(fixes)
    with open(os.path.join(folder, "findings.sarif"), "wb") as f:
        f.write(sarif)
    for i, text in enumerate(reports):
        with open(os.path.join(folder, "reports", "r%d.jsonl" % i), "wb") as f:
            f.write(text)


def run_case(confirm, folder, use_sarif, as_json):
    argv = ["cudagraph-confirm", "--fixes", os.path.join(folder, "fixes.yaml"),
            "--source-root", os.path.join(SEEDS, "src")]
    if use_sarif:
        argv += ["--sarif", os.path.join(folder, "findings.sarif"),
                 "--sarif-out", os.path.join(folder, "out.sarif")]
    if as_json:
        argv.append("--json")
    argv.append(os.path.join(folder, "reports"))
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = argv
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = confirm.main()
            except SystemExit as e:  # argparse
                code = e.code
    except Exception:  # noqa: BLE001 -- a crash is what we are looking for
        return "crash", traceback.format_exc()
    finally:
        sys.argv = saved
    if code not in (0, 1, 2) or "Traceback" in err.getvalue():
        return "crash", "exit %r\n%s" % (code, err.getvalue())
    return code, err.getvalue().splitlines()[-1:] if code == 2 else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--crashes", default=os.path.join(tempfile.gettempdir(),
                                                          "cudagraph-confirm-crashes"))
    parser.add_argument("--replay", help="run the saved cases in this folder again")
    args = parser.parse_args()
    confirm = load_confirm()

    if args.replay:
        crashes = 0
        cases = sorted(d for d in os.listdir(args.replay)
                       if os.path.isdir(os.path.join(args.replay, d)))
        for case in cases:
            folder = os.path.join(args.replay, case)
            for use_sarif in (False, True):
                outcome, detail = run_case(confirm, folder, use_sarif, False)
                if outcome == "crash":
                    crashes += 1
                    print("%s: crash\n%s" % (case, detail))
        print("fuzz_confirm: replayed %d cases, %d crashes" % (len(cases), crashes))
        return 1 if crashes else 0

    rng = random.Random(args.seed)
    fixes, sarif, reports = seed_files()
    work = tempfile.mkdtemp(prefix="cudagraph-confirm-fuzz-")
    runs, crashes, outcomes = 0, 0, {}
    deadline = time.time() + args.seconds
    try:
        while time.time() < deadline:
            case_fixes = mutate(rng, fixes) if rng.random() < 0.4 else fixes
            case_sarif = mutate(rng, sarif) if rng.random() < 0.4 else sarif
            case_reports = [mutate(rng, r) if rng.random() < 0.5 else r for r in reports]
            folder = os.path.join(work, "case")
            shutil.rmtree(folder, ignore_errors=True)
            write_case(folder, case_fixes, case_sarif, case_reports)
            outcome, detail = run_case(confirm, folder, rng.random() < 0.5, rng.random() < 0.3)
            runs += 1
            key = str(outcome)
            outcomes[key] = outcomes.get(key, 0) + 1
            if outcome == "crash":
                crashes += 1
                saved = os.path.join(args.crashes, "crash-%d-%d" % (args.seed, crashes))
                shutil.copytree(folder, saved, dirs_exist_ok=True)
                with open(os.path.join(saved, "traceback.txt"), "w") as f:
                    f.write(detail)
                print("fuzz_confirm: crash saved to %s\n%s" % (saved, detail.splitlines()[-1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("fuzz_confirm: %d runs in %.0f s, outcomes %s, %d crashes"
          % (runs, args.seconds, json.dumps(outcomes, sort_keys=True), crashes))
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
