#!/usr/bin/env python3
"""Run cudagraph-tidy over a corpus of real public files that do CUDA stream
capture, and score its findings against a hand triage.

corpus.txt, one entry a line:

    owner/repo@<40-hex commit>:path/in/repo [-- <extra clang flags>]

In the flags, `{repo}` stands for the root of the entry's materialized tree,
`{tree:owner/repo@<commit>}` for the root of another fetched repository's tree
(materialized too; for headers of a dependency), `{mount:NAME=owner/repo@<commit>}`
for a directory holding that tree under the name NAME (for a dependency that
the project includes as a submodule, `#include "NAME/x.h"`), and `{nvcc_compat}` for a
header the script writes that gives clang's CUDA mode the nvcc values some
headers test (`#if __CUDACC__`: clang defines it empty); use it with
`-include {nvcc_compat}`. `{toolkit_standins}` is a directory of declaration-only
headers for CUDA toolkit components this machine's toolkit lacks (the PTX
compiler library); use it with `-isystem {toolkit_standins}`. The file's own directory is
searched first (`-I <dir>`, as most builds do); the flag `{no_file_dir}` leaves it out, for a
project whose source directory holds a header named like a toolkit one (`cuda.h`). Lines
starting with `#` are comments.

Each repository must have been fetched (its git directory is expected at
<mirror-root>/<owner>+<repo>/repo); the commit's tree is extracted once into
<cache>/<owner>+<repo>@<commit>/ with `git archive | tar -x`.

triage.txt, one finding a line:

    owner/repo@commit:path:LINE check-name TRUE|FALSE  reason
    MISSED owner/repo@commit:path:LINE hazard  reason

Usage:
    python3 scripts/realcode/run.py [-j 2] [--tool BIN] [--only SUBSTR]
    python3 scripts/realcode/run.py --triage scripts/realcode/triage.txt
    python3 scripts/realcode/run.py --triage FILE --no-run   # score the last results.json
    python3 scripts/realcode/run.py --corpus LIST --parse-only  # compiler errors only (blind sets)
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

DEFAULT_TOOL = os.path.join(ROOT, "build", "bin", "cudagraph-tidy")
DEFAULT_CACHE = "/tmp/cudagraph-realcode"
DEFAULT_MIRRORS = "/work/.mirror"
CHECKS = "-*,cudagraph-*"
# Every check off (the cudagraph ones stay on unless a pattern names them):
# only compiler errors, for building blind sets.
PARSE_ONLY_CHECKS = "-*,-cudagraph-*"

ENTRY_RE = re.compile(
    r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@(?P<commit>[0-9a-fA-F]{40}):(?P<path>\S+)$")
DIAG_RE = re.compile(
    r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error|note|fatal error): "
    r"(?P<msg>.*?)(?: \[(?P<check>[A-Za-z0-9_.,-]+)\])?$")
ERROR_LINE_RE = re.compile(r"^(?:fatal )?error: ")


def parse_corpus(path):
    entries = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            spec, _, flags = line.partition(" -- ")
            spec = spec.strip()
            m = ENTRY_RE.match(spec)
            if not m:
                sys.exit(f"{path}:{lineno}: cannot parse entry: {line}")
            entries.append({
                "spec": spec,
                "repo": m.group("repo"),
                "commit": m.group("commit").lower(),
                "path": m.group("path"),
                "flags": shlex.split(flags.strip()) if flags.strip() else [],
            })
    return entries


def mirror_dir(args, repo):
    return os.path.join(args.mirror_root, repo.replace("/", "+"), "repo")


def tree_dir(args, repo, commit):
    return os.path.join(args.cache, f"{repo.replace('/', '+')}@{commit}")


def materialize(args, repo, commit):
    """Extracts the commit's tree once; returns (root, problem)."""
    git_dir = mirror_dir(args, repo)
    if not os.path.isdir(git_dir):
        return None, f"not fetched: call fetch with source github:{repo}"
    root = tree_dir(args, repo, commit)
    done = os.path.join(root, ".cudagraph-realcode-materialized")
    if os.path.exists(done):
        return root, None
    ok = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", commit + "^{commit}"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if not ok:
        head = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        return None, (f"commit {commit} is not in {git_dir} (its snapshot has HEAD {head}); "
                      f"fetch github:{repo} again or update corpus.txt")
    os.makedirs(args.cache, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=os.path.basename(root) + ".", dir=args.cache)
    archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", "--format=tar", commit],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    untar = subprocess.run(["tar", "-x", "-C", tmp], stdin=archive.stdout,
                           stderr=subprocess.PIPE)
    archive.stdout.close()
    archive.wait()
    if archive.returncode != 0 or untar.returncode != 0:
        # Snapshots may lack their largest blobs, which stops `git archive`:
        # write the tree blob by blob instead, leaving the absent ones out.
        shutil.rmtree(tmp, ignore_errors=True)
        tmp = tempfile.mkdtemp(prefix=os.path.basename(root) + ".", dir=args.cache)
        problem = extract_blobs(git_dir, commit, tmp)
        if problem:
            shutil.rmtree(tmp, ignore_errors=True)
            return None, f"cannot materialize {repo}@{commit}: {problem}"
    if os.path.exists(root):
        shutil.rmtree(root, ignore_errors=True)
    os.rename(tmp, root)
    open(done, "w").close()
    return root, None


def extract_blobs(git_dir, commit, dest):
    ls = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", "--full-tree", commit],
                        capture_output=True)
    if ls.returncode != 0:
        return ls.stderr.decode(errors="replace")[-500:]
    items = []
    for rec in ls.stdout.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind != b"blob":
            continue  # submodules
        items.append((mode, sha, path.decode(errors="surrogateescape")))
    batch = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def feed():
        for _, sha, _ in items:
            batch.stdin.write(sha + b"\n")
        batch.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    missing = 0
    for mode, sha, path in items:
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            missing += 1
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if mode == b"120000":
            try:
                os.symlink(data.decode(errors="surrogateescape"), target)
            except OSError:
                pass
            continue
        with open(target, "wb") as f:
            f.write(data)
        if mode == b"100755":
            os.chmod(target, 0o755)
    batch.wait()
    if missing:
        print(f"note: {missing} blobs absent from {git_dir} were left out", file=sys.stderr)
    return None


TREE_RE = re.compile(r"\{(?:tree:|mount:([A-Za-z0-9_.-]+)=)"
                     r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([0-9a-fA-F]{40})\}")
# TREE_RE.sub(...) and .finditer(...) read groups 2 and 3 for repo and commit.

NVCC_COMPAT = """/* Written by scripts/realcode/run.py: what nvcc gives host code that clang's
   CUDA mode does not. clang defines __CUDACC__ empty; nvcc defines it as 1,
   and some headers test it with #if. nvcc's math_functions.hpp declares
   min/max for integer types __host__ __device__; clang's are __device__ only,
   so host calls such as max(size_t, size_t) find no candidate. clang 19
   lacks the __stwt store intrinsic that CUDA 13's nccl_device headers use. */
#undef __CUDACC__
#define __CUDACC__ 1
#ifdef __cplusplus
#include <algorithm>
using std::max;
using std::min;
template <class T> __device__ inline void __stwt(T *p, T v) { *p = v; }
#endif
"""


def nvcc_compat_header(args):
    path = os.path.join(args.cache, "compat", "nvcc-compat.h")
    if not os.path.exists(path) or open(path).read() != NVCC_COMPAT:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(NVCC_COMPAT)
    return path


# Declaration-only stand-ins for CUDA toolkit headers that ship in separate
# packages and are absent here. Names and values follow the public API
# documentation; without them a file that includes one stops parsing its
# types, and the analysis sees RecoveryExpr where the project's code is.
TOOLKIT_STANDINS = {
    "nvPTXCompiler.h": """/* Written by scripts/realcode/run.py: declarations of the PTX compiler
   library's C API for parsing only (no implementation). */
#pragma once
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct nvPTXCompiler *nvPTXCompilerHandle;
typedef enum {
  NVPTXCOMPILE_SUCCESS = 0,
  NVPTXCOMPILE_ERROR_INVALID_COMPILER_HANDLE = 1,
  NVPTXCOMPILE_ERROR_INVALID_INPUT = 2,
  NVPTXCOMPILE_ERROR_COMPILATION_FAILURE = 3,
  NVPTXCOMPILE_ERROR_INTERNAL = 4,
  NVPTXCOMPILE_ERROR_OUT_OF_MEMORY = 5,
  NVPTXCOMPILE_ERROR_COMPILER_INVOCATION_INCOMPLETE = 6,
  NVPTXCOMPILE_ERROR_UNSUPPORTED_PTX_VERSION = 7,
  NVPTXCOMPILE_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 8,
  NVPTXCOMPILE_ERROR_CANCELLED = 9
} nvPTXCompileResult;
nvPTXCompileResult nvPTXCompilerGetVersion(unsigned *major, unsigned *minor);
nvPTXCompileResult nvPTXCompilerCreate(nvPTXCompilerHandle *compiler,
                                       size_t ptxCodeLen, const char *ptxCode);
nvPTXCompileResult nvPTXCompilerDestroy(nvPTXCompilerHandle *compiler);
nvPTXCompileResult nvPTXCompilerCompile(nvPTXCompilerHandle compiler,
                                        int numCompileOptions,
                                        const char *const *compileOptions);
nvPTXCompileResult nvPTXCompilerGetCompiledProgramSize(nvPTXCompilerHandle compiler,
                                                       size_t *binaryImageSize);
nvPTXCompileResult nvPTXCompilerGetCompiledProgram(nvPTXCompilerHandle compiler,
                                                   void *binaryImage);
nvPTXCompileResult nvPTXCompilerGetErrorLogSize(nvPTXCompilerHandle compiler,
                                                size_t *errorLogSize);
nvPTXCompileResult nvPTXCompilerGetErrorLog(nvPTXCompilerHandle compiler,
                                            char *errorLog);
nvPTXCompileResult nvPTXCompilerGetInfoLogSize(nvPTXCompilerHandle compiler,
                                               size_t *infoLogSize);
nvPTXCompileResult nvPTXCompilerGetInfoLog(nvPTXCompilerHandle compiler,
                                           char *infoLog);
#ifdef __cplusplus
}
#endif
""",
}


def toolkit_standins(args):
    root = os.path.join(args.cache, "compat", "toolkit")
    for name, text in TOOLKIT_STANDINS.items():
        path = os.path.join(root, name)
        if not os.path.exists(path) or open(path).read() != text:
            os.makedirs(root, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    return root


def substitute(args, flag, root):
    """Expands {repo}, {tree:owner/repo@commit} and {nvcc_compat}; returns (flag, problem)."""
    problem = None

    def tree(m):
        nonlocal problem
        other, p = materialize(args, m.group(2), m.group(3).lower())
        if p:
            problem = p
            return m.group(0)
        if m.group(1):  # {mount:NAME=...}: a directory with NAME -> the tree
            mount = os.path.join(args.cache, "mounts", os.path.basename(other))
            link = os.path.join(mount, m.group(1))
            os.makedirs(mount, exist_ok=True)
            if not os.path.islink(link):
                os.symlink(other, link)
            return mount
        return other
    flag = TREE_RE.sub(tree, flag)
    flag = flag.replace("{repo}", root)
    if "{nvcc_compat}" in flag:
        flag = flag.replace("{nvcc_compat}", nvcc_compat_header(args))
    if "{toolkit_standins}" in flag:
        flag = flag.replace("{toolkit_standins}", toolkit_standins(args))
    return flag, problem


def build_command(args, entry, root):
    src = os.path.join(root, entry["path"])
    is_cuda = entry["path"].endswith((".cu", ".cuh"))
    flags = ["-std=c++17"]
    if is_cuda:
        flags += ["-x", "cuda", "--cuda-gpu-arch=sm_80", "-nocudalib"]
    if "{no_file_dir}" not in entry["flags"]:
        flags += ["-I", os.path.dirname(src)]
    flags += ["-I", root]
    # libtorch (Debian's libtorch-dev) lives in /usr/include, already a system
    # directory; naming it with -isystem again would put it before libstdc++'s
    # own directories and break its #include_next <math.h>.
    flags += ["-isystem", "/usr/include/torch/csrc/api/include"]
    for flag in entry["flags"]:
        if flag == "{no_file_dir}":
            continue
        flag, problem = substitute(args, flag, root)
        if problem:
            return None, problem
        flags.append(flag)
    header_filter = "^" + re.escape(root + "/")
    # --config keeps a .clang-tidy of the fetched project (WarningsAsErrors, its own
    # checks and options) out of the run.
    parse_only = getattr(args, "parse_only", False)
    checks = PARSE_ONLY_CHECKS if parse_only else CHECKS
    config = json.dumps({"Checks": checks, "HeaderFilterRegex": header_filter})
    cmd = [args.tool, "--checks=" + checks, "--config=" + config,
           "--header-filter=" + header_filter]
    if parse_only:
        cmd.append("--allow-no-checks")
    cmd += [src, "--"] + flags
    return cmd, None


def parse_output(text, root):
    findings, errors, error_lines = [], 0, []
    current = None

    def rel(path):
        path = os.path.normpath(path)
        if path.startswith(root + os.sep):
            return path[len(root) + 1:]
        return path

    for line in text.splitlines():
        m = DIAG_RE.match(line)
        if m and m.group("kind") == "warning" and (m.group("check") or "").startswith("cudagraph-"):
            current = {"file": rel(m.group("file")), "line": int(m.group("line")),
                       "col": int(m.group("col")), "check": m.group("check"),
                       "message": m.group("msg"), "notes": []}
            findings.append(current)
            continue
        if m and m.group("kind") == "note" and current is not None:
            current["notes"].append(f"{rel(m.group('file'))}:{m.group('line')}:{m.group('col')}: "
                                    f"{m.group('msg')}")
            continue
        # A diagnostic of kind error (with or without a location); source lines
        # echoed under a diagnostic may contain "error:" too and do not count.
        if (m and m.group("kind") in ("error", "fatal error")) or ERROR_LINE_RE.match(line):
            errors += 1
            if len(error_lines) < 20:
                error_lines.append(line.replace(root + "/", "{repo}/"))
        if m:
            current = None
    return findings, errors, error_lines


def run_entry(args, entry):
    rec = {"entry": entry["spec"], "repo": entry["repo"], "commit": entry["commit"],
           "path": entry["path"], "flags": entry["flags"]}
    root, problem = materialize(args, entry["repo"], entry["commit"])
    if problem:
        rec["skipped"] = problem
        return rec
    if not os.path.exists(os.path.join(root, entry["path"])):
        rec["skipped"] = f"no file {entry['path']} in {entry['repo']}@{entry['commit']}"
        return rec
    cmd, problem = build_command(args, entry, root)
    if problem:
        rec["skipped"] = problem
        return rec
    rec["command"] = " ".join(shlex.quote(c) for c in cmd)
    start = time.time()
    try:
        # The binary may be replaced by a rebuild while we run: wait for it.
        for attempt in range(60):
            try:
                start = time.time()
                proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                      timeout=args.timeout, cwd=root)
                break
            except OSError as e:
                if attempt == 59:
                    rec["skipped"] = f"cannot run {args.tool}: {e}"
                    return rec
                time.sleep(10)
        out = proc.stdout + "\n" + proc.stderr
        rec["returncode"] = proc.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rec["returncode"] = None
        rec["timed_out"] = True
    rec["seconds"] = round(time.time() - start, 1)
    findings, errors, error_lines = parse_output(out, root)
    # One finding a location and check (CUDA host and device passes can repeat it).
    seen, unique = set(), []
    for f in findings:
        k = (f["file"], f["line"], f["col"], f["check"])
        if k not in seen:
            seen.add(k)
            unique.append(f)
    rec["findings"] = unique
    rec["errors"] = errors
    rec["error_lines"] = error_lines
    return rec


def finding_key(rec, f):
    return f"{rec['repo']}@{rec['commit']}:{f['file']}:{f['line']}", f["check"]


def print_summary(results):
    total_f = total_e = 0
    for rec in results:
        if "skipped" in rec:
            print(f"SKIP {rec['entry']}: {rec['skipped']}")
            continue
        total_f += len(rec["findings"])
        total_e += rec["errors"]
        flag = " TIMEOUT" if rec.get("timed_out") else ""
        # The tool exits 1 for findings and 3 for clang errors (1 for both
        # before 0.2); anything else (a signal, an assertion) is a crash,
        # whatever it printed before.
        rc = rec.get("returncode")
        if rc is not None and rc not in (0, 1, 3):
            flag += f" CRASHED (exit {rc})"
        print(f"{rec['entry']}: {rec['errors']} errors, {len(rec['findings'])} findings "
              f"({rec['seconds']}s){flag}")
        for line in rec["error_lines"][:5]:
            print(f"    ERR {line}")
        for f in rec["findings"]:
            print(f"    {f['file']}:{f['line']}:{f['col']}: [{f['check']}] {f['message'][:160]}")
    files = sum(1 for r in results if "skipped" not in r)
    repos = len({r["repo"] for r in results if "skipped" not in r})
    clean = sum(1 for r in results if "skipped" not in r and r["errors"] == 0)
    crashed = sum(1 for r in results if r.get("returncode") not in (None, 0, 1, 3) and "skipped" not in r)
    print(f"\n{files} files from {repos} projects analyzed ({clean} without clang errors); "
          f"{total_e} error lines, {total_f} findings; "
          f"{sum(1 for r in results if 'skipped' in r)} skipped; {crashed} crashed")


TRIAGE_RE = re.compile(
    r"^(?P<key>\S+:\d+)\s+(?P<check>cudagraph-[a-z-]+)\s+(?P<label>TRUE|FALSE)\b\s*(?P<reason>.*)$")
MISSED_RE = re.compile(r"^MISSED\s+(?P<key>\S+:\d+)\s+(?P<hazard>\S+)\s*(?P<reason>.*)$")


def score(results, triage_path):
    labels, missed = {}, []
    with open(triage_path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = MISSED_RE.match(line)
            if m:
                missed.append(m.groupdict())
                continue
            m = TRIAGE_RE.match(line)
            if not m:
                print(f"{triage_path}:{lineno}: cannot parse: {line}", file=sys.stderr)
                continue
            labels[(m.group("key"), m.group("check"))] = (m.group("label"), m.group("reason"))
    current = {}
    for rec in results:
        for f in rec.get("findings", []):
            current.setdefault(finding_key(rec, f), f)
    true = sum(1 for k in current if k in labels and labels[k][0] == "TRUE")
    false = sum(1 for k in current if k in labels and labels[k][0] == "FALSE")
    unlabeled = [k for k in current if k not in labels]
    gone = [k for k in labels if k not in current]
    print(f"\nTriage {triage_path}:")
    print(f"  findings now: {len(current)} (unique file:line + check)")
    if true + false:
        print(f"  precision: {true}/{true + false} = {true / (true + false):.1%} "
              f"(TRUE {true}, FALSE {false})")
    else:
        print("  precision: no labeled findings appear")
    per_check = {}
    for key in current:
        if key in labels:
            row = per_check.setdefault(key[1], [0, 0])
            row[0 if labels[key][0] == "TRUE" else 1] += 1
    for check, (t, fl) in sorted(per_check.items()):
        print(f"    {check:34} TRUE {t:3}  FALSE {fl:3}")
    print(f"  MISSED hazards listed: {len(missed)}")
    for m in missed:
        print(f"    {m['key']} {m['hazard']}")
    if labels:
        print("  findings now, with their labels:")
        for key, check in sorted(k for k in current if k in labels):
            print(f"    {labels[(key, check)][0]:5} {key} {check}")
    if unlabeled:
        print(f"  not labeled yet: {len(unlabeled)}")
        for key, check in sorted(unlabeled):
            print(f"    {key} {check}  {current[(key, check)]['message'][:120]}")
    if gone:
        print(f"  labeled but no longer reported: {len(gone)}")
        for key, check in sorted(gone):
            print(f"    {key} {check} {labels[(key, check)][0]}  {labels[(key, check)][1]}")
    # Misses the tool now reports count as fixed.
    fixed = [m for m in missed if any(k[0] == m["key"] for k in current)]
    if fixed:
        print(f"  MISSED entries now reported at that line: {len(fixed)}")
        for m in fixed:
            print(f"    {m['key']} {m['hazard']}")
    return {"findings": len(current), "true": true, "false": false,
            "unlabeled": len(unlabeled), "gone": len(gone), "missed": len(missed)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--tool", default=DEFAULT_TOOL)
    ap.add_argument("-j", type=int, default=2, dest="jobs")
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--mirror-root", default=DEFAULT_MIRRORS)
    ap.add_argument("--output", default=None, help="results JSON (default <cache>/results.json)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per file")
    ap.add_argument("--only", action="append", default=[],
                    help="run only entries whose spec contains this substring (repeatable)")
    ap.add_argument("--triage", help="triage file to score the findings against")
    ap.add_argument("--no-run", action="store_true", help="reuse the results JSON; only score")
    ap.add_argument("--print-commands", action="store_true")
    ap.add_argument("--parse-only", action="store_true",
                    help="every check off: report compiler errors only (blind labeling)")
    args = ap.parse_args()
    output = args.output or os.path.join(args.cache, "results.json")

    if args.no_run:
        with open(output) as f:
            results = json.load(f)
    else:
        if not os.access(args.tool, os.X_OK):
            sys.exit(f"no tool at {args.tool} (build it, or pass --tool)")
        entries = parse_corpus(args.corpus)
        if args.only:
            entries = [e for e in entries if any(s in e["spec"] for s in args.only)]
        # Materialize each tree once, before the parallel runs.
        trees = [(e["repo"], e["commit"]) for e in entries]
        for e in entries:
            for flag in e["flags"]:
                trees += [(m.group(2), m.group(3).lower()) for m in TREE_RE.finditer(flag)]
        for repo, commit in dict.fromkeys(trees):
            _, problem = materialize(args, repo, commit)
            if problem:
                print(f"SKIP {repo}@{commit}: {problem}", file=sys.stderr)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda e: run_entry(args, e), entries))
        if args.only and os.path.exists(output):
            # Merge a partial run into the previous results.
            with open(output) as f:
                old = {r["entry"]: r for r in json.load(f)}
            for r in results:
                old[r["entry"]] = r
            order = [e["spec"] for e in parse_corpus(args.corpus)]
            results = [old[s] for s in order if s in old]
        os.makedirs(os.path.dirname(output), exist_ok=True)
        with open(output, "w") as f:
            json.dump(results, f, indent=1)
        if args.print_commands:
            for r in results:
                if "command" in r:
                    print(r["command"])
    print_summary(results)
    print(f"results: {output}")
    if args.triage:
        score(results, args.triage)


if __name__ == "__main__":
    main()
