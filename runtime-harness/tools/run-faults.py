#!/usr/bin/env python3
"""The harness's fault matrix: programs that die, fork, exec, race or hold
CUPTI while a capture is open, each run once without and once under the
harness.

    run-faults.py --build BUILD --out DIR [--two-gpus] [--fixtures]
                  [--only SUBSTRING]
    run-faults.py --recheck --build BUILD --out DIR   (judge recorded runs again)

For every case it checks two things:
  - the program's results are unchanged: its exit status and its result
    lines (stdout; for torchrun, the lines each rank prints) are identical
    with and without the harness;
  - the report holds what it must: every event written before a crash, the
    root cause with the thread that caused it, the captures left open.

--two-gpus adds the NCCL and torch.distributed cases (two GPUs needed);
--fixtures also runs every fixture region without the harness and compares
its stdout with the run under it.

Writes DIR/faults.json (one entry per case, with every check and its
outcome), DIR/reports/ and DIR/logs/, and prints a table. Exit status 1 if
any check failed.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HARNESS, "python"))

from cudagraph_harness import symbolize  # noqa: E402

# Environment variables that load the harness; removed for the plain run.
HARNESS_ENV = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "CUDAGRAPH_HARNESS_OUTPUT")


def plain_env():
    env = dict(os.environ)
    for name in HARNESS_ENV:
        env.pop(name, None)
    return env


def status(rc):
    """Exit status as a shell reports it (128+N for signal N)."""
    return 128 - rc if rc < 0 else rc


def load_events(pattern):
    """Every event of the reports matching pattern, in time order; a line
    that is not a JSON object becomes an unreadable_line event."""
    events = []
    for path in sorted(glob.glob(pattern)):
        found, bad = symbolize.read_jsonl(path)
        for event in found:
            event.setdefault("_file", os.path.basename(path))
        events += found
        events += [{"event": "unreadable_line", "file": path, "line": n} for n in bad]
    events.sort(key=lambda e: e.get("time_ns", 0) if isinstance(e.get("time_ns"), int) else 0)
    return events


def of_kind(events, kind):
    return [e for e in events if e.get("event") == kind]


def root_causes(events):
    return [e for e in events if e.get("root_cause_of")]


class Checks:
    def __init__(self):
        self.items = []

    def expect(self, what, ok):
        self.items.append({"check": what, "ok": bool(ok)})


# --- expectations per case ------------------------------------------------

def expect_clean(c, ev, out):
    c.expect("no root cause", not root_causes(ev))
    ends = of_kind(ev, "harness_end")
    c.expect("harness_end written, no capture left open",
             ends and all(e.get("open_captures") == [] for e in ends))


def expect_died(signal_name):
    def check(c, ev, out):
        rc = root_causes(ev)
        c.expect("root cause cudaDeviceSynchronize recorded",
                 any(e.get("api") == "cudaDeviceSynchronize" for e in rc))
        sig = of_kind(ev, "target_signal")
        c.expect("target_signal %s written" % signal_name,
                 len(sig) == 1 and sig[0].get("name") == signal_name)
        if sig and rc:
            c.expect("root cause written before the signal",
                     rc[0]["time_ns"] <= sig[0]["time_ns"])
        open_caps = sig[0].get("open_captures") if sig else None
        c.expect("the signal event names the open capture and its root cause",
                 isinstance(open_caps, list) and len(open_caps) == 1 and
                 open_caps[0].get("root_cause_api") == "cudaDeviceSynchronize")
        c.expect("no harness_end (the program died)", not of_kind(ev, "harness_end"))
    return check


def expect_exit_open(c, ev, out):
    ends = of_kind(ev, "harness_end")
    c.expect("harness_end lists one capture left open",
             len(ends) == 1 and len(ends[0].get("open_captures", [])) == 1)
    c.expect("no target_signal", not of_kind(ev, "target_signal"))


def expect_fork(c, ev, out):
    starts = of_kind(ev, "harness_start")
    forks = of_kind(ev, "fork_child")
    parent = starts[0]["pid"] if starts else None
    c.expect("fork_child written by the child, naming the parent",
             len(forks) == 1 and forks[0].get("parent_pid") == parent and
             forks[0].get("pid") != parent)
    c.expect("the child inherited one open capture and reports none at exit",
             forks and forks[0].get("parent_open_captures") == 1 and
             any(e.get("pid") == forks[0].get("pid") and e.get("open_captures") == []
                 for e in of_kind(ev, "harness_end")))
    c.expect("the parent's capture ended cleanly",
             "end capture fork: cudaSuccess" in out and not root_causes(ev))
    c.expect("the parent's harness_end has no open capture",
             any(e.get("pid") == parent and e.get("open_captures") == []
                 for e in of_kind(ev, "harness_end")))


def expect_exec(c, ev, out):
    starts = of_kind(ev, "harness_start")
    c.expect("both images started a harness with the same pid",
             len(starts) == 2 and starts[0]["pid"] == starts[1]["pid"])
    c.expect("the first image's root cause is on disk",
             any(e.get("api") == "cudaDeviceSynchronize" for e in root_causes(ev)))
    c.expect("the second image captured cleanly",
             "end capture clean: cudaSuccess" in out and
             len(of_kind(ev, "harness_end")) == 1)


def expect_threads(count):
    def check(c, ev, out):
        begins = of_kind(ev, "capture_begin")
        ends = of_kind(ev, "capture_end")
        c.expect("%d captures begun on %d threads" % (count, count),
                 len(begins) == count and len({e.get("thread") for e in begins}) == count)
        c.expect("%d captures ended" % count, len(ends) == count)
        c.expect("no root cause", not root_causes(ev))
        c.expect("every capture succeeded",
                 out.count(": cudaSuccess") == count)
    return check


def expect_instantiate(c, ev, out):
    rc = root_causes(ev)
    c.expect("root cause is cudaGraphInstantiate (900)",
             any(e.get("api") == "cudaGraphInstantiate" and e.get("result") == 900
                 for e in rc))
    c.expect("it invalidated the three captures still open",
             any(e.get("api") == "cudaGraphInstantiate" and
                 len(e.get("root_cause_of", [])) == 3 for e in rc))
    c.expect("the first capture succeeded, the other three failed",
             out.count(": cudaSuccess") == 1)


def expect_watchdog(fails, begins=1):
    def check(c, ev, out):
        rc = root_causes(ev)
        if not fails:
            c.expect("no root cause", not rc)
            c.expect("the query succeeded", "watchdog: cudaSuccess" in out or
                     "watchdog query returned" in out)
            return
        capture_threads = {e.get("thread") for e in of_kind(ev, "capture_begin")}
        c.expect("%d capture(s) begun" % begins, len(capture_threads) >= 1 and
                 len(of_kind(ev, "capture_begin")) == begins)
        c.expect("root cause is the watchdog's cudaEventQuery (900)",
                 any(e.get("api") == "cudaEventQuery" and e.get("result") == 900
                     for e in rc))
        c.expect("named on the watchdog thread, not a capturing one",
                 any(e.get("api") == "cudaEventQuery" and
                     e.get("thread") not in capture_threads for e in rc))
    return check


def expect_holder(c, ev, out):
    c.expect("subscriber_conflict written", of_kind(ev, "subscriber_conflict"))


def expect_correct(words, no_root=True):
    def check(c, ev, out):
        for word in words:
            c.expect("output says '%s'" % word, word in out)
        c.expect("nothing says WRONG", "WRONG" not in out)
        if no_root:
            c.expect("no root cause", not root_causes(ev))
    return check


def expect_torch_watchdog(c, ev, out):
    rc = root_causes(ev)
    capture_threads = {e.get("thread") for e in of_kind(ev, "capture_begin")}
    c.expect("a root cause is recorded on each rank",
             len({e.get("pid") for e in rc}) == 2)
    c.expect("the root cause is a call on a thread that was not capturing",
             rc and all(e.get("thread") not in capture_threads for e in rc))


# --- cases ----------------------------------------------------------------

def cases(build, two_gpus):
    b = os.path.join(build, "bin")
    faults = os.path.join(b, "faults")
    out = [
        ("clean", [faults, "clean"], expect_clean),
        ("segv", [faults, "segv"], expect_died("SIGSEGV")),
        ("abort", [faults, "abort"], expect_died("SIGABRT")),
        ("exit-open", [faults, "exit-open"], expect_exit_open),
        ("fork", [faults, "fork"], expect_fork),
        ("exec", [faults, "exec"], expect_exec),
        ("threads-local", [faults, "threads-local"], expect_threads(4)),
        ("threads-global", [faults, "threads-global"], expect_threads(4)),
        ("threads-global-instantiate", [faults, "threads-global-instantiate"],
         expect_instantiate),
        ("watchdog-global", [faults, "watchdog-global"], expect_watchdog(True)),
        ("watchdog-local", [faults, "watchdog-local"], expect_watchdog(False)),
        ("cupti-holder", [os.path.join(b, "cupti_holder")], expect_holder),
    ]
    if two_gpus:
        nccl = os.path.join(b, "multi_gpu_nccl")
        out += [
            ("nccl-capture-each", [nccl, "capture-each"], expect_correct(["per-gpu correct"])),
            ("nccl-allreduce", [nccl, "allreduce"], expect_correct(["allreduce correct"])),
            ("nccl-allreduce-watchdog", [nccl, "allreduce-watchdog"],
             expect_watchdog(True, begins=2)),
            ("nccl-allreduce-watchdog-local", [nccl, "allreduce-watchdog-local"],
             expect_correct(["allreduce correct"])),
        ]
        script = os.path.join(HARNESS, "examples", "multi_gpu_torch.py")
        torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc-per-node", "2", script]
        out += [
            ("torch-capture", torchrun + ["capture"],
             expect_correct(["rank 0 capture correct", "rank 1 capture correct"])),
            ("torch-allreduce", torchrun + ["allreduce"],
             expect_correct(["rank 0 allreduce correct", "rank 1 allreduce correct"])),
            ("torch-ddp", torchrun + ["ddp"],
             expect_correct(["rank 0 ddp correct", "rank 1 ddp correct"])),
            ("torch-watchdog", torchrun + ["watchdog"], expect_torch_watchdog),
        ]
    return out


def result_lines(text, torchrun):
    lines = text.splitlines()
    if torchrun:
        lines = sorted(l for l in lines if l.startswith("rank "))
    return lines


def run_case(build, outdir, name, argv, expect, timeout):
    launcher = os.path.join(build, "bin", "cudagraph-run")
    logs = os.path.join(outdir, "logs")
    reports = os.path.join(outdir, "reports")
    for f in glob.glob(os.path.join(reports, name + ".*.jsonl")):
        os.remove(f)
    runs = {}
    for label, cmd, env in (
            ("plain", argv, plain_env()),
            ("harness", [launcher, "-o", os.path.join(reports, name + ".%p.jsonl"), "--"] + argv,
             dict(os.environ))):
        start = time.time()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, timeout=timeout, text=True, errors="replace")
            rc, so, se = status(p.returncode), p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            so = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
            rc, se = "timeout", ""
        runs[label] = {"rc": rc, "stdout": so, "seconds": round(time.time() - start, 2)}
        with open(os.path.join(logs, "%s.%s.log" % (name, label)), "w") as f:
            f.write(so + LOG_STDERR + se + LOG_STATUS + "%s\n" % rc)
    return evaluate(name, argv, expect, runs, load_events(os.path.join(reports, name + ".*.jsonl")))


LOG_STDERR = "\n--- stderr ---\n"
LOG_STATUS = "\n[run-faults] rc="


def recorded_runs(outdir, name):
    """The runs of a case as its logs recorded them, or None."""
    runs = {}
    for label in ("plain", "harness"):
        try:
            with open(os.path.join(outdir, "logs", "%s.%s.log" % (name, label)),
                      encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        rc = text.rsplit(LOG_STATUS, 1)[-1].strip() if LOG_STATUS in text else "?"
        runs[label] = {"rc": int(rc) if rc.lstrip("-").isdigit() else rc,
                       "stdout": text.split(LOG_STDERR, 1)[0], "seconds": None}
    return runs


def evaluate(name, argv, expect, runs, events):
    """The checks of one case, from its two runs and its report events."""
    torchrun = "torch.distributed.run" in argv
    entry = {"case": name, "command": argv}
    c = Checks()
    c.expect("same exit status with and without the harness (%s)" % runs["plain"]["rc"],
             runs["plain"]["rc"] == runs["harness"]["rc"])
    c.expect("same results with and without the harness",
             result_lines(runs["plain"]["stdout"], torchrun) ==
             result_lines(runs["harness"]["stdout"], torchrun))
    c.expect("every report line is JSON", not of_kind(events, "unreadable_line"))
    try:
        expect(c, events, runs["harness"]["stdout"])
    except Exception as e:  # A malformed report fails the case, not the run.
        c.expect("report readable (%s: %s)" % (type(e).__name__, e), False)
    entry["exit_status"] = runs["plain"]["rc"]
    entry["exit_status_harness"] = runs["harness"]["rc"]
    entry["seconds"] = {k: v["seconds"] for k, v in runs.items()}
    entry["events"] = {}
    for e in events:
        entry["events"][e.get("event", "?")] = entry["events"].get(e.get("event", "?"), 0) + 1
    entry["root_causes"] = [{"api": e.get("api"), "result": e.get("result"),
                             "thread": e.get("thread"), "pid": e.get("pid")}
                            for e in root_causes(events)]
    entry["result_lines"] = result_lines(runs["plain"]["stdout"], torchrun)[:20]
    entry["checks"] = c.items
    entry["ok"] = all(i["ok"] for i in c.items)
    return entry


# The program's results: how far the replayed results are from eager ones,
# and how many replays ran. The verdict's label is a diagnosis, which the
# harness refines (an escape it saw, the error code of a root cause it
# caught where the probe alone sees only libtorch's exception), so it is
# counted, not compared.
VERDICT_KEYS = ("max_diff", "replays")


def plain_verdict(stdout):
    for line in stdout.splitlines():
        if line.startswith('{"event":"verdict"'):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def fixture_identity(build, outdir, jobs, timeout):
    """Every fixture region with and without the harness: the same exit
    status and the same verdict (what capture returned, how far the replayed
    results are from eager ones, how many replays ran)? Without the harness
    the probe prints its verdict on stdout; under it, into the report."""
    launcher = os.path.join(build, "bin", "cudagraph-run")
    programs = [os.path.join(build, "bin", n) for n in
                ("cudagraph-fixtures-raw", "cudagraph-fixtures-torch")]
    work = []
    for prog in programs:
        if not os.path.exists(prog):
            continue
        listed = subprocess.run([prog, "--list"], stdout=subprocess.PIPE, text=True,
                                env=plain_env(), timeout=300)
        for line in listed.stdout.splitlines():
            if line.strip():
                work.append((prog, line.split("\t")[0]))
    folder = os.path.join(outdir, "fixture-identity")
    os.makedirs(folder, exist_ok=True)

    def one(item):
        prog, region = item
        report = os.path.join(folder, region + ".jsonl")
        if os.path.exists(report):
            os.remove(report)
        seen = []
        for cmd, env in (([prog, "--region", region], plain_env()),
                         ([launcher, "--quiet", "--no-symbolize", "-o", report,
                           "--", prog, "--region", region], dict(os.environ))):
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   env=env, timeout=timeout, text=True, errors="replace")
                seen.append([status(p.returncode), p.stdout])
            except subprocess.TimeoutExpired:
                seen.append(["timeout", ""])
        plain = plain_verdict(seen[0][1])
        under = [e for e in load_events(report) if e.get("event") == "verdict"]
        under = under[0] if under else None
        pick = lambda v: {k: v.get(k) for k in VERDICT_KEYS} if v else None
        # A region that dies before its verdict has none either way.
        same = seen[0][0] == seen[1][0] and pick(plain) == pick(under)
        label = lambda v: v and "%s %s" % (v.get("verdict"), v.get("result") or "")
        return {"region": region, "same": same,
                "refined": label(plain) != label(under),
                "plain": {"status": seen[0][0], "results": pick(plain),
                          "verdict": label(plain)},
                "harness": {"status": seen[1][0], "results": pick(under),
                            "verdict": label(under)}}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, work))
    differing = [r for r in results if not r["same"]]
    refined = [{"region": r["region"], "plain": r["plain"]["verdict"],
                "harness": r["harness"]["verdict"]} for r in results if r["refined"]]
    return {"regions": len(results), "identical": len(results) - len(differing),
            "compared": ["exit status"] + list(VERDICT_KEYS), "differing": differing,
            "verdicts_refined_by_harness": refined}


def recheck(args):
    """Every case whose logs are in args.out, judged again."""
    failed = 0
    judged = 0
    for name, argv, expect in cases(args.build, True):
        if args.only and args.only not in name:
            continue
        runs = recorded_runs(args.out, name)
        if runs is None:
            continue
        entry = evaluate(name, argv, expect, runs,
                         load_events(os.path.join(args.out, "reports", name + ".*.jsonl")))
        judged += 1
        bad = [i["check"] for i in entry["checks"] if not i["ok"]]
        failed += bool(bad)
        print("%-32s %-4s %d checks%s" % (name, "FAIL" if bad else "ok", len(entry["checks"]),
                                          ("; failed: " + "; ".join(bad)) if bad else ""))
    print("run-faults: %d cases judged again, %d failed" % (judged, failed))
    if not judged:
        sys.stderr.write("run-faults: no recorded case under %s\n" % args.out)
        return 2
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--two-gpus", action="store_true")
    parser.add_argument("--fixtures", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=int, default=180)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--recheck", action="store_true",
                        help="judge the logs and reports already in --out again, "
                             "running nothing (no GPU needed)")
    args = parser.parse_args()
    if args.recheck:
        return recheck(args)
    for sub in ("logs", "reports"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    results = []
    for name, argv, expect in cases(args.build, args.two_gpus):
        if args.only and args.only not in name:
            continue
        if not os.path.exists(argv[0]):
            results.append({"case": name, "ok": False, "skipped": "not built: " + argv[0],
                            "checks": []})
            print("%-32s NOT BUILT" % name, flush=True)
            continue
        entry = run_case(args.build, args.out, name, argv, expect, args.timeout)
        results.append(entry)
        failed = [i["check"] for i in entry["checks"] if not i["ok"]]
        print("%-32s %-4s exit %-4s %s" % (name, "ok" if entry["ok"] else "FAIL",
                                          entry["exit_status"], "; ".join(failed)), flush=True)
    summary = {"cases": results}
    if args.fixtures:
        summary["fixture_identity"] = fixture_identity(args.build, args.out, args.jobs,
                                                       args.timeout)
        fi = summary["fixture_identity"]
        print("fixture regions with identical results: %d of %d" %
              (fi["identical"], fi["regions"]), flush=True)
    with open(os.path.join(args.out, "faults.json"), "w") as f:
        json.dump(summary, f, indent=1)
    bad = [r for r in results if not r["ok"]]
    if args.fixtures and summary["fixture_identity"]["differing"]:
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
