#!/usr/bin/env python3
"""Validates a SARIF file against the SARIF 2.1.0 JSON schema.

Usage: validate_sarif.py SCHEMA FILE

Prints "valid: N results" and exits 0, or prints the first schema errors
and exits 1. Needs python3-jsonschema (Debian) or jsonschema (pip).
"""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        log = json.load(f)
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    for error in errors[:10]:
        where = "/".join(str(p) for p in error.path)
        print(f"invalid at /{where}: {error.message[:300]}")
    if errors:
        sys.exit(1)
    results = sum(len(run.get("results", [])) for run in log.get("runs", []))
    print(f"valid: {results} results")


if __name__ == "__main__":
    main()
