#!/usr/bin/env python3
"""Prints the GPU machine's versions as JSON: GPU, driver, CUDA, torch, the
compilers and the date. The round trip records them in docs/confirmation.md.
"""

import datetime
import json
import platform
import re
import subprocess


def run(args):
    try:
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main():
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "python": platform.python_version(), "kernel": platform.release()}
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total",
               "--format=csv,noheader"])
    if smi:
        parts = [p.strip() for p in smi.splitlines()[0].split(",")]
        env.update(gpu=parts[0], driver=parts[1], compute_capability=parts[2],
                   gpu_memory=parts[3] if len(parts) > 3 else "")
        env["gpu_count"] = len(smi.splitlines())
    m = re.search(r"release ([\d.]+), V([\d.]+)", run(["nvcc", "--version"]))
    if m:
        env["nvcc"] = m.group(2)
    env["gcc"] = run(["g++", "-dumpfullversion"])
    env["cmake"] = run(["cmake", "--version"]).splitlines()[0:1]
    env["cmake"] = env["cmake"][0].replace("cmake version ", "") if env["cmake"] else ""
    try:
        import torch
        env["torch"] = torch.__version__
        env["torch_cuda"] = torch.version.cuda
        env["cudnn"] = str(torch.backends.cudnn.version())
    except Exception as err:  # Recorded, not fatal: raw fixtures still run.
        env["torch_error"] = str(err)
    print(json.dumps(env, indent=1))


if __name__ == "__main__":
    main()
