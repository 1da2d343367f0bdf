#!/usr/bin/env python3
"""Measures the harness's overhead: each benchmark runs with and without the
injection library, in interleaved repetitions of one device run, and the
median of the per-repetition time ratios is reported.

    run_bench.py --bin BUILD/bin --lib BUILD/lib/libcudagraph-inject.so \
                 [--reps 7] [-o bench.json]

Configurations: "plain" (no harness), "harness" (the default: callbacks on
only while a capture is open), "harness-all-callbacks"
(CUDAGRAPH_HARNESS_CALLBACKS=all, every callback on and filtered inside,
which shows what switching callbacks on only during capture saves), and two
that split the default's cost: "preload-only" (the library preloaded, no
CUDA injection) and "injection-inert" (injected, but CUPTI never loaded).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

BENCHES = {
    "replay": ("cudagraph-bench-replay", ["10000"]),
    "launch": ("cudagraph-bench-launch", ["50000"]),
}


def environment(config, lib, report):
    env = dict(os.environ)
    for key in ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "CUDAGRAPH_HARNESS_CALLBACKS"):
        env.pop(key, None)
    if config != "plain":
        env["LD_PRELOAD"] = lib
        env["CUDAGRAPH_HARNESS_OUTPUT"] = report
        env["CUDAGRAPH_HARNESS_QUIET"] = "1"
    if config not in ("plain", "preload-only"):
        env["CUDA_INJECTION64_PATH"] = lib
    if config == "harness-all-callbacks":
        env["CUDAGRAPH_HARNESS_CALLBACKS"] = "all"
    if config == "injection-inert":
        env["CUDAGRAPH_HARNESS_CALLBACKS"] = "off"
    return env


def run_once(binary, args, env):
    start = time.perf_counter()
    out = subprocess.run([binary] + args, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=300, check=True)
    wall = time.perf_counter() - start
    line = [l for l in out.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["seconds"], wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--lib", required=True)
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("-o", "--output")
    args = parser.parse_args()

    configs = ["plain", "harness", "harness-all-callbacks", "preload-only",
               "injection-inert"]
    random.seed(1)
    samples = {b: {c: [] for c in configs} for b in BENCHES}
    walls = {b: {c: [] for c in configs} for b in BENCHES}
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "bench.%p.jsonl")
        for rep in range(args.reps):
            for bench, (exe, bench_args) in BENCHES.items():
                order = configs[:]
                random.shuffle(order)
                for config in order:
                    seconds, wall = run_once(os.path.join(args.bin, exe), bench_args,
                                             environment(config, args.lib, report))
                    samples[bench][config].append(seconds)
                    walls[bench][config].append(wall)
    result = {"reps": args.reps, "benches": {}}
    for bench in BENCHES:
        entry = {"args": BENCHES[bench][1]}
        for config in configs:
            entry[config] = {"median_seconds": statistics.median(samples[bench][config]),
                             "samples": samples[bench][config],
                             "median_process_wall": statistics.median(walls[bench][config])}
        for config in configs[1:]:
            ratios = [h / p for h, p in zip(samples[bench][config], samples[bench]["plain"])]
            wall_ratios = [h / p for h, p in zip(walls[bench][config], walls[bench]["plain"])]
            entry[config]["median_ratio"] = statistics.median(ratios)
            entry[config]["ratios"] = ratios
            entry[config]["median_wall_ratio"] = statistics.median(wall_ratios)
        result["benches"][bench] = entry
    text = json.dumps(result, indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
