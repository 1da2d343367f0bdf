#!/usr/bin/env python3
"""Compares two results files of run.py or projects.py finding by finding.

Usage: python3 scripts/realcode/compare.py OLD.json NEW.json
Prints the findings only OLD has (-) and only NEW has (+), then the counts.
A finding is its unit, file:line, check and the start of its message.
"""
import json
import sys


def findings(path):
    data = json.load(open(path))
    if isinstance(data, dict):
        data = data.get("results", data.get("entries", []))
    out = set()
    for entry in data:
        unit = "%s@%s:%s" % (entry.get("repo", ""), entry.get("commit", "")[:8],
                             entry.get("path", ""))
        for f in entry.get("findings", []):
            out.add((unit, "%s:%s" % (f["file"].split("/")[-1], f["line"]),
                     f["check"], f["message"][:150]))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old, new = findings(sys.argv[1]), findings(sys.argv[2])
    for row in sorted(old - new):
        print("-", *row)
    for row in sorted(new - old):
        print("+", *row)
    print("%d -> %d" % (len(old), len(new)))


if __name__ == "__main__":
    main()
