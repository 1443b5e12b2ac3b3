"""dump_ddp.py — a data-parallel training loop for scripts/gpu-dump (issue 34), one rank of
`torchrun --nproc_per_node 2`: a small MLP on each rank's GPU, its flattened gradients averaged
with one dist.all_reduce per step, then the loss averaged with a second one (the script's own
count of collectives: 2 a step, nothing else after the start).

Each rank prints "ready <pid>" once NCCL is up (its warm-up collective made), waits for the file
GO, then makes STEPS steps, the first 30 ending with DUMP_STEP_MS (20) ms in Python (quiet
moments between collectives, where gputop looks for NCCL's own counter). At step STALL, rank 1
prints "COUNT rank 1 collectives N total T" and "waiting <pid>", then waits in Python, in
wait_for_release() at the line marked "@site release", for the file RELEASE before its loss
all_reduce; rank 0, which made that all_reduce (it returns at once: NCCL enqueues), prints its
COUNT line and then blocks in loss.item() (a copy and a synchronize) until rank 1 joins. N counts
the collectives each rank called since GO, T every collective of its communicator, the warm-up
one included (what NCCL's own counter should say). At the end: "LOSS rank R <loss of every step,
6 decimals>", printed and written to the file OUTDIR/loss.R (each rank's own record: the ranks
share torchrun's stdout, and the script compares rank with rank).

With DUMP_SLOW_RANK=R and DUMP_SLOW_MS=M, rank R sleeps M ms in Python after every step: the
straggler the others wait for (STALL 0: no stall).

Usage: torchrun --standalone --nproc_per_node 2 dump_ddp.py STEPS STALL GO RELEASE OUTDIR"""
import os
import sys
import time

import torch
import torch.distributed as dist

steps, stall, go, release, outdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl")
world = dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator(device="cuda").manual_seed(1 + rank)
x = torch.randn(64, 256, device="cuda", generator=g)
y = torch.randint(0, 10, (64,), device="cuda", generator=g)
warm = torch.ones(1, device="cuda")
dist.all_reduce(warm)  # NCCL's communicator made before gputop attaches
torch.cuda.synchronize()
print("ready %d" % os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)


def wait_for_release():
    print("waiting %d" % os.getpid(), flush=True)
    while not os.path.exists(release):
        time.sleep(0.01)  # @site release


step_s = float(os.environ.get("DUMP_STEP_MS", "20")) / 1000.0
slow_s = float(os.environ.get("DUMP_SLOW_MS", "0")) / 1000.0 if os.environ.get("DUMP_SLOW_RANK") == str(rank) else 0.0
collectives, losses = 0, []
for step in range(1, steps + 1):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    dist.all_reduce(flat)
    collectives += 1
    flat /= world
    at = 0
    for p in model.parameters():
        p.grad.copy_(flat[at:at + p.numel()].view_as(p))
        at += p.numel()
    opt.step()
    total = loss.detach().clone()
    if step == stall and rank == 1:
        print("COUNT rank %d collectives %d total %d" % (rank, collectives, collectives + 1), flush=True)
        wait_for_release()
    dist.all_reduce(total)
    collectives += 1
    if step == stall and rank == 0:
        print("COUNT rank %d collectives %d total %d" % (rank, collectives, collectives + 1), flush=True)
    losses.append(total.item() / world)  # rank 0 waits here at the stall
    if step <= 30:
        time.sleep(step_s)
    if slow_s:
        time.sleep(slow_s)  # @site straggle
line = "LOSS rank %d %s" % (rank, " ".join("%.6f" % v for v in losses))
with open(os.path.join(outdir, "loss.%d" % rank), "w") as f:
    f.write(line + "\n")
print(line, flush=True)
dist.destroy_process_group()
