"""Turns the native frames of harness reports into file:line.

The injection records each frame as (module, offset inside the ELF image,
nearest exported symbol). Here, once the target has exited and on the machine
where its binaries are, addr2line resolves the offsets. Frames it cannot
resolve keep what they had: a symbol name, or module+offset, so a report is
still useful without debug info.

Every event also gets a "site": the innermost frame in the user's own code
(not CUDA, libtorch, the C++ runtime or the interpreter), native or Python.
"""

import json
import os
import re
import shutil
import subprocess

# Modules whose frames are never the user's call site.
_RUNTIME_MODULES = re.compile(
    r"/(libcuda|libcupti|libcudart|libcublas|libcudnn|libnccl|libtorch[^/]*|"
    r"libc10[^/]*|libstdc\+\+|libc|libgcc_s|libpython[^/]*|ld-linux[^/]*|"
    r"libcudagraph-inject|libcudagraph_probe[^/]*)\.so")
# Source files that belong to toolchains and frameworks, not to the user.
_SYSTEM_FILES = re.compile(
    r"^/usr/|/torch/include/|/site-packages/|/dist-packages/|/cuda[^/]*/include/|"
    r"/include/c\+\+/|/runtime-harness/probe/|/runtime-harness/include/|"
    r"^<|/torch/(nn|cuda|_|utils|autograd)|/lib/python3|"
    # nvcc's generated launch stubs: the caller holds the <<<>>> line.
    r"\.cudafe1\.stub\.c$|/tmpxft_")

_DISCRIMINATOR = re.compile(r"\s*\(discriminator \d+\)$")


def _parse_location(text):
    text = _DISCRIMINATOR.sub("", text.strip())
    path, _, line = text.rpartition(":")
    if not path or path == "??" or not line.isdigit() or line == "0":
        return None, None
    return path, int(line)


def run_addr2line(addr2line, module, offsets):
    """Returns {offset: [(function, file, line), ...]} innermost first, or
    {} when addr2line cannot run on the module."""
    if not offsets:
        return {}
    # A return address points after the call; one byte back is inside it.
    args = [addr2line, "-a", "-C", "-f", "-i", "-e", module]
    args += ["0x%x" % max(o - 1, 0) for o in offsets]
    try:
        out = subprocess.run(args, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             timeout=120, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    result = {}
    lines = out.splitlines()
    i = 0
    by_query = {max(o - 1, 0): o for o in offsets}
    while i < len(lines):
        head = lines[i].strip()
        i += 1
        if not head.startswith("0x"):
            continue
        try:
            query = int(head, 16)
        except ValueError:
            continue
        chain = []
        while i + 1 < len(lines) and not lines[i].startswith("0x"):
            function = lines[i].strip()
            path, line = _parse_location(lines[i + 1])
            chain.append((None if function == "??" else function, path, line))
            i += 2
        if query in by_query:
            result[by_query[query]] = chain
    return result


def is_user_frame(frame):
    path = frame.get("file")
    if not path or _SYSTEM_FILES.search(path):
        return False
    module = frame.get("module", "")
    if module and _RUNTIME_MODULES.search(module):
        return False
    return True


def _is_launch_stub(frame, stub_names):
    """nvcc's launch stub (__device_stub__<mangled kernel>) and the kernel's
    host wrapper right after it carry the kernel's definition line; the
    launch line is in the frame after them."""
    function = frame.get("function") or ""
    if function.startswith("__device_stub__"):
        stub_names.append(function.split("(")[0])
        return True
    base = function.split("(")[0].split("::")[-1]
    return bool(base) and any(base in stub for stub in stub_names)


def choose_site(event):
    stub_names = []
    for frame in event.get("stack") or []:
        if _is_launch_stub(frame, stub_names):
            continue
        if is_user_frame(frame):
            site = {"file": frame["file"], "line": frame["line"], "lang": "c++"}
            if frame.get("function"):
                site["function"] = frame["function"]
            return site
    for frame in event.get("python_stack") or []:
        path = frame.get("file", "")
        if path and not _SYSTEM_FILES.search(path) and frame.get("line"):
            return {"file": path, "line": frame["line"],
                    "function": frame.get("function", ""), "lang": "python"}
    return None


def symbolize_events(events, addr2line=None):
    """Adds file/line/function to native frames in place and a "site" to
    each event. Returns the number of frames resolved."""
    if addr2line is None:
        addr2line = os.environ.get("CUDAGRAPH_ADDR2LINE") or shutil.which("addr2line")
    wanted = {}
    for event in events:
        for frame in event.get("stack") or []:
            if frame.get("file") or not frame.get("module"):
                continue
            try:
                offset = int(str(frame.get("offset", "0")), 0)
            except ValueError:
                continue
            wanted.setdefault(frame["module"], set()).add(offset)
    resolved = {}
    for module, offsets in wanted.items():
        if not addr2line or not os.path.isfile(module):
            continue
        resolved[module] = run_addr2line(addr2line, module, sorted(offsets))
    count = 0
    for event in events:
        for frame in event.get("stack") or []:
            if frame.get("file"):
                continue
            chain = None
            try:
                offset = int(str(frame.get("offset", "0")), 0)
                chain = resolved.get(frame.get("module"), {}).get(offset)
            except ValueError:
                pass
            if chain:
                function, path, line = chain[0]
                if function:
                    frame["function"] = function
                if path:
                    frame["file"], frame["line"] = path, line
                    count += 1
                if len(chain) > 1:
                    frame["inlined_into"] = [
                        {"function": f, "file": p, "line": l}
                        for f, p, l in chain[1:] if p]
            if not frame.get("function") and frame.get("symbol"):
                frame["function"] = frame["symbol"]
        # An inlined hazard call sits in the frame's inline chain; expand it
        # so callers see every source line of the frame.
        expanded = []
        for frame in event.get("stack") or []:
            expanded.append(frame)
            for inner in frame.get("inlined_into", []):
                expanded.append(dict(inner, module=frame.get("module", ""),
                                     inlined=True))
        if expanded:
            event["stack"] = expanded
        site = choose_site(event)
        if site:
            event["site"] = site
    return count


def describe(event):
    """One line for people about an event worth reading."""
    kind = event.get("event")
    site = event.get("site")
    where = ""
    if site:
        where = " at %s:%s" % (site["file"], site["line"])
        if site.get("function"):
            where += " (%s)" % site["function"]
    region = " [%s]" % event["region"] if event.get("region") else ""
    if kind in ("capture_error", "capture_end") and event.get("root_cause"):
        return "root cause of capture %s: %s returned %s %s%s%s" % (
            ",".join(str(c) for c in event.get("root_cause_of", [])),
            event.get("api"), event.get("result"), event.get("result_name", ""),
            where, region)
    if kind == "escape":
        return "escaped the capture: %s on the %s stream%s%s" % (
            event.get("api"), event.get("stream_kind"), where, region)
    if kind == "framework_error":
        message = (event.get("message") or "").split("\n")[0]
        return "framework error: %s: %s%s%s" % (
            event.get("exception_type"), message, where, region)
    if kind == "subscriber_conflict":
        return "not recorded: %s" % event.get("message")
    return None


def read_jsonl(path):
    """Returns (events, bad_lines)."""
    events, bad = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                bad.append(number)
                continue
            if isinstance(value, dict):
                events.append(value)
            else:
                bad.append(number)
    return events, bad


def write_jsonl(path, events):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for event in events:
            f.write(json.dumps(event, separators=(",", ":")) + "\n")
    os.replace(tmp, path)
