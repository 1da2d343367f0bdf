#!/usr/bin/env python3
"""Applies the problem matcher of a VS Code tasks.json to a tool output, as
VS Code would, and prints one line per match: "severity file:line:col message".

Usage: problem_matcher.py TASKS_JSON OUTPUT
"""
import json
import re
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        # tasks.json allows // comments
        text = "\n".join(l for l in f.read().splitlines() if not l.strip().startswith("//"))
    tasks = json.loads(text)["tasks"]
    pattern = tasks[0]["problemMatcher"]["pattern"]
    regexp = re.compile(pattern["regexp"])
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            m = regexp.match(line.rstrip("\n"))
            if m:
                g = lambda k: m.group(pattern[k])
                print(f"{g('severity')} {g('file')}:{g('line')}:{g('column')} {g('message')[:60]}")


if __name__ == "__main__":
    main()
