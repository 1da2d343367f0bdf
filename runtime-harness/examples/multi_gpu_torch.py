"""Captures on two GPUs with torch.distributed: one process per GPU.

    torchrun --standalone --nproc-per-node 2 multi_gpu_torch.py MODE

Modes:
    capture     each rank captures and replays its own forward pass
    allreduce   an NCCL all-reduce inside a captured step (warmed up first on
                a side stream); the replayed result is checked
    ddp         a DistributedDataParallel training step (forward, backward,
                capturable optimizer step) captured after eager warm-up
                iterations on a side stream, then replayed; the ranks'
                parameters are compared
    watchdog    a background thread queries a CUDA event while the rank
                captures in global mode, as a watchdog thread does

Each rank prints "rank R checksum NAME HEX" for what it computed and
"rank R NAME correct|WRONG" after checking it, so runs with and without the
harness can be compared.
"""

import hashlib
import os
import sys
import threading

import torch
import torch.distributed as dist


def digest(tensor):
    data = tensor.detach().float().cpu().contiguous().numpy().tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def say(rank, text):
    print("rank %d %s" % (rank, text), flush=True)


def run_capture(rank, device):
    torch.manual_seed(1234 + rank)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 8)).to(device)
    static_in = torch.randn(32, 64, device=device)
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model(static_in)
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = model(static_in)
    static_in.copy_(torch.linspace(-1, 1, 32 * 64, device=device).view(32, 64))
    graph.replay()
    with torch.no_grad():
        expected = model(static_in)
    say(rank, "checksum capture %s" % digest(static_out))
    say(rank, "capture %s" % ("correct" if torch.equal(static_out, expected) else "WRONG"))


def run_allreduce(rank, device, world):
    buf = torch.full((1024,), float(rank + 1), device=device)
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(3):
            tmp = buf * 2
            dist.all_reduce(tmp)
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = buf * 2
        dist.all_reduce(out)
        out.mul_(0.5)
    buf.fill_(float(rank + 10))
    graph.replay()
    torch.cuda.synchronize(device)
    expected = sum(float(r + 10) for r in range(world))
    ok = bool(torch.all(out == expected).item())
    say(rank, "checksum allreduce %s" % digest(out))
    say(rank, "allreduce %s" % ("correct" if ok else "WRONG"))


def run_ddp(rank, device, world):
    torch.manual_seed(99)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 1)).to(device)
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        # DDP's buckets and AccumulateGrad streams come from the stream that
        # builds it: a side stream, not the legacy default stream.
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index])
        optimizer = torch.optim.Adam(ddp.parameters(), lr=1e-2, capturable=True)
        gen = torch.Generator(device="cpu").manual_seed(7 + rank)
        static_x = torch.randn(16, 32, generator=gen).to(device)
        static_y = torch.randn(16, 1, generator=gen).to(device)
        for _ in range(11):
            optimizer.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(ddp(static_x), static_y)
            loss.backward()
            optimizer.step()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = torch.nn.functional.mse_loss(ddp(static_x), static_y)
        static_loss.backward()
        optimizer.step()
    losses = []
    for _ in range(5):
        graph.replay()
        losses.append(float(static_loss.item()))
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(gathered[0], g) for g in gathered)
    say(rank, "checksum ddp %s" % digest(flat))
    say(rank, "ddp losses %s" % " ".join("%.6f" % l for l in losses))
    say(rank, "ddp %s" % ("correct" if same and losses[-1] < losses[0] else "WRONG"))


def run_watchdog(rank, device):
    event = torch.cuda.Event()
    event.record()
    torch.cuda.synchronize(device)
    opened = threading.Event()
    queried = threading.Event()
    result = {}

    def watchdog():
        opened.wait()
        torch.cuda.set_device(device)
        try:
            result["query"] = "returned %s" % event.query()
        except RuntimeError as e:
            result["query"] = "raised: %s" % str(e).splitlines()[0]
        queried.set()

    thread = threading.Thread(target=watchdog)
    thread.start()
    graph = torch.cuda.CUDAGraph()
    buf = torch.ones(256, device=device)
    try:
        with torch.cuda.graph(graph, capture_error_mode="global"):
            buf.mul_(2)
            opened.set()
            queried.wait()
            buf.add_(1)
        say(rank, "capture ended")
    except RuntimeError as e:
        say(rank, "capture failed: %s" % str(e).splitlines()[0])
    thread.join()
    say(rank, "watchdog query %s" % result.get("query"))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("capture", "allreduce", "ddp", "watchdog"):
        sys.stderr.write(__doc__)
        return 2
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local)
    torch.cuda.set_device(device)
    if mode in ("allreduce", "ddp"):
        dist.init_process_group("nccl", device_id=device)
    if mode == "capture":
        run_capture(rank, device)
    elif mode == "allreduce":
        run_allreduce(rank, device, world)
    elif mode == "ddp":
        run_ddp(rank, device, world)
    else:
        run_watchdog(rank, device)
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
