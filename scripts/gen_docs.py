#!/usr/bin/env python3
"""Writes the parts of docs/ that come from catalog/Hazards.def.

Each docs page may hold blocks delimited by
    <!-- catalog:<check-name> -->  ...  <!-- catalog:end -->
which are replaced by the table of that check's hazards, and the page
docs/catalog.md is written whole. With --check, nothing is written and the
exit status says whether the docs are in sync with the catalog.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "catalog"))
import catalog  # noqa: E402

VERDICTS = {
    "CaptureError": "capture error",
    "FrameworkError": "libtorch error",
    "SilentEager": "silent: runs eagerly",
    "SilentFrozen": "silent: replay diverges",
    "CapturedNow": "captured on libtorch 2.11",
    "UpdateError": "error: failed update (910)",
}
BLOCK = re.compile(r"(<!-- catalog:(cudagraph-[a-z-]+) -->\n).*?(<!-- catalog:end -->)", re.S)


def names_cell(h):
    if h["kind"] == "HostCopy":
        return "`%s` to the CPU without `non_blocking=true`" % "`, `".join(h["names"])
    if h["kind"] == "HostUpload":
        return "`%s` from a host tensor to the device without `non_blocking=true`" % "`, `".join(h["names"])
    if h["kind"] == "MaskSelect":
        return ("`%s` selecting by a mask: a boolean tensor among the indices "
                "(`index({mask})`), or the one-argument `where(cond)`" % "`, `".join(h["names"]))
    if h["kind"] == "TensorPrint":
        return "`operator<<` streaming a tensor"
    if h["kind"] == "PinnedFlag":
        return "`true` passed to a parameter named `%s`" % "` or `".join(h["names"])
    if h["kind"] == "PoollessAlloc":
        return ("a libtorch call that allocates a CUDA tensor (not a view, an in-place `_` or an `_out` "
                "form; a Python callable given a tensor) inside a capture begun with `cudaStreamBeginCapture` or `cuStreamBeginCapture` "
                "whose function registers no libtorch memory pool (`beginAllocateToPool`); once per capture")
    if h["kind"] == "Branch":
        return "a branch on a device value"
    if h["kind"] == "LegacyStream":
        inc = [n for n in h["names"] if not n.startswith("!")]
        exc = [n[1:] for n in h["names"] if n.startswith("!")]
        return ("a kernel launch, or %s%s, whose stream argument is `0`, left out or "
                "`cudaStreamLegacy`; a `CUDAStreamGuard` or `setCurrentCUDAStream` for "
                "`getDefaultCUDAStream()`" % (", ".join("`%s`" % n for n in inc),
                                              " (not %s)" % ", ".join("`%s`" % n for n in exc)
                                              if exc else ""))
    if h["kind"] == "UncapturedStream":
        return ("%s given stream `0`, none or `cudaStreamLegacy` on the capturing thread, "
                "or a stream the unit creates (`cudaStreamCreate*`) and never joins to a capture, "
                "or any stream on a thread that may run during a global-mode capture"
                % ", ".join("`%s`" % n for n in h["names"]))
    if h["kind"] == "DefaultStreamBegin":
        return ("`cudaStreamBeginCapture` on stream `0` or `cudaStreamLegacy`; `capture_begin()` "
                "while `getDefaultCUDAStream()` is current")
    if h["kind"] == "LeftOpen":
        return ("a `return` or written-out `throw` between a begin and the end "
                "the other paths reach; an end given the legacy stream")
    if h["kind"] == "StreamFork":
        return ("a wait (`cudaStreamWaitEvent`, `cuStreamWaitEvent`, `CUDAEvent::block`) on an event "
                "recorded on a capturing stream, by a stream never joined back before the end")
    if h["kind"] == "CapturedEvent":
        return ("`cudaEventSynchronize`, `cudaEventQuery`, `cudaEventElapsedTime` or "
                "`cudaStreamWaitEvent` after a capture ends, on an event last recorded "
                "(without `cudaEventRecordExternal`) on a capturing stream in that capture")
    if h["kind"] == "EagerEventRecord":
        return ("`cudaEventRecord` (without `cudaEventRecordExternal`) of an event kept in an "
                "object or a global, where the function's own capture-status test says its stream "
                "is capturing (or on a capturing stream of a region), when another function "
                "synchronizes, queries, times or waits on it where its own test says no capture "
                "is open")
    if h["kind"] == "UpdateFailure" and h["id"] == "exec-update-fatal-check":
        return ("`cudaGraphExecUpdate` or `cuGraphExecUpdate` whose status goes through an error "
                "check that exits or throws on failure, while later code tests the "
                "update's result to fall back to a new instantiation")
    if h["kind"] == "UpdateFailure":
        return ("`cudaGraphExecUpdate` whose failure the function handles and goes on, reaching "
                "a used `cudaGetLastError()` or `cudaPeekAtLastError()` (here or in a function it "
                "calls) or its return with no discarding `cudaGetLastError()` on the way")
    if h["kind"] == "UncapturedWait":
        return ("a wait of a capturing stream on an event recorded only before the begin")
    if h["kind"] == "FrozenState" and h["id"] == "reassigned-static-input":
        return ("a tensor or pointer variable that captured work reads, reassigned after "
                "capture where a replay of the graph follows")
    if h["kind"] == "FrozenState" and h["id"] == "freed-before-replay":
        return ("a host buffer whose address captured work was given (`v.data()`, `&x`, an "
                "array) going out of scope, or a pointer captured work reads passed to `free`, "
                "`delete`, `cudaFree`, `cudaFreeHost`, after capture where a replay of the "
                "graph follows")
    if h["kind"] == "FrozenState" and h["id"] == "per-call-input":
        return ("a local made anew on every call (a tensor from a factory, a container a "
                "helper fills with new tensors, a host buffer) that a capture reads, in a "
                "function that skips the capture on later calls and replays the graph")
    if h["kind"] == "FrozenState":
        return ("a host scalar passed by value to captured work, modified after capture "
                "where a replay of the graph follows")
    inc = [n for n in h["names"] if not n.startswith("!")]
    exc = [n[1:] for n in h["names"] if n.startswith("!")]
    text = ", ".join("`%s`" % n for n in inc)
    if exc:
        text += " (not %s)" % ", ".join("`%s`" % n for n in exc)
    return text or "(runtime only)"


def allowed_note(h):
    notes = []
    for mode, names in h["allowed_in"]:
        what = ", ".join("`%s`" % n for n in names) if names else "it"
        notes.append("%s mode allows %s (not reported there)" % (mode.lower(), what))
    if h["device_wide"]:
        notes.append("waits on every stream: a capture-status test of one stream does not cover it")
    for names in h["other_thread"]:
        what = ", ".join("`%s`" % n for n in names) if names else "it"
        # A device-wide wait names no stream; the idle-stream rule is about
        # calls that name one.
        idle = ("" if h["device_wide"] else
                ", and, where the call names a stream, on a stream that is not "
                "capturing beside a global or thread-local capture of the same thread")
        notes.append("%s fails on other threads too during a global-mode capture%s"
                     % (what, idle))
    if h["cached_resource"]:
        notes.append("a cached resource: in code warmed up before the capture, the miss path "
                     "of a cache of it is not reported")
    return "".join("; " + n for n in notes)


def instead_cell(h):
    if h["torch_instead"]:
        return "%s (libtorch code: %s)" % (h["instead"], h["torch_instead"])
    return h["instead"]


def check_table(hazards, check):
    rows = ["| hazard | matches | on the GPU (measured) | instead |", "|---|---|---|---|"]
    for h in hazards:
        if h["check"] != check:
            continue
        rows.append("| `%s` | %s | %s: %s%s | %s |" % (
            h["id"], names_cell(h), VERDICTS[h["gpu_verdict"]], h["outcome"],
            allowed_note(h), instead_cell(h)))
    return "\n".join(rows) + "\n"


def catalog_page(checks, hazards):
    out = ["# The hazard catalog", "",
           "Generated from `catalog/Hazards.def` by `scripts/gen_docs.py`; do not edit by hand.",
           "The checks, these docs and the runtime harness read the same file.", "",
           "## Checks", "", "| check | status | summary |", "|---|---|---|"]
    for c in checks:
        out.append("| `%s` | %s | %s |" % (c["name"], c["status"].lower(), c["summary"]))
    out += ["", "## Hazards", ""]
    for c in checks:
        out += ["### %s" % c["name"], "", check_table(hazards, c["name"])]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    checks, hazards = catalog.load()
    docs = os.path.join(ROOT, "docs")
    stale = []

    def write(path, text):
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                with open(path, "w") as f:
                    f.write(text)

    write(os.path.join(docs, "catalog.md"), catalog_page(checks, hazards))
    pages = os.path.join(docs, "checks")
    for name in sorted(os.listdir(pages)) if os.path.isdir(pages) else []:
        path = os.path.join(pages, name)
        text = open(path).read()
        new = BLOCK.sub(lambda m: m.group(1) + check_table(hazards, m.group(2)) + m.group(3), text)
        write(path, new)
    if args.check:
        if stale:
            print("docs out of date with catalog/Hazards.def: %s\n"
                  "run: python3 scripts/gen_docs.py" % ", ".join(stale))
            return 1
        print("docs in sync with catalog/Hazards.def")
    return 0


if __name__ == "__main__":
    sys.exit(main())
