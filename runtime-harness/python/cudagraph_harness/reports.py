"""Reads the harness's JSON-lines reports.

A report holds one process's events in the order they happened: the start
line, capture_begin/capture_end, capture_error (root_cause marks the first
error that invalidated each capture; echoes repeat it), escape (work that
missed the graph), framework_error, and a probe's verdict per region. A
crashed process may leave a truncated last line; that line is skipped.
"""

import json
import os

from .findings import InputError
from . import symbolize

FAILURE_KINDS = ("capture_error", "capture_end", "framework_error", "escape")


def report_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                files.extend(os.path.join(root, n) for n in sorted(names)
                             if n.endswith(".jsonl") and ".trace." not in n)
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise InputError("no such report file or directory: %s" % path)
    return sorted(files)


# The types of the fields the join reads. A line whose field has another
# type was not written by the harness (or was damaged on the way) and is
# skipped with a warning, as a line that is not JSON is.
_INT = "int"
_FIELD_TYPES = {
    "event": str, "api": str, "driver_api": str, "region": str, "message": str,
    "hazard": str, "check": str, "result_name": str, "verdict": str, "mode": str,
    "pid": _INT, "seq": _INT, "thread": _INT, "result": _INT, "time_ns": _INT,
    "root_cause_seq": _INT, "line": _INT,
    "captures": [_INT], "root_cause_of": [_INT],
    "stack": [dict], "python_stack": [dict], "open_captures": [dict],
    "site": dict,
}
_FRAME_TYPES = {"file": str, "line": _INT, "function": str, "module": str, "lang": str}


def _has_type(value, kind):
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(kind, list):
        return isinstance(value, list) and all(_has_type(v, kind[0]) for v in value)
    return isinstance(value, kind)


def malformed_field(event):
    """The first field of event with a type the harness never writes, or None."""
    for key, kind in _FIELD_TYPES.items():
        if key in event and event[key] is not None and not _has_type(event[key], kind):
            return key
    frames = list(event.get("stack") or []) + list(event.get("python_stack") or [])
    if isinstance(event.get("site"), dict):
        frames.append(event["site"])
        if not {"file", "line"} <= set(event["site"]):
            return "site"
    for frame in frames:
        for key, kind in _FRAME_TYPES.items():
            if key in frame and frame[key] is not None and not _has_type(frame[key], kind):
                return key
    return None


def load(paths, warn=None):
    """Returns a Reports object for the JSONL files (or folders of them)."""
    reports = Reports()
    files = report_files(paths)
    if not files:
        raise InputError("no .jsonl reports under %s" % ", ".join(paths))
    for path in files:
        events, bad = symbolize.read_jsonl(path)
        if bad and warn:
            warn("%s: skipped %d line(s) that are not JSON objects (line %s)"
                 % (path, len(bad), ", ".join(map(str, bad[:5]))))
        wrong = []
        for index, event in enumerate(events):
            if not isinstance(event.get("event"), str):
                continue
            field = malformed_field(event)
            if field:
                wrong.append(field)
                continue
            event["_file"] = path
            event["_index"] = index
            reports.add(event)
        if wrong and warn:
            warn("%s: skipped %d event(s) with fields of the wrong type (%s)"
                 % (path, len(wrong), ", ".join(sorted(set(wrong))[:5])))
    # Reports from the launcher are symbolized already; others get the same
    # treatment where their binaries exist on this machine.
    needs = [e for e in reports.events if e.get("stack") and "site" not in e]
    if needs:
        symbolize.symbolize_events(needs)
    reports.finish()
    return reports


class Reports:
    def __init__(self):
        self.events = []
        self.files = set()
        self.starts = []
        self.verdicts = {}
        self.captures = {}

    def add(self, event):
        self.events.append(event)
        self.files.add(event["_file"])
        kind = event["event"]
        if kind == "harness_start":
            self.starts.append(event)
        elif kind == "verdict" and event.get("region"):
            self.verdicts[event["region"]] = event

    def process_key(self, event):
        return (event["_file"], event.get("pid"))

    def finish(self):
        for event in self.events:
            if event["event"] not in ("capture_begin", "capture_end"):
                continue
            for capture in event.get("captures") or []:
                key = self.process_key(event) + (capture,)
                entry = self.captures.setdefault(key, {"begin": None, "end": None})
                entry["begin" if event["event"] == "capture_begin" else "end"] = event

    def region_of(self, event):
        """The probe region an event belongs to ("" outside regions)."""
        return event.get("region") or ""

    def failures(self):
        """Events that show a hazard: root causes, framework errors that are
        not the echo of a root cause, escapes, and probe verdicts of silent
        divergence."""
        out = []
        for event in self.events:
            kind = event["event"]
            if kind in ("capture_error", "capture_end") and event.get("root_cause"):
                out.append(event)
            elif kind == "framework_error" and not event.get("root_cause_seq"):
                out.append(event)
            elif kind == "escape":
                out.append(event)
            elif kind == "verdict" and event.get("verdict") == "silent_divergence":
                out.append(event)
        return out

    def conflicts(self):
        return [e for e in self.events
                if e["event"] in ("subscriber_conflict", "harness_error")]

    def spans(self):
        """(file, first line, last line, capture) for captures whose begin and
        end sites lie in the same file: the code the capture passed."""
        out = []
        for key, entry in self.captures.items():
            begin, end = entry["begin"], entry["end"]
            if not begin or not end:
                continue
            a, b = begin.get("site"), end.get("site")
            if a and b and a["file"] == b["file"] and a["line"] <= b["line"]:
                out.append((a["file"], a["line"], b["line"], key, entry))
        return out

    def capture_failures(self, key):
        """Failures of one capture (same report, process and capture id)."""
        path, pid, capture = key
        return [e for e in self.failures()
                if e["_file"] == path and e.get("pid") == pid
                and capture in (e.get("captures") or [])]


def locations(event):
    """Every (file, line) an event's stacks mention, innermost first."""
    out = []
    for frame in event.get("stack") or []:
        if frame.get("file") and frame.get("line"):
            out.append((frame["file"], int(frame["line"])))
    for frame in event.get("python_stack") or []:
        if frame.get("file") and frame.get("line"):
            out.append((frame["file"], int(frame["line"])))
    return out


def describe_measure(event):
    """What the GPU did, in a few words."""
    kind = event["event"]
    if kind in ("capture_error", "capture_end"):
        text = "%s returned %s %s" % (event.get("api"), event.get("result"),
                                      event.get("result_name", ""))
        return text.strip()
    if kind == "framework_error":
        message = (event.get("message") or "").split("\n")[0]
        return "%s: %s" % (event.get("exception_type"), message)
    if kind == "escape":
        return "%s ran on the %s stream outside the graph" % (
            event.get("api"), event.get("stream_kind"))
    if kind == "verdict":
        return "replay differs from eager (max difference %s)" % event.get("max_diff")
    return kind


def serializable(event):
    """The event without its stacks and bookkeeping, for JSON output."""
    return {k: v for k, v in event.items()
            if not k.startswith("_") and k not in ("stack", "python_stack", "argv")}


def load_json_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as err:
        raise InputError("cannot read %s: %s" % (path, err.strerror))
    except ValueError as err:
        raise InputError("%s is not JSON: %s" % (path, err))
