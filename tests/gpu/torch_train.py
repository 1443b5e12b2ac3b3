# torch_train.py — a small training loop (3 Linear layers, Adam), for gputop's GPU checks.
# usage: torch_train.py STEPS [--profile] [--wait-go FILE] [--window K]
#
# Three phases: set-up (model, optimizer, data on the GPU), warm-up (WARMUP steps), then the
# measured STEPS steps, timed. It ends with one line
#   RESULT {"steps", "steps_per_s", "checksum", "reserved", "allocated", "loss", "torch", "cuda"}
# (reserved/allocated: torch.cuda.memory_reserved()/memory_allocated() at the end).
#
# --wait-go FILE  after the warm-up, print "ready PID" and wait for FILE: gputop -p attaches
#                 there, so an attached gputop sees exactly the measured steps.
# --window K      during the measured steps, every K steps (synchronized) print
#                 WINDOW <start> <end> <K>   (time.monotonic(), the clock of scripts/gpu-paired)
# --profile       the independent count (run WITHOUT gputop): each phase runs under its own
#                 torch.profiler, which counts the launch calls the program makes
#                 (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel, cuLaunchKernelEx...);
#                 printed as PROFILE {"setup": {api: n}, "warmup": {...}, "steps": {...},
#                 "n_warmup", "n_steps"}. Then STEPS more steps, not profiled, give the untraced
#                 speed for RESULT. The profiler's own work is not in the traced runs at all:
#                 they never start it.
import json
import os
import re
import sys
import time

import torch

WARMUP = 20
steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
profiling = "--profile" in sys.argv
go = sys.argv[sys.argv.index("--wait-go") + 1] if "--wait-go" in sys.argv else None
window = int(sys.argv[sys.argv.index("--window") + 1]) if "--window" in sys.argv else 0
LAUNCH = re.compile(r"^cu(da)?Launch.*Kernel")	# not cudaLaunchHostFunc


def profiled(fn):
    """Runs fn under torch.profiler; returns (fn's result, {launch API: calls})."""
    if not profiling:
        return fn(), None
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out = fn()
        torch.cuda.synchronize()
    counts = {}
    for e in prof.events():
        if LAUNCH.match(e.name):
            counts[e.name] = counts.get(e.name, 0) + 1
    return out, counts


def setup():
    torch.manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    return model, opt, x, y


(model, opt, x, y), prof_setup = profiled(setup)


def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def run(n):
    loss = None
    for _ in range(n):
        loss = step()
    torch.cuda.synchronize()
    return loss


_, prof_warmup = profiled(lambda: run(WARMUP))
if profiling:
    _, prof_steps = profiled(lambda: run(steps))
    print("PROFILE " + json.dumps({"setup": prof_setup, "warmup": prof_warmup, "steps": prof_steps,
                                   "n_warmup": WARMUP, "n_steps": steps}), flush=True)

if go:
    print("ready", os.getpid(), flush=True)
    deadline = time.time() + 120
    while not os.path.exists(go):
        if time.time() > deadline:
            sys.exit("torch_train: no go file after 120 s")
        time.sleep(0.005)

t0 = time.time()
if window:
    done = 0
    while done < steps:
        w0 = time.monotonic()
        loss = run(window)
        print("WINDOW %.6f %.6f %d" % (w0, time.monotonic(), window), flush=True)
        done += window
else:
    loss = run(steps)
dt = time.time() - t0
# The parameters' sum, in full: the same steps on the same GPU give the same bits (the loss alone
# rounds to 0 once the fixed batch is learnt).
checksum = float(sum(p.double().sum() for p in model.parameters()))
print("RESULT " + json.dumps({"steps": steps, "steps_per_s": round(steps / dt, 1), "checksum": checksum,
                              "reserved": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated(),
                              "loss": round(loss.item(), 6), "torch": torch.__version__,
                              "cuda": torch.version.cuda}), flush=True)
