# torch_graphs.py — CUDA graphs made by PyTorch, for scripts/gpu-graphs (issue 15).
# usage: torch_graphs.py cudagraph|compile N [--profile OUT.json] [--wait-go FILE]
#
# cudagraph  an MLP forward (3 Linear layers) captured with torch.cuda.CUDAGraph after a warm-up
#            on a side stream, then replayed N times.
# compile    the same MLP compiled with torch.compile(mode="reduce-overhead") (CUDA graph trees:
#            warm-up runs, a recording, then replays), run for N steps.
# Set-up (model and input on the GPU) comes first; with --wait-go FILE the script then prints
# "ready PID" and waits for FILE, so that an attached gputop sees exactly the measured part:
# for cudagraph the warm-up, the capture and the N replays; for compile the N steps.
# --profile OUT.json  the independent count: the measured part runs under
#            torch.profiler (CUPTI), whose CUDA kernel events are counted per kernel name and
#            written to OUT.json as {"kernels": {name: n}, "replayed": {name: n}}: "replayed" counts
#            only the kernels of the replays (cudagraph) — what ran through graph launches.
# Ends with "torch_graphs: ok MODE N checksum=..." (the output's sum, the same with or without
# gputop; summed on the CPU, so that the check launches no kernel outside the profiled part).
import json
import os
import sys
import time

import torch

mode, n = sys.argv[1], int(sys.argv[2])
profile_out = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None
go = sys.argv[sys.argv.index("--wait-go") + 1] if "--wait-go" in sys.argv else None

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                            torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda().eval()
x = torch.randn(64, 256, device="cuda")
torch.cuda.synchronize()

if go:
    print("ready %d" % os.getpid(), flush=True)
    while not os.path.exists(go):
        time.sleep(0.002)


def kernel_counts(trace_path):
    with open(trace_path) as f:
        events = json.load(f).get("traceEvents", [])
    counts = {}
    for e in events:
        if e.get("cat") == "kernel":
            counts[e["name"]] = counts.get(e["name"], 0) + 1
    return counts


def profiled(fn):
    """fn() under torch.profiler when --profile; returns the kernel counts (or None)."""
    if not profile_out:
        fn()
        torch.cuda.synchronize()
        return None
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    path = profile_out + ".trace.json"
    prof.export_chrome_trace(path)
    return kernel_counts(path)


out = None
with torch.no_grad():
    if mode == "cudagraph":
        static_x = x.clone()
        g = torch.cuda.CUDAGraph()

        def build():
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model(static_x)
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                globals()["static_y"] = model(static_x)

        def replay():
            for _ in range(n):
                g.replay()

        before = profiled(build)
        replayed = profiled(replay)
        out = globals()["static_y"]
        kernels = None
        if replayed is not None:
            kernels = dict(before)
            for k, v in replayed.items():
                kernels[k] = kernels.get(k, 0) + v
    elif mode == "compile":
        compiled = torch.compile(model, mode="reduce-overhead")

        def steps():
            global out
            for _ in range(n):
                out = compiled(x)
                out = out.clone()

        kernels = profiled(steps)
        replayed = None
    else:
        sys.exit("torch_graphs: unknown mode " + mode)
    torch.cuda.synchronize()

if profile_out:
    with open(profile_out, "w") as f:
        json.dump({"kernels": kernels, "replayed": replayed}, f)
print("torch_graphs: ok %s %d checksum=%.6f" % (mode, n, float(out.cpu().double().sum())), flush=True)
