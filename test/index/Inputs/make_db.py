"""Writes a compile_commands.json for the sources of a directory.

usage: make_db.py DIR FLAG... : one entry per .cu/.cpp file of DIR, compiled
by clang++ with FLAGs (CUDA files as CUDA host code).
"""
import json
import os
import sys

root = os.path.abspath(sys.argv[1])
flags = sys.argv[2:]
entries = []
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name)
    if name.endswith(".cu"):
        lang = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib"]
    elif name.endswith(".cpp"):
        lang = []
    else:
        continue
    entries.append({"directory": root, "file": path,
                    "arguments": ["clang++"] + lang + ["-std=c++17"] + flags +
                                 ["-c", path, "-o", path + ".o"]})
with open(os.path.join(root, "compile_commands.json"), "w") as out:
    json.dump(entries, out, indent=1)
