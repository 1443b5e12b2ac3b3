# torch_gputime.py — PyTorch kernels' GPU time, for scripts/gpu-gputime (--gpu-time, issue 13
# part 3). usage: torch_gputime.py N [--profile OUT.json] [--wait-go FILE]
# A training loop (an MLP of 4 Linear layers with GELU and LayerNorm, softmax cross-entropy,
# Adam; batch 256), seeded: two runs launch the same kernels. Set-up and 5 warm-up steps come
# first; with --wait-go FILE it then prints "ready PID" and waits for FILE, so that an attached
# gputop sees exactly the N measured steps.
# --profile OUT.json  the independent figure (run WITHOUT gputop): the N steps run under
#            torch.profiler (CUPTI); its CUDA kernel events are summed per kernel name and
#            written to OUT.json as {"kernels": {name: {"total_s": S, "count": C}}}.
# Prints RESULT {"steps": N, "steps_per_s": R} (the N steps' rate) and
# "torch_gputime: ok N checksum=..." (the last loss: the same with or without gputop).
import json
import os
import sys
import time

import torch

n = int(sys.argv[1])
profile_out = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None
go = sys.argv[sys.argv.index("--wait-go") + 1] if "--wait-go" in sys.argv else None

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 2048), torch.nn.GELU(), torch.nn.LayerNorm(2048),
    torch.nn.Linear(2048, 2048), torch.nn.GELU(), torch.nn.LayerNorm(2048),
    torch.nn.Linear(2048, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 100)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
x = torch.randn(256, 1024, device="cuda")
y = torch.randint(0, 100, (256,), device="cuda")
loss = None


def step():
    global loss
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


for _ in range(5):
    step()
torch.cuda.synchronize()

if go:
    print("ready %d" % os.getpid(), flush=True)
    while not os.path.exists(go):
        time.sleep(0.002)


def steps():
    for _ in range(n):
        step()
    torch.cuda.synchronize()


t0 = time.perf_counter()
if profile_out:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        steps()
    rate = n / (time.perf_counter() - t0)
    path = profile_out + ".trace.json"
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    kernels = {}
    for e in events:
        if e.get("cat") == "kernel":
            k = kernels.setdefault(e["name"], {"total_s": 0.0, "count": 0})
            k["total_s"] += e.get("dur", 0) / 1e6
            k["count"] += 1
    with open(profile_out, "w") as f:
        json.dump({"kernels": kernels}, f)
else:
    steps()
    rate = n / (time.perf_counter() - t0)
print('RESULT {"steps": %d, "steps_per_s": %.2f}' % (n, rate), flush=True)
print("torch_gputime: ok %d checksum=%.6f" % (n, loss.item()), flush=True)
