# torch_train.py — a small training loop (3 Linear layers, Adam), for gputop's GPU checks.
# usage: torch_train.py STEPS [--profile] [--wait-go FILE]
import os, sys, time
import torch
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                            torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(64, 256, device=dev); y = torch.randint(0, 10, (64,), device=dev)
def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward(); opt.step()
    return loss
for _ in range(20): step()
torch.cuda.synchronize()
if "--wait-go" in sys.argv:
    go = sys.argv[sys.argv.index("--wait-go") + 1]
    print("ready", os.getpid(), flush=True)
    while not os.path.exists(go): time.sleep(0.01)
if "--profile" in sys.argv:
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps): step()
        torch.cuda.synchronize()
    counts = {}
    for e in prof.events():
        if e.name in ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"):
            counts[e.name] = counts.get(e.name, 0) + 1
    print("profiler", counts, "total", sum(counts.values()), flush=True)
t0 = time.time()
for _ in range(steps): loss = step()
torch.cuda.synchronize()
dt = time.time() - t0
print(f"steps {steps} {steps/dt:.1f} steps/s loss {loss.item():.4f} reserved {torch.cuda.memory_reserved()} allocated {torch.cuda.memory_allocated()}", flush=True)
