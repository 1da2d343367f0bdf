#!/usr/bin/env python3
"""Runs a command and checks its exit code: expect_exit.py CODE CMD [ARGS...]

The command's output passes through. Exits 0 when the command exited CODE,
else 1 with a message naming both codes.
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    want = int(sys.argv[1])
    got = subprocess.call(sys.argv[2:])
    if got != want:
        sys.exit(f"expect_exit: exit code {got}, expected {want}: {' '.join(sys.argv[2:])}")


if __name__ == "__main__":
    main()
