# ddp_train.py — a DDP training loop (an MLP, Adam, NCCL) for the edges of a run: how long a
# job takes to start, to make its first step and to end, traced or not (scripts/gpu-scale).
# usage: torchrun --nproc_per_node N ddp_train.py STEPS LOGDIR [--hold PHASE:SECONDS]
#
# Each rank appends to LOGDIR/rank<R>.log, flushed, with time.time() stamps:
#   PID <pid>
#   PPID <pid>          its parent: torchrun's agent
#   PHASE <name> <t>    start (before import torch), torch (imported), cuda (first CUDA call
#                       done), pg (init_process_group returned), ddp (the DDP model built:
#                       NCCL's communicator is made there), first (first step done),
#                       last (last step done), end (process group destroyed)
#   STEP <i> <t>        after every step (synchronized)
#   RESULT {"rank", "steps", "loss", "checksum", "max_gap"}
# --hold PHASE:SECONDS  rank 0 sleeps SECONDS before the phase PHASE (pg or ddp): the other
#                       ranks wait meanwhile inside init_process_group's rendezvous or inside
#                       DDP's construction (ncclCommInitRank), so that gputop can attach to
#                       them there.
import json
import os
import sys
import time

T_START = time.time()
steps = int(sys.argv[1])
logdir = sys.argv[2]
hold = {}
if "--hold" in sys.argv:
    name, secs = sys.argv[sys.argv.index("--hold") + 1].split(":")
    hold[name] = float(secs)
rank = int(os.environ.get("RANK", "0"))
log = open(os.path.join(logdir, "rank%d.log" % rank), "a", buffering=1)


def say(line):
    log.write(line + "\n")
    log.flush()


def phase(name, t=None):
    if rank == 0 and name in hold:
        time.sleep(hold[name])
    say("PHASE %s %.6f" % (name, time.time() if t is None else t))


say("PID %d" % os.getpid())
say("PPID %d" % os.getppid())	# the launcher's agent
phase("start", T_START)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

phase("torch")
local = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local)
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
phase("cuda")
if "pg" in hold and rank == 0:
    time.sleep(hold.pop("pg"))
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
phase("pg")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048),
                            torch.nn.ReLU(), torch.nn.Linear(2048, 10)).cuda()
if "ddp" in hold and rank == 0:
    time.sleep(hold.pop("ddp"))
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
phase("ddp")
opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
g = torch.Generator(device="cuda").manual_seed(rank)
x = torch.randn(256, 1024, device="cuda", generator=g)
y = torch.randint(0, 10, (256,), device="cuda", generator=g)
loss = None
prev = None
max_gap = 0.0
for i in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(ddp(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    now = time.time()
    say("STEP %d %.6f" % (i, now))
    if prev is not None:
        max_gap = max(max_gap, now - prev)
    prev = now
    if i == 0:
        phase("first", now)
phase("last", prev)
checksum = float(sum(p.double().sum() for p in model.parameters()))
say("RESULT " + json.dumps({"rank": rank, "steps": steps, "loss": loss.item(), "checksum": checksum,
                            "max_gap": round(max_gap, 4)}))
dist.destroy_process_group()
phase("end")
