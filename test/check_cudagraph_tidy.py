#!/usr/bin/env python3
"""Runs cudagraph-tidy (or clang-tidy with the plugin) on a lit test file and
checks its diagnostics with FileCheck.

Usage:
  check_cudagraph_tidy.py --tidy BIN [--load PLUGIN] [--prefix P]
                          FILE CHECKS TMP [-- TIDY-ARGS [-- COMPILER-ARGS]]

CHECK-MESSAGES lines (or --prefix's) hold the expected warnings and notes;
any warning they do not name fails the test. The raw output is kept in
TMP.out for debugging. When the file has CHECK-FIXES lines, the tool also
runs with --fix on a copy without the CHECK lines (in the run with the
default prefix), and the fixed copy must
match them.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tidy", required=True)
    parser.add_argument("--load")
    parser.add_argument("--prefix", default="CHECK-MESSAGES")
    parser.add_argument("--expect-exit", type=int, default=None)
    parser.add_argument("file")
    parser.add_argument("checks")
    parser.add_argument("tmp")
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        split = argv.index("--")
        argv, rest = argv[:split], argv[split + 1:]
    args = parser.parse_args(argv)

    tidy_args, compiler_args = [], []
    if rest:
        if "--" in rest:
            split = rest.index("--")
            tidy_args, compiler_args = rest[:split], rest[split + 1:]
        else:
            tidy_args = rest
    if not compiler_args:
        compiler_args = ["-std=c++17"]

    command = [args.tidy, args.file, "--checks=-*," + args.checks]
    if args.load:
        command.append("--load=" + args.load)
    command += tidy_args + ["--"] + compiler_args
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, universal_newlines=True)
    output = result.stdout
    with open(args.tmp + ".out", "w") as f:
        f.write(output)
    if args.expect_exit is not None and result.returncode != args.expect_exit:
        sys.exit("exit code %d, expected %d; output:\n%s"
                 % (result.returncode, args.expect_exit, output))
    if args.expect_exit is None and re.search(r"^(\S+:\d+:\d+: )?error: ",
                                              output, re.MULTILINE):
        sys.exit("the tool reported errors:\n" + output)

    filecheck = shutil.which("FileCheck") or "FileCheck"
    check = subprocess.run(
        [filecheck, args.file, "--check-prefix=" + args.prefix,
         "--implicit-check-not={{[0-9]+:[0-9]+: (warning|error)}}:", "--allow-empty",
         "--dump-input=fail"],
        input=output, universal_newlines=True)
    if check.returncode != 0:
        sys.stderr.write("command: %s\n" % " ".join(command))
        sys.exit(check.returncode)

    with open(args.file, encoding="utf-8") as f:
        source = f.read()
    if "CHECK-FIXES:" in source and args.prefix == "CHECK-MESSAGES":
        fixed = args.tmp + ".fixed" + os.path.splitext(args.file)[1]
        with open(fixed, "w", encoding="utf-8") as f:
            f.write(re.sub(r"[ \t]*// *CHECK-[A-Z-]+:.*", "", source))
        fix_command = [fixed if c == args.file else c for c in command]
        fix_command.insert(2, "--fix")
        subprocess.run(fix_command, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(fixed, encoding="utf-8") as f:
            fixed_text = f.read()
        check = subprocess.run(
            [filecheck, args.file, "--check-prefix=CHECK-FIXES",
             "--dump-input=fail"], input=fixed_text, universal_newlines=True)
        if check.returncode != 0:
            sys.stderr.write("command: %s\n" % " ".join(fix_command))
            sys.exit(check.returncode)


if __name__ == "__main__":
    main()
