"""Reads static findings: clang-tidy's --export-fixes YAML as cudagraph-tidy
writes it (a top-level Diagnostics list; each with DiagnosticName, a
DiagnosticMessage {Message, FilePath, FileOffset, Replacements}, optional
Notes of the same shape, and Level).

FileOffset is a byte offset into FilePath; it becomes a line and column by
reading the file. Files are looked up where the YAML says, then under the
source roots given, matching on path suffix (the YAML may come from another
checkout).
"""

import os
import re


class InputError(Exception):
    """Bad input: the tools print the message and exit with status 2."""


_QUOTED_API = re.compile(r"^'([^']+)'")
_HAZARD_ID = re.compile(r"\(hazard: ([A-Za-z0-9-]+)\)$")


def _load_yaml(path):
    try:
        import yaml
    except ImportError:
        raise InputError("reading %s needs PyYAML (Debian: python3-yaml)" % path)
    try:
        with open(path, encoding="utf-8") as f:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            return yaml.load(f, Loader=loader)
    except OSError as err:
        raise InputError("cannot read %s: %s" % (path, err.strerror))
    except yaml.YAMLError as err:
        raise InputError("%s is not valid YAML: %s" % (path, str(err).splitlines()[0]))
    except UnicodeDecodeError as err:
        raise InputError("%s is not UTF-8 text (byte %d)" % (path, err.start))


class SourceFiles:
    """Finds and caches source files, mapping byte offsets to lines."""

    def __init__(self, roots=()):
        self.roots = [os.path.abspath(r) for r in roots]
        self.cache = {}

    def resolve(self, path):
        if path in self.cache:
            return self.cache[path][0]
        found = None
        if os.path.isfile(path):
            found = path
        else:
            parts = path.replace("\\", "/").strip("/").split("/")
            for root in self.roots:
                for i in range(len(parts)):
                    candidate = os.path.join(root, *parts[i:])
                    if os.path.isfile(candidate):
                        found = candidate
                        break
                if found:
                    break
        data = None
        if found:
            with open(found, "rb") as f:
                data = f.read()
        self.cache[path] = (found, data)
        return found

    def line_column(self, path, offset):
        self.resolve(path)
        data = self.cache[path][1]
        if data is None or offset is None or offset < 0 or offset > len(data):
            return None, None
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        return line, column


def _location(entry, where, sources):
    if not isinstance(entry, dict):
        raise InputError("%s: expected a mapping" % where)
    path = entry.get("FilePath")
    offset = entry.get("FileOffset")
    if not isinstance(path, str) or (offset is not None and not isinstance(offset, int)):
        raise InputError("%s: FilePath must be a string and FileOffset a number" % where)
    line = column = None
    if path:
        line, column = sources.line_column(path, offset)
    return {"file": path, "offset": offset, "line": line, "column": column,
            "message": str(entry.get("Message", ""))}


def load_fixes(path, sources, catalog=None):
    """Returns (findings, skipped) from one export-fixes file.

    Only cudagraph-* diagnostics are findings; `skipped` counts the rest by
    name (clang-diagnostic-error means a file did not compile)."""
    doc = _load_yaml(path)
    if doc is None:
        return [], {}
    if not isinstance(doc, dict) or "Diagnostics" not in doc:
        raise InputError("%s: no top-level 'Diagnostics' list (is this a "
                         "clang-tidy --export-fixes file?)" % path)
    diagnostics = doc["Diagnostics"] or []
    if not isinstance(diagnostics, list):
        raise InputError("%s: 'Diagnostics' must be a list" % path)
    findings, skipped = [], {}
    for index, diag in enumerate(diagnostics):
        where = "%s: diagnostic %d" % (path, index + 1)
        if not isinstance(diag, dict) or "DiagnosticName" not in diag:
            raise InputError("%s: missing DiagnosticName" % where)
        name = str(diag["DiagnosticName"])
        if "DiagnosticMessage" not in diag:
            raise InputError("%s: missing DiagnosticMessage" % where)
        location = _location(diag["DiagnosticMessage"], where, sources)
        if not name.startswith("cudagraph-"):
            skipped.setdefault(name, []).append(location)
            continue
        notes = []
        for n, note in enumerate(diag.get("Notes") or []):
            notes.append(_location(note, "%s, note %d" % (where, n + 1), sources))
        message = location.pop("message")
        match = _QUOTED_API.match(message)
        api = match.group(1) if match else None
        finding = dict(location, check=name, message=message, api=api,
                       level=str(diag.get("Level", "Warning")), notes=notes,
                       source=sources.resolve(location["file"]) if location["file"] else None)
        if catalog:
            # The message ends with the hazard id; older fixes files may not.
            named = _HAZARD_ID.search(message)
            hazard = catalog.hazard(named.group(1)) if named else None
            if not hazard or hazard["check"] != name:
                hazard = catalog.for_finding(name, api)
            finding["hazard"] = hazard["id"] if hazard else None
        findings.append(finding)
    return findings, skipped


def short_message(message):
    """The part of a finding's message before the measured outcome."""
    for marker in (" during CUDA graph capture", ":"):
        if marker in message:
            return message.split(marker)[0]
    return message
