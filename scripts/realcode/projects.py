#!/usr/bin/env python3
"""Run cudagraph-tidy with the project index over whole real projects (many
translation units each) and report what the index adds: findings whose root
or chain lies in another file.

projects.txt, one project a line:

    NAME owner/repo@<40-hex commit>:GLOB[,GLOB...] [-- <extra clang flags>]

GLOBs select the project's translation units (.cpp/.cu, relative to the
repository root, fnmatch syntax; `**` matches across directories). Flags take
the substitutions of run.py ({repo}, {tree:...}, {nvcc_compat}, ...).

For each project the script writes a compile database of clang commands (as
run.py builds them), runs `cudagraph-tidy -p DB --index`, then analyzes every
unit twice: with the index and with it moved away. Results go to one JSON file
in run.py's format (one record a translation unit, with each finding marked
"cross": true when only the indexed run reports it), so run.py --no-run
--triage and score_labels.py score it.

Usage:
    python3 scripts/realcode/projects.py [--projects scripts/realcode/projects.txt]
        [--tool BIN] [-j 2] [--only NAME] [--no-alone]
        [--output /tmp/cudagraph-realcode/results-projects.json]
    python3 scripts/realcode/score_labels.py --results RESULTS \
        --labels scripts/realcode/projects-labels.txt \
        --adjudicated scripts/realcode/projects-triage.txt
    # an existing build (nvcc database as CMake wrote it; bench/index-projects.txt):
    python3 scripts/realcode/projects.py --database BUILD --root SRC --files 'src/*' --name NAME
"""

import argparse
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as realcode  # noqa: E402

LINE_RE = re.compile(r"^(?P<name>\S+)\s+(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@"
                     r"(?P<commit>[0-9a-fA-F]{40}):(?P<globs>\S+)$")


def parse_projects(path):
    projects = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            spec, _, flags = line.partition(" -- ")
            m = LINE_RE.match(spec.strip())
            if not m:
                sys.exit(f"{path}:{lineno}: cannot parse: {line}")
            projects.append({"name": m.group("name"), "repo": m.group("repo"),
                             "commit": m.group("commit").lower(),
                             "globs": m.group("globs").split(","),
                             "flags": shlex.split(flags) if flags.strip() else []})
    return projects


def select(root, globs):
    files = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), root)
            if rel.endswith((".cpp", ".cu", ".cc")) and any(
                    fnmatch.fnmatch(rel, g) for g in globs):
                files.append(rel)
    return sorted(files)


def write_database(args, project, root, files, db_dir):
    entries = []
    for rel in files:
        entry = {"path": rel, "flags": project["flags"]}
        cmd, problem = realcode.build_command(args, entry, root)
        if problem:
            sys.exit(f"{project['name']}: {problem}")
        flags = cmd[cmd.index("--") + 1:]
        src = os.path.join(root, rel)
        entries.append({"directory": root, "file": src,
                        "arguments": ["clang++"] + flags + ["-c", src]})
    os.makedirs(db_dir, exist_ok=True)
    with open(os.path.join(db_dir, "compile_commands.json"), "w") as f:
        json.dump(entries, f, indent=1)


def analyze(args, root, db_dir, files):
    """Findings of every unit in FILES, in args.jobs processes at once."""
    header_filter = "^" + re.escape(root + "/")
    config = json.dumps({"Checks": realcode.CHECKS, "HeaderFilterRegex": header_filter})
    base = [args.tool, "--quiet", "--checks=" + realcode.CHECKS, "--config=" + config,
            "--header-filter=" + header_filter, "-p", db_dir]
    jobs = max(1, args.jobs)
    chunks = [files[i::jobs] for i in range(jobs)]
    procs = [subprocess.Popen(base + [os.path.join(root, f) for f in chunk],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=root)
             for chunk in chunks if chunk]
    text = "\n".join(p.communicate()[0].decode(errors="replace") for p in procs)
    findings, errors, error_lines = realcode.parse_output(text, root)
    seen, unique = set(), []
    for f in findings:
        k = (f["file"], f["line"], f["col"], f["check"])
        if k not in seen:
            seen.add(k)
            unique.append(f)
    return unique, errors, error_lines


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", default=os.path.join(HERE, "projects.txt"))
    ap.add_argument("--tool", default=realcode.DEFAULT_TOOL)
    ap.add_argument("-j", type=int, default=2, dest="jobs")
    ap.add_argument("--cache", default=realcode.DEFAULT_CACHE)
    ap.add_argument("--mirror-root", default=realcode.DEFAULT_MIRRORS)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--output", default=None)
    ap.add_argument("--database", help="analyze an existing build directory instead "
                    "(its compile database as the build wrote it, nvcc included)")
    ap.add_argument("--root", help="with --database: the source root (findings are "
                    "reported relative to it)")
    ap.add_argument("--files", default="*", help="with --database: globs (comma-separated, "
                    "relative to --root) of the units to analyze")
    ap.add_argument("--name", default="project", help="with --database: the project's name")
    ap.add_argument("--no-alone", action="store_true", help="skip the run without the index "
                    "(findings are then not marked as cross-file or not)")
    args = ap.parse_args()
    args.tool = os.path.abspath(args.tool)
    output = args.output or os.path.join(args.cache, "results-projects.json")
    results = []
    if args.database:
        projects = [{"name": args.name, "database": os.path.abspath(args.database),
                     "root": os.path.abspath(args.root or "."), "globs": args.files.split(","),
                     "repo": args.name, "commit": "", "flags": []}]
    else:
        projects = parse_projects(args.projects)
    for project in projects:
        if args.only and not any(s in project["name"] for s in args.only):
            continue
        if "database" in project:
            root, db_dir = project["root"], project["database"]
            with open(os.path.join(db_dir, "compile_commands.json")) as f:
                in_db = {os.path.relpath(os.path.join(e["directory"], e["file"]), root)
                         for e in json.load(f)}
            files = sorted(f for f in in_db if any(fnmatch.fnmatch(f, g)
                                                   for g in project["globs"]))
        else:
            root, problem = realcode.materialize(args, project["repo"], project["commit"])
            if problem:
                print(f"SKIP {project['name']}: {problem}", file=sys.stderr)
                continue
            files = select(root, project["globs"])
            # The database is rewritten; the index next to it stays and is
            # refreshed (a unit's key covers its command).
            db_dir = os.path.join(args.cache, "projects", project["name"])
            write_database(args, project, root, files, db_dir)
        start = time.time()
        idx = subprocess.run([args.tool, "-p", db_dir, "--index", "--index-jobs=%d" % args.jobs],
                             capture_output=True, text=True, errors="replace")
        index_seconds = time.time() - start
        with_index, errors, error_lines = analyze(args, root, db_dir, files)
        index_dir = os.path.join(db_dir, "cudagraph-index")
        alone = []
        if not args.no_alone:
            # Left behind by an interrupted run.
            shutil.rmtree(index_dir + ".off", ignore_errors=True)
            os.rename(index_dir, index_dir + ".off")
            alone, _, _ = analyze(args, root, db_dir, files)
            os.rename(index_dir + ".off", index_dir)
        base = {(f["file"], f["line"], f["check"]) for f in alone}
        for f in with_index:
            f["cross"] = None if args.no_alone else (f["file"], f["line"], f["check"]) not in base
        lost = [f for f in alone
                if (f["file"], f["line"], f["check"]) not in
                {(g["file"], g["line"], g["check"]) for g in with_index}]
        by_file = {}
        for f in with_index:
            by_file.setdefault(f["file"], []).append(f)
        for rel in files:
            results.append({"entry": f"{project['repo']}@{project['commit']}:{rel}",
                            "project": project["name"], "repo": project["repo"],
                            "commit": project["commit"], "path": rel,
                            "findings": by_file.pop(rel, []), "errors": 0, "error_lines": []})
        for rel, fs in by_file.items():  # findings in headers
            results.append({"entry": f"{project['repo']}@{project['commit']}:{rel}",
                            "project": project["name"], "repo": project["repo"],
                            "commit": project["commit"], "path": rel, "findings": fs,
                            "errors": 0, "error_lines": []})
        cross = sum(bool(f["cross"]) for f in with_index)
        print(f"{project['name']}: {len(files)} units, index {index_seconds:.1f} s "
              f"(exit {idx.returncode}), {len(with_index)} findings with the index "
              f"({cross} only with it), {len(alone)} alone, {len(lost)} lost, "
              f"{errors} clang errors", flush=True)
        if idx.returncode:
            print(idx.stderr[-1500:], file=sys.stderr)
        for f in with_index:
            if f["cross"]:
                print(f"  + {f['file']}:{f['line']} {f['check']}: {f['message'][:110]}")
                for n in f["notes"][-1:]:
                    print(f"      {n[:220]}")
        for f in lost:
            print(f"  - {f['file']}:{f['line']} {f['check']}: {f['message'][:110]}")
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, "w") as f:
        json.dump(results, f, indent=1)
    print(f"results: {output}")


if __name__ == "__main__":
    main()
