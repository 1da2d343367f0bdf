"""Captures each op of ops.cu the way a serving framework does, on a GPU.

    python3 capture.py [--out RESULTS.json] [--op NAME]

Builds ops.cu as a PyTorch extension (torch.utils.cpp_extension), then, for
every op, in a process of its own: a warm-up call on a side stream, a
capture of one call with torch.cuda.graph (global mode, the default), and
when the capture succeeds, a replay after the input changed, compared with
an eager call. Each op's outcome is one of:

    error      the capture failed (the exception's first line is kept)
    diverged   captured, but the replay's result differs from eager
    captured   captured, and the replay matches eager

confirm.py compares these outcomes with cudagraph-tidy's findings on ops.cu.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("GRAPHOPS_BUILD", "/tmp/graphops-build")

CALLS = {
    "scale": lambda ops, x: ops.scale(x, 2.0),
    "normalize": lambda ops, x: ops.normalize(x),
    "sum_scratch": lambda ops, x: ops.sum_scratch(x),
    "scale_default_stream": lambda ops, x: ops.scale_default_stream(x, 2.0),
    "scale_and_wait": lambda ops, x: ops.scale_and_wait(x, 2.0),
}


def load_ops():
    import torch
    from torch.utils.cpp_extension import load

    os.makedirs(BUILD, exist_ok=True)
    load(name="graphops", sources=[os.path.join(HERE, "ops.cu")],
         build_directory=BUILD, is_python_module=False, verbose=False,
         extra_cflags=["-g"], extra_cuda_cflags=["-g", "-lineinfo"])
    return torch.ops.graphops


def run_one(name):
    import torch

    ops = load_ops()
    call = CALLS[name]
    x = torch.rand(4096, device="cuda") + 0.5
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call(ops, x)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            y = call(ops, x)
    except Exception as e:  # the capture's own failure is the result
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return {"op": name, "outcome": "error", "detail": f"{type(e).__name__}: {first}"}
    x.copy_(torch.rand_like(x) + 2.0)
    graph.replay()
    torch.cuda.synchronize()
    expected = call(ops, x)
    torch.cuda.synchronize()
    same = torch.allclose(y, expected, rtol=1e-4, atol=1e-4)
    return {"op": name, "outcome": "captured" if same else "diverged",
            "detail": "replay matches eager" if same else
                      "replay differs from eager (max abs diff %.3g)" %
                      (y - expected).abs().max().item()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--op", choices=sorted(CALLS))
    args = parser.parse_args()
    if args.op:
        print(json.dumps(run_one(args.op)), flush=True)
        return 0
    load_ops()  # build once, before the per-op processes
    import torch

    results = {"torch": torch.__version__, "cuda": torch.version.cuda,
               "device": torch.cuda.get_device_name(), "ops": []}
    for name in CALLS:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--op", name],
                              capture_output=True, text=True, timeout=300)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        if lines:
            results["ops"].append(json.loads(lines[-1]))
        else:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            results["ops"].append({"op": name, "outcome": "error",
                                   "detail": f"process exited {proc.returncode}: {tail}"})
        print(json.dumps(results["ops"][-1]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
