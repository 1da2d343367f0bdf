#!/usr/bin/env python3
"""Write a compilation database for examples/, as a build system would.

    python3 examples/compile_db.py OUT.json [--cuda DIR] [--torch-api DIR]

Every .cu file is compiled as CUDA, every .cpp as C++17, both against the
libtorch C++ API headers and the CUDA toolkit's headers.
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def entries(cuda, torch_api):
    out = []
    for dirpath, dirs, files in os.walk(HERE):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            common = ["-std=c++17", "-isystem", torch_api,
                      "-isystem", os.path.join(cuda, "include")]
            if name.endswith(".cu"):
                args = ["clang++", "-x", "cuda", "--cuda-path=" + cuda] + common
            elif name.endswith(".cpp"):
                args = ["clang++"] + common
            else:
                continue
            out.append({"directory": dirpath, "file": path,
                        "arguments": args + ["-c", path, "-o", "/dev/null"]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--torch-api", default="/usr/include/torch/csrc/api/include")
    args = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(entries(args.cuda, args.torch_api), f, indent=2)


if __name__ == "__main__":
    main()
