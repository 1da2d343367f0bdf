"""The probe for PyTorch regions, the Python twin of cudagraph/probe/Probe.h.

A region is a function of a Run. It does its work inside ``with r.capture():``
which is ``torch.cuda.graph(...)`` in the capture pass and does nothing in
eager passes:

    @region("py.tensor-item.pos", "tensor-item")
    def item_positive(r):
        with r.capture():
            y = r.input * 2
            r.set_output(y / y.sum().item())

The probe warms the region up eagerly on a side stream, captures it, replays
it with fresh values copied into the static input and compares each replay
with an eager run. The verdict goes into the harness report (through the
injection library when it is loaded) and to stdout.
"""

import argparse
import contextlib
import ctypes
import inspect
import json
import math
import os
import sys

REGIONS = []
COUNT = 4096
REPLAYS = 2


class _RegionStats(ctypes.Structure):
    _fields_ = [("capture_errors", ctypes.c_uint),
                ("escapes", ctypes.c_uint),
                ("framework_errors", ctypes.c_uint),
                ("root_cause_result", ctypes.c_int),
                ("root_cause_api", ctypes.c_char * 128),
                ("escape_api", ctypes.c_char * 128)]


class HarnessLink:
    """The injection library's control functions, when it is loaded."""

    def __init__(self):
        self.lib = None
        path = os.environ.get("CUDA_INJECTION64_PATH")
        if not path:
            return
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            return
        try:
            if lib.cudagraphHarnessControlVersion() != 1:
                return
        except AttributeError:
            return
        lib.cudagraphHarnessSetRegion.argtypes = [ctypes.c_char_p]
        lib.cudagraphHarnessWrite.argtypes = [ctypes.c_char_p]
        lib.cudagraphHarnessRegionStats.argtypes = [ctypes.POINTER(_RegionStats)]
        self.lib = lib

    def set_region(self, name):
        if self.lib:
            self.lib.cudagraphHarnessSetRegion((name or "").encode())

    def write(self, line):
        if self.lib:
            self.lib.cudagraphHarnessWrite(line.encode())
        else:
            print(line, flush=True)

    def stats(self):
        if not self.lib:
            return None
        out = _RegionStats()
        if self.lib.cudagraphHarnessRegionStats(ctypes.byref(out)) != 0:
            return None
        return out


def region(name, hazard, *, update=None, compare=True, mode="global"):
    """Registers a region function under a catalog hazard id."""
    def wrap(fn):
        _, line = inspect.getsourcelines(fn)
        REGIONS.append({"name": name, "hazard": hazard, "fn": fn,
                        "update": update, "compare": compare, "mode": mode,
                        "file": os.path.abspath(inspect.getsourcefile(fn)),
                        "line": line})
        return fn
    return wrap


class Run:
    def __init__(self, torch, graph, stream, mode):
        self.torch = torch
        self.graph = graph
        self.stream = stream
        self.mode = mode
        self.capturing = False
        self.iteration = 0
        self.input = None
        self.scale = None
        self.generator = None
        self.output = None

    def capture(self):
        if not self.capturing:
            return contextlib.nullcontext()
        return self.torch.cuda.graph(self.graph, stream=self.stream,
                                     capture_error_mode=self.mode)

    def set_output(self, tensor):
        self.output = tensor


def _fresh(torch, k):
    values = [math.sin(0.37 * i + 1.3 * k) + 0.5 * k + 1.0 for i in range(COUNT)]
    return torch.tensor(values, dtype=torch.float32, device="cuda")


def _difference(torch, a, b):
    if a is None or b is None:
        return 0.0 if a is None and b is None else math.inf
    a, b = a.double().cpu(), b.double().cpu()
    if a.shape != b.shape:
        return math.inf
    if a.numel() == 0:
        return 0.0
    return float((a - b).abs().max())


def run_region(spec, link):
    import torch

    result = {"region": spec["name"], "mode": spec["mode"], "verdict": "captured",
              "max_diff": 0.0, "replays": 0}
    side = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    run = Run(torch, graph, side, spec["mode"])
    run.input = _fresh(torch, 0)
    run.scale = torch.ones(1, device="cuda")
    run.generator = torch.Generator(device="cuda")
    torch.cuda.synchronize()
    try:
        with torch.cuda.stream(side):
            for _ in range(2):
                run.capturing, run.iteration = False, 0
                spec["fn"](run)
        torch.cuda.synchronize()
    except Exception as err:  # The region is broken even without capture.
        result.update(verdict="eager_failed", message=str(err).splitlines()[0])
        return result

    framework_failed = False
    captured = None
    try:
        run.capturing, run.iteration = True, 0
        spec["fn"](run)
        captured = run.output
    except Exception as err:
        framework_failed = True
        result["message"] = str(err).splitlines()[0] if str(err) else type(err).__name__
    torch.cuda.synchronize()

    if not framework_failed:
        for k in range(1, REPLAYS + 1):
            fresh = _fresh(torch, k)
            run.scale.fill_(1.0 + k)
            if spec["update"]:
                spec["update"](run, fresh)
            else:
                run.input.copy_(fresh)
            graph.replay()
            torch.cuda.synchronize()
            replayed = captured.clone() if captured is not None else None
            with torch.cuda.stream(side):
                run.capturing, run.iteration = False, k
                spec["fn"](run)
            torch.cuda.synchronize()
            if spec["compare"]:
                result["max_diff"] = max(result["max_diff"],
                                         _difference(torch, replayed, run.output))
            result["replays"] += 1

    stats = link.stats()
    result["harness"] = stats is not None
    if stats is not None:
        result["escapes"] = stats.escapes
        if stats.root_cause_api:
            result["root_cause_api"] = stats.root_cause_api.decode()
            result["root_cause_result"] = stats.root_cause_result
            result["result"] = stats.root_cause_result
        if stats.escape_api:
            result["escape_api"] = stats.escape_api.decode()
    if framework_failed:
        result["verdict"] = ("capture_error" if result.get("root_cause_result")
                             else "framework_error")
    elif result.get("escapes"):
        result["verdict"] = "escaped_work"
    elif not result["max_diff"] <= 1e-5:
        result["verdict"] = "silent_divergence"
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run PyTorch capture regions.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--list", action="store_true")
    group.add_argument("--region")
    group.add_argument("--all", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for spec in REGIONS:
            print("%s\t%s\t%s\t%d" % (spec["name"], spec["hazard"], spec["file"], spec["line"]))
        return 0
    import torch

    torch.cuda.init()
    torch.zeros(1, device="cuda")  # Starts the driver, which loads the harness.
    link = HarnessLink()
    chosen = [s for s in REGIONS if args.all or s["name"] == args.region]
    if not chosen:
        print("no region named %r" % args.region, file=sys.stderr)
        return 2
    for spec in chosen:
        link.set_region(spec["name"])
        result = run_region(spec, link)
        line = {"event": "verdict", "hazard": spec["hazard"], "flavour": "python",
                "file": spec["file"], "line": spec["line"], "pid": os.getpid()}
        line.update(result)
        link.write(json.dumps(line, separators=(",", ":")))
        link.set_region("")
        print("%-48s %s %s" % (spec["name"], result["verdict"],
                               result.get("message", "")), flush=True)
    return 0
