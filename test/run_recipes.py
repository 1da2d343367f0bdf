#!/usr/bin/env python3
"""Runs the tool's command lines from the CI and pre-commit recipes, as
written, in a small project, and prints what each did.

Usage: run_recipes.py SRCROOT BINDIR CUDA_STUBS WORKDIR

The project is a git repository with a CMake compilation database: a base
commit with one known hazard (recorded in a baseline), then a change that
adds another. Prints one line per command: "<recipe>: exit N" followed by
the findings it printed (file:line and check), and checks the files the
recipes promise (SARIF, Code Quality) exist and hold JSON.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

BASE = """#include <cuda_runtime.h>
void drain(cudaStream_t s) { cudaStreamSynchronize(s); }
void step(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain(s);
  cudaStreamEndCapture(s, g);
}
"""
CHANGE = BASE.replace("  drain(s);\n", "  drain(s);\n  cudaDeviceSynchronize();\n")
CLEAN = "int add(int a, int b) { return a + b; }\n"
CMAKE = """cmake_minimum_required(VERSION 3.20)
project(recipe LANGUAGES CXX)
add_library(recipe step.cpp clean.cpp)
target_include_directories(recipe SYSTEM PRIVATE {stubs})
"""


def sh(cmd, cwd, env, check=True):
    proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if check and proc.returncode != 0:
        sys.exit(f"run_recipes: '{cmd}' failed ({proc.returncode}):\n{proc.stdout}")
    return proc


def report(name, proc):
    print(f"{name}: exit {proc.returncode}")
    for m in re.finditer(r"([\w.]+):(\d+):\d+: warning: .*\[([\w-]+)\]", proc.stdout):
        print(f"  {m.group(1)}:{m.group(2)} {m.group(3)}")


def main():
    src, bindir, stubs, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
               GITHUB_BASE_REF="main", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    files = {"step.cpp": BASE, "clean.cpp": CLEAN,
             "CMakeLists.txt": CMAKE.format(stubs=stubs), ".gitignore": "build/\n"}
    for name, text in files.items():
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    sh("git init -q -b main . && git add -A && git commit -qm base && "
       "git update-ref refs/remotes/origin/main HEAD", work, env)
    sh("cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > /dev/null", work, env)
    # The baseline the GitLab recipe expects, written at the base commit.
    sh("cudagraph-tidy -p build --write-baseline=cudagraph-baseline.json "
       "step.cpp clean.cpp", work, env, check=False)
    with open(os.path.join(work, "step.cpp"), "w") as f:
        f.write(CHANGE)

    # pre-commit: entry + args + the staged files, one run per hook.
    with open(os.path.join(src, ".pre-commit-hooks.yaml")) as f:
        hooks = yaml.safe_load(f)
    for hook in hooks:
        for staged in (["clean.cpp"], ["step.cpp", "clean.cpp"]):
            cmd = " ".join([hook["entry"]] + hook.get("args", []) + staged)
            report(f"pre-commit {hook['id']} {' '.join(staged)}", sh(cmd, work, env, False))

    # GitHub Actions: the steps named for the tool, in order.
    with open(os.path.join(src, "examples", "ci", "github-actions.yml")) as f:
        workflow = yaml.safe_load(f)
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if step.get("name", "").startswith("cudagraph-tidy"):
                report(f"github {step['name']}", sh(step["run"], work, env, False))
    check_json(work, "cudagraph.sarif", "runs")
    os.remove(os.path.join(work, "cudagraph.sarif"))

    # GitLab CI: the job's script lines, in order.
    with open(os.path.join(src, "examples", "ci", "gitlab-ci.yml")) as f:
        pipeline = yaml.safe_load(f)
    for number, line in enumerate(pipeline["cudagraph-tidy"]["script"], 1):
        report(f"gitlab script line {number}", sh(line, work, env, False))
    check_json(work, "gl-code-quality-report.json", None)
    check_json(work, "cudagraph.sarif", "runs")


def check_json(work, name, key):
    path = os.path.join(work, name)
    with open(path) as f:
        data = json.load(f)
    size = len(data[key]) if key else len(data)
    print(f"{name}: {size} entries")


if __name__ == "__main__":
    main()
