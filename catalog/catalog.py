"""Reads catalog/Hazards.def, the one list of CUDA graph capture hazards.

The C++ checks include Hazards.def as an X-macro file; Python tools (the docs
generator, the runtime harness's `confirm`) read the same file through this
module so every hazard has one id and one description everywhere.
"""

import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PATH = os.path.join(_HERE, "Hazards.def")

CHECK_FIELDS = ("name", "status", "summary")
HAZARD_FIELDS = ("id", "check", "kind", "names", "flags", "gpu_verdict",
                 "effect", "outcome", "instead")

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([A-Za-z_]\w*)|(,)|(\)))')


def _unescape(literal):
    return bytes(literal[1:-1], "utf-8").decode("unicode_escape")


def _parse_args(text, pos):
    """Parses macro arguments starting after '('; returns (args, end)."""
    args, current = [], None
    while True:
        match = _TOKEN.match(text, pos)
        if not match:
            raise ValueError("catalog: cannot parse near: %r" % text[pos:pos + 40])
        pos = match.end()
        literal, ident, comma, close = match.groups()
        if literal is not None:
            # Adjacent string literals concatenate, as in C.
            current = (current or "") + _unescape(literal)
        elif ident is not None:
            current = ident
        elif comma is not None:
            args.append(current if current is not None else "")
            current = None
        else:
            args.append(current if current is not None else "")
            return args, pos


def _strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


ASPECT_FIELDS = {
    "CUDAGRAPH_HAZARD_ALLOWED_IN": ("id", "mode", "names"),
    "CUDAGRAPH_HAZARD_DEVICE_WIDE": ("id",),
    "CUDAGRAPH_HAZARD_OTHER_THREAD": ("id", "names"),
    "CUDAGRAPH_HAZARD_CACHED_RESOURCE": ("id",),
    "CUDAGRAPH_HAZARD_TORCH_INSTEAD": ("id", "instead"),
    "CUDAGRAPH_HAZARD_SAFE_FORM": ("id", "names"),
}


def load(path=DEFAULT_PATH):
    """Returns (checks, hazards): lists of dicts in file order. Each hazard
    also carries its aspects: allowed_in (a list of (mode, [names])),
    device_wide, other_thread (a list of [names], [] meaning all), cached_resource, torch_instead and safe_forms."""
    with open(path, encoding="utf-8") as f:
        text = _strip_comments(f.read())
    checks, hazards = [], []
    by_id = {}
    for match in re.finditer(r"^(CUDAGRAPH_CHECK|CUDAGRAPH_HAZARD\w*)\(", text,
                             re.MULTILINE):
        args, _ = _parse_args(text, match.end())
        macro = match.group(1)
        if macro in ASPECT_FIELDS:
            fields = ASPECT_FIELDS[macro]
            if len(args) != len(fields) or args[0] not in by_id:
                raise ValueError("catalog: bad %s %r" % (macro, args))
            aspect = dict(zip(fields, args))
            hazard = by_id[aspect["id"]]
            if macro == "CUDAGRAPH_HAZARD_ALLOWED_IN":
                hazard["allowed_in"].append(
                    (aspect["mode"], [n for n in aspect["names"].split("|") if n]))
            elif macro == "CUDAGRAPH_HAZARD_DEVICE_WIDE":
                hazard["device_wide"] = True
            elif macro == "CUDAGRAPH_HAZARD_OTHER_THREAD":
                hazard["other_thread"].append(
                    [n for n in aspect["names"].split("|") if n])
            elif macro == "CUDAGRAPH_HAZARD_CACHED_RESOURCE":
                hazard["cached_resource"] = True
            elif macro == "CUDAGRAPH_HAZARD_SAFE_FORM":
                hazard["safe_forms"] = [n for n in aspect["names"].split("|") if n]
            else:
                hazard["torch_instead"] = aspect["instead"]
            continue
        if macro == "CUDAGRAPH_CHECK":
            if len(args) != len(CHECK_FIELDS):
                raise ValueError("catalog: bad CUDAGRAPH_CHECK %r" % args)
            checks.append(dict(zip(CHECK_FIELDS, args)))
        else:
            if len(args) != len(HAZARD_FIELDS):
                raise ValueError("catalog: bad CUDAGRAPH_HAZARD %r" % args)
            hazard = dict(zip(HAZARD_FIELDS, args))
            hazard["names"] = [n for n in hazard["names"].split("|") if n]
            hazard.update(allowed_in=[], device_wide=False, other_thread=[],
                          cached_resource=False,
                          torch_instead="",
                          safe_forms=[])
            hazards.append(hazard)
            by_id[hazard["id"]] = hazard
    return checks, hazards


def name_matches(pattern_list, qualified_name):
    """Mirrors the C++ matcher: globs with '*', '!' excludes."""
    def glob(p, s):
        return re.fullmatch(".*".join(map(re.escape, p.split("*"))), s) is not None
    includes = [p for p in pattern_list if not p.startswith("!")]
    excludes = [p[1:] for p in pattern_list if p.startswith("!")]
    return (any(glob(p, qualified_name) for p in includes)
            and not any(glob(p, qualified_name) for p in excludes))


def strip_cuda_api_suffix(name):
    """Mirrors catalog/CatalogNames.h: cuMemcpyDtoH_v2_ptds -> cuMemcpyDtoH."""
    while True:
        stripped = re.sub(r"(?<=.)(_ptsz|_ptds|_v[0-9]+)$", "", name)
        if stripped == name:
            return name
        name = stripped


def hazards_for_api(api_name, path=DEFAULT_PATH):
    """The hazards whose Names match an API name (for example a CUDA call
    the runtime harness saw fail)."""
    _, hazards = load(path)
    name = strip_cuda_api_suffix(api_name)
    return [h for h in hazards if h["names"]
            and h["kind"] not in ("PinnedFlag", "LegacyStream")
            and (name_matches(h["names"], name) or name_matches(h["names"], api_name))]


if __name__ == "__main__":
    checks, hazards = load()
    for c in checks:
        print("check  %-34s %s" % (c["name"], c["status"]))
    for h in hazards:
        print("hazard %-26s %-34s %s" % (h["id"], h["check"], h["kind"]))
