"""Joins static findings with what the GPU did.

For each finding:
  confirmed       a failure the harness recorded (root-cause capture error,
                  framework error, escaped work) has a stack frame at the
                  finding's file:line, or the finding lies in a capture whose
                  replays diverged from eager execution;
  not reproduced  a capture passed the finding's line and ended cleanly;
  not reached     no capture passed that line (or one failed earlier).
Every failure no finding predicted is listed too. A disagreement is
"explained" when the catalog accounts for it (the hazard's check is
planned; the hazard is captured by this libtorch) or the known-disagreements
file names it.
"""

import os

from . import reports as reports_mod
from .findings import short_message


def _components(path):
    return [p for p in os.path.normpath(path).replace("\\", "/").split("/") if p not in ("", ".")]


class PathMatcher:
    """Matches source paths from different machines by their common suffix:
    relative to a source root when one is given, else at least three
    trailing components (fewer when a path has fewer)."""

    def __init__(self, roots=()):
        self.roots = [os.path.abspath(r) for r in roots]

    def relative(self, path):
        norm = os.path.abspath(path) if os.path.isabs(path) else path
        for root in self.roots:
            if norm.startswith(root + os.sep):
                return _components(norm[len(root) + 1:])
        return _components(path)

    def same(self, a, b):
        if not a or not b:
            return False
        if a == b:
            return True
        ca, cb = self.relative(a), self.relative(b)
        common = 0
        for x, y in zip(reversed(ca), reversed(cb)):
            if x != y:
                break
            common += 1
        need = min(len(ca), len(cb), 3)
        return common >= max(need, 1)


def _rank(event):
    kind = event["event"]
    if kind in ("capture_error", "capture_end") and event.get("root_cause"):
        return 0
    if kind == "framework_error":
        return 1
    if kind == "escape":
        return 2
    return 3


def hazard_of_event(event, reports, catalog):
    """The catalog hazard a runtime failure belongs to, or None."""
    if event.get("event") == "verdict":
        return event.get("hazard")
    if event.get("hazard"):
        return event["hazard"]
    for finder, value in ((catalog.for_api, event.get("api")),
                          (catalog.for_api, event.get("driver_api")),
                          (catalog.for_message, event.get("message")),
                          (catalog.for_error_name, event.get("result_name"))):
        hazard = finder(value)
        if hazard:
            return hazard["id"]
    verdict = reports.verdicts.get(event.get("region") or "")
    return verdict.get("hazard") if verdict else None


class Known:
    """Understood disagreements, from a YAML list of {region, location,
    hazard, reason} entries (any of the first three select)."""

    def __init__(self, entries, matcher):
        self.entries = entries or []
        self.matcher = matcher

    def reason(self, region=None, location=None, hazard=None):
        for entry in self.entries:
            if entry.get("region") and entry["region"] != region:
                continue
            if entry.get("hazard") and entry["hazard"] != hazard:
                continue
            if entry.get("location"):
                if not location:
                    continue
                path, _, line = entry["location"].rpartition(":")
                if not (self.matcher.same(path, location[0]) and str(location[1]) == line):
                    continue
            if entry.get("region") or entry.get("hazard") or entry.get("location"):
                return entry.get("reason", "listed as a known disagreement")
        return None


def join(findings, reports, catalog, matcher, known):
    failures = reports.failures()
    spans = reports.spans()
    matched = set()
    results = []
    for finding in findings:
        result = {"finding": finding, "status": "not_reached", "evidence": None,
                  "explained": None, "reason": None, "region": None}
        where = (finding["file"], finding["line"])
        if finding["line"] is None:
            result["reason"] = "source file not found, so the line is unknown"
            results.append(result)
            continue
        hits = [e for e in failures
                if any(matcher.same(finding["file"], f) and l == finding["line"]
                       for f, l in reports_mod.locations(e))]
        if not hits and finding.get("api"):
            # A finding in a helper or destructor the compiler inlined: the
            # GPU names a call of its chain (a note), with the same API.
            chain = [(n["file"], n["line"]) for n in finding.get("notes") or []
                     if n.get("line")]
            hits = [e for e in failures if e.get("api") == finding["api"]
                    and any(matcher.same(nf, f) and nl == l for nf, nl in chain
                            for f, l in reports_mod.locations(e))]
        if hits:
            hits.sort(key=_rank)
            result.update(status="confirmed", evidence=hits[0],
                          region=hits[0].get("region"))
            matched.update(id(e) for e in hits)
            results.append(result)
            continue
        def spans_at(path, line):
            return [s for s in spans if matcher.same(path, s[0]) and s[1] <= line <= s[2]]
        # A finding in a helper outside every capture: the capture its chain
        # (the first note inside one) passes through. Frozen host state is
        # reported after the capture, where it changes; its notes point at
        # the captured reads, and its evidence is a divergence (below).
        line = finding["line"]
        containing = spans_at(finding["file"], line)
        hazard = catalog.hazard(finding.get("hazard") or "")
        frozen = bool(hazard) and hazard["gpu_verdict"] == "SilentFrozen"
        for note in finding.get("notes") or []:
            if containing or frozen:
                break
            if note.get("line"):
                containing = spans_at(note["file"], note["line"])
                line = note["line"]
        for path, first, last, key, entry in containing:
            region = entry["begin"].get("region")
            result["region"] = region
            verdict = reports.verdicts.get(region or "")
            if verdict and verdict.get("verdict") == "silent_divergence":
                result.update(status="confirmed", evidence=verdict)
                matched.add(id(verdict))
                break
            earlier = [e for e in reports.capture_failures(key)
                       if e.get("site") and matcher.same(e["site"]["file"], path)
                       and e["site"]["line"] < line]
            if earlier:
                result.update(status="not_reached", evidence=earlier[0],
                              reason="the capture failed earlier, at line %d"
                              % earlier[0]["site"]["line"])
                continue
            result.update(status="not_reproduced", evidence=entry["end"],
                          reason="capture %s passed this line and ended cleanly"
                          % key[2])
            break
        if result["status"] == "not_reached" and not containing:
            # Host state frozen at capture is reported where it changes,
            # after the capture: the divergence of a region in the same
            # file that measures that hazard confirms it.
            hazard = catalog.hazard(finding.get("hazard") or "")
            if hazard and hazard["gpu_verdict"] == "SilentFrozen":
                for verdict in reports.verdicts.values():
                    if (verdict.get("verdict") == "silent_divergence"
                            and verdict.get("hazard") == hazard["id"]
                            and verdict.get("file")
                            and matcher.same(finding["file"], verdict["file"])):
                        result.update(status="confirmed", evidence=verdict,
                                      region=verdict.get("region"))
                        matched.add(id(verdict))
                        break
        if result["status"] == "not_reached" and not result["reason"]:
            result["reason"] = "no capture passed this line"
        if result["status"] == "not_reproduced":
            hazard = catalog.hazard(finding.get("hazard") or "")
            reason = known.reason(region=result["region"], location=where,
                                  hazard=finding.get("hazard"))
            if hazard and hazard["gpu_verdict"] == "CapturedNow":
                result["explained"] = ("captured on this GPU's libtorch (%s: %s)"
                                       % (hazard["id"], "CapturedNow"))
            elif reason:
                result["explained"] = reason
        results.append(result)

    unpredicted = []
    for event in failures:
        if id(event) in matched:
            continue
        hazard = hazard_of_event(event, reports, catalog)
        site = event.get("site")
        location = (site["file"], site["line"]) if site else None
        explained = None
        if hazard and catalog.is_planned(hazard):
            explained = "%s is planned: no static check yet" % catalog.check_of(hazard)
        if not explained:
            explained = known.reason(region=event.get("region"), location=location,
                                     hazard=hazard)
        if not explained and site and site.get("lang") == "python":
            explained = "Python code: outside the static analysis"
        unpredicted.append({"event": event, "hazard": hazard, "explained": explained})
    return results, unpredicted


def summarize(results, unpredicted):
    counts = {"findings": len(results), "confirmed": 0, "not_reproduced": 0,
              "not_reproduced_explained": 0, "not_reached": 0,
              "unpredicted": len(unpredicted),
              "unpredicted_explained": sum(1 for u in unpredicted if u["explained"])}
    for r in results:
        counts[r["status"]] += 1
        if r["status"] == "not_reproduced" and r["explained"]:
            counts["not_reproduced_explained"] += 1
    failing = (counts["not_reproduced"] - counts["not_reproduced_explained"]
               + counts["unpredicted"] - counts["unpredicted_explained"])
    counts["exit_code"] = 1 if failing else 0
    return counts


def finding_json(result):
    finding = result["finding"]
    out = {"check": finding["check"], "hazard": finding.get("hazard"),
           "file": finding["file"], "line": finding["line"],
           "column": finding["column"], "api": finding.get("api"),
           "message": short_message(finding["message"]),
           "status": result["status"], "region": result["region"],
           "explained": result["explained"], "reason": result["reason"]}
    if result["evidence"] is not None:
        event = result["evidence"]
        out["gpu"] = reports_mod.describe_measure(event)
        out["evidence"] = reports_mod.serializable(event)
    return out


def unpredicted_json(item):
    event = item["event"]
    return {"hazard": item["hazard"], "explained": item["explained"],
            "region": event.get("region"), "gpu": reports_mod.describe_measure(event),
            "site": event.get("site"), "event": reports_mod.serializable(event)}
