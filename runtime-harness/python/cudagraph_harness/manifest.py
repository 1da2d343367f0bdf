"""Finds the fixture regions in the sources: name, hazard, file and the
lines the region's code spans (its function, plus an input-update hook when
it has one). The static side of the round trip uses the spans to tell which
findings belong to which region; the runtime side knows regions by name.
"""

import ast
import os
import re

_CXX_REGION = re.compile(
    r'CUDAGRAPH_(RAW|TORCH)_REGION(?:_EX|_REPLAY)?\(\s*(\w+)\s*,\s*"([^"]+)"\s*,\s*"([^"]+)"'
    r'([^{]*?)\)\s*\{', re.S)
_HOOK = re.compile(r"&\s*(\w+)\s*\)?\s*$")


def _line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def _function_end(lines, start):
    """The 1-based line of the first "}" in column 0 at or after start."""
    for number in range(start, len(lines) + 1):
        if lines[number - 1].rstrip() == "}":
            return number
    return len(lines)


def _cxx_regions(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()
    out = []
    for match in _CXX_REGION.finditer(text):
        flavour, _, name, hazard, rest = match.groups()
        start = _line_of(text, match.start())
        spans = [(start, _function_end(lines, _line_of(text, match.end())))]
        hook = _HOOK.search(rest.strip())
        if hook:
            pattern = re.compile(r"^static void %s\(" % re.escape(hook.group(1)), re.M)
            found = pattern.search(text)
            if found:
                first = _line_of(text, found.start())
                spans.append((first, _function_end(lines, first)))
        out.append({"name": name, "hazard": hazard, "file": path,
                    "flavour": flavour.lower(), "line": start, "spans": spans})
    return out


def _python_regions(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out = []
    for node in functions.values():
        for deco in node.decorator_list:
            if not (isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "region"):
                continue
            args = [a.value for a in deco.args if isinstance(a, ast.Constant)]
            if len(args) < 2:
                continue
            spans = [(deco.lineno, node.end_lineno)]
            for kw in deco.keywords:
                if kw.arg == "update" and isinstance(kw.value, ast.Name):
                    hook = functions.get(kw.value.id)
                    if hook:
                        spans.append((hook.lineno, hook.end_lineno))
            out.append({"name": args[0], "hazard": args[1], "file": path,
                        "flavour": "python", "line": deco.lineno, "spans": spans})
    return out


def scan(fixtures_dir):
    """Every region under fixtures_dir, sorted by name."""
    regions = []
    for root, _, names in os.walk(fixtures_dir):
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.endswith((".cu", ".cpp")):
                regions.extend(_cxx_regions(path))
            elif name.endswith(".py"):
                regions.extend(_python_regions(path))
    return sorted(regions, key=lambda r: r["name"])
