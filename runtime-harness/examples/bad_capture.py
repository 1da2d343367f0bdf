"""A PyTorch program whose captured region reads a device value on the host.

    cudagraph-run -o report.jsonl -- python3 bad_capture.py

The harness names the failing cudaStreamSynchronize (900, the root cause) and
this file's line that called .item(); PyTorch itself only says "operation
failed due to a previous error during capture".
"""

import torch


def step(x):
    y = x * 2
    total = y.sum().item()
    return y / total


def main():
    x = torch.ones(1024, device="cuda")
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            step(x)
    except RuntimeError as err:
        print("capture failed:", str(err).splitlines()[0])


if __name__ == "__main__":
    main()
