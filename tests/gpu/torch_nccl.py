# torch_nccl.py — known NCCL collectives from torch.distributed (backend nccl), for gputop's GPU
# check of issue 11 (scripts/gpu-comm). Run under torchrun: one rank per GPU (world size 1 runs
# the collectives on one GPU too; point-to-point needs 2 ranks).
# usage: torch_nccl.py STEPS [--wait-go FILE] [--wait-end FILE]
#
# Set-up: the rank's device, init_process_group("nccl", device_id=...) and one warm-up all_reduce
# (which makes the communicator). Then STEPS steps, each:
#   all_reduce        float32, n = 1024 x (1 + step % 4) elements
#   broadcast         333 float16 from rank 0
#   all_gather_into_tensor   256 bfloat16 per rank (NCCL's sendcount)
#   reduce_scatter_tensor    128 float32 per rank (NCCL's recvcount; counted with 2 ranks or more:
#                     with one, PyTorch 2.11 makes no ncclReduceScatter call)
#   reduce            the all_reduce's tensor to rank 0
#   with 2 ranks or more: send n float32 to rank+1 and recv from rank-1 (batch_isend_irecv)
# and counts what it asked NCCL for (calls and bytes = count x the datatype's size, per op), in
# the format of tests/progs/nccl_job.c's account. It ends with one line
#   RESULT {"pid", "rank", "nranks", "local_rank", "collectives": {op: {calls, bytes}},
#           "p2p": [...], "checksum"}
# --wait-go FILE   after the warm-up, print "ready PID" and wait for FILE: gputop -p attaches
#                  there and sees exactly the steps' collectives.
# --wait-end FILE  after RESULT, wait for FILE before destroying the process group (gputop
#                  detaches first: nothing of the shutdown in its figures).
import json
import os
import sys
import time

import torch
import torch.distributed as dist

steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 50
go = sys.argv[sys.argv.index("--wait-go") + 1] if "--wait-go" in sys.argv else None
end = sys.argv[sys.argv.index("--wait-end") + 1] if "--wait-end" in sys.argv else None

rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
local = int(os.environ.get("LOCAL_RANK", "0"))
dev = torch.device("cuda", local)
torch.cuda.set_device(dev)
dist.init_process_group("nccl", device_id=dev)
warm = torch.ones(1, device=dev)
dist.all_reduce(warm)
torch.cuda.synchronize()


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.05)


if go:
    print("ready", os.getpid(), flush=True)
    wait_for(go)

issued = {}
p2p = {}


def note(op, count, dtype):
    c = issued.setdefault(op, {"calls": 0, "bytes": 0})
    c["calls"] += 1
    c["bytes"] += count * torch.tensor([], dtype=dtype).element_size()


torch.manual_seed(1234 + rank)
checksum = 0.0
for step in range(steps):
    n = 1024 * (1 + step % 4)
    t = torch.randn(n, device=dev)
    dist.all_reduce(t)
    note("AllReduce", n, torch.float32)
    b = torch.full((333,), float(step), dtype=torch.float16, device=dev)
    dist.broadcast(b, src=0)
    note("Broadcast", 333, torch.float16)
    inp = torch.full((256,), float(rank), dtype=torch.bfloat16, device=dev)
    out = torch.empty(256 * world, dtype=torch.bfloat16, device=dev)
    dist.all_gather_into_tensor(out, inp)
    note("AllGather", 256, torch.bfloat16)
    rs_in = torch.ones(128 * world, device=dev)
    rs_out = torch.empty(128, device=dev)
    dist.reduce_scatter_tensor(rs_out, rs_in)
    if world > 1:	# with one rank PyTorch 2.11 makes no ncclReduceScatter call (H100, attached: 0 calls)
        note("ReduceScatter", 128, torch.float32)
    dist.reduce(t, dst=0)
    note("Reduce", n, torch.float32)
    if world > 1:
        nxt, prv = (rank + 1) % world, (rank + world - 1) % world
        recv = torch.empty(n, device=dev)
        for req in dist.batch_isend_irecv([dist.P2POp(dist.isend, t, nxt), dist.P2POp(dist.irecv, recv, prv)]):
            req.wait()
        note("Send", n, torch.float32)
        note("Recv", n, torch.float32)
        key = (local, (local + 1) % world)	# one node: rank r on GPU r
        e = p2p.setdefault(key, {"calls": 0, "bytes": 0})
        e["calls"] += 1
        e["bytes"] += n * 4
        checksum += float(recv.sum())
    checksum += float(t.sum()) + float(out.float().sum()) + float(rs_out.sum()) + float(b.float().sum())
torch.cuda.synchronize()
# One write(2) for the whole line: the ranks share torchrun's stdout, and a line print() wrote
# in pieces (longer than its buffer) lost one rank's RESULT to the other's now and then.
sys.stdout.flush()
os.write(1, ("RESULT " + json.dumps({
    "pid": os.getpid(), "rank": rank, "nranks": world, "local_rank": local, "collectives": issued,
    "p2p": [{"src_device": s, "dst_device": d, **v} for (s, d), v in sorted(p2p.items())],
    "checksum": round(checksum, 3)}) + "\n").encode())
if end:
    wait_for(end)
dist.destroy_process_group()
