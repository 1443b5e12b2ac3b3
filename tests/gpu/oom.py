#!/usr/bin/env python3
"""oom.py — the programs of scripts/gpu-oom (issue 35), on a real GPU with PyTorch.

  oom.py run MODE DIR      MODE: oom | frag | oomfree | uncaught | expoom | expfree | snapshot
    oom       a small MLP trained with Adam; after the warm-up it says "ready PID" and waits
              for DIR/go (gputop attaches meanwhile); two steps later one step allocates past
              the device's memory (torch.cuda.mem_get_info()) at the line marked OOM-LINE; the
              handler records memory_allocated(), memory_reserved() and _snapshot() (DIR/handler.*),
              waits 2 s (gputop's look comes within 10 ms), and the loop goes on; it prints the
              same lines traced or not ("loss N" of a seeded run, "oom caught") and exits 0.
    frag      fragmentation: a 2 GiB block cut into 64 MiB tensors, every other one freed (1 GiB
              free in one segment in 64 MiB holes), the rest of the device filled, then 512 MiB
              asked at OOM-LINE: no free block is large enough though enough bytes are free.
              The failing request is made on a side stream (torch.cuda.Stream()): the report must
              name it (DIR/stream).
    oomfree   as oom, with a 512 MiB tensor made after the warm-up (BALLAST-LINE) that the
              handler frees at once (and empties the cache) right after memory_allocated() and
              memory_reserved(): gputop's state must be the failing instant's (the tensor live).
    uncaught  as oom, but nothing catches the OutOfMemoryError: Python ends with status 1.
    expoom, expfree  as oom and oomfree with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True:
              the allocator maps pages (cuMemCreate) instead of calling cudaMalloc; the report
              must name the failed page and PyTorch's request (its "Tried to allocate").
    snapshot  tensors on every GPU (two if there are), then _snapshot() written to
              DIR/program.pickle and "snapshot" said; it then allocates nothing until DIR/stop.
  oom.py check-oom MODE DIR      PASS/FAIL lines: gputop's --oom-report (DIR/MODE.report) and
              --oom-snapshot (DIR/MODE.oom.pickle) against the handler's figures
  oom.py check-snapshot DIR      gputop's --memory-snapshot (DIR/gputop.pickle) against the
              program's _snapshot() at the same instant (segments and active blocks)
Without _record_memory_history(): PyTorch keeps no frames, gputop's --stacks allocs gives them."""
import json
import os
import pickle
import re
import sys
import time

MiB = 1 << 20


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.05)


def handler_record(d, e):
    import torch
    state = {"allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
             "message": str(e).splitlines()[0]}
    snap = torch.cuda.memory._snapshot()
    with open(os.path.join(d, "handler.pickle"), "wb") as f:
        pickle.dump(snap, f)
    with open(os.path.join(d, "handler.json"), "w") as f:
        json.dump(state, f)
    time.sleep(2)	# nothing changes while gputop looks


def run_oom(d, then="catch"):
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(256, 1024, device="cuda")

    def step():
        opt.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss.item()
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    print(f"ready {os.getpid()}", flush=True)
    wait_for(os.path.join(d, "go"))
    time.sleep(1)
    ballast = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda") if then == "free" else None  # BALLAST-LINE
    for i in range(6):
        loss = step()
        print(f"loss {loss:.6f}", flush=True)
        if i == 2:
            free, _ = torch.cuda.mem_get_info()
            want = free + (1 << 30)
            side = torch.cuda.Stream()	# the request's stream, which the report must name
            with open(os.path.join(d, "want"), "w") as f:
                f.write(str(want))
            with open(os.path.join(d, "stream"), "w") as f:
                f.write(str(side.cuda_stream))
            if then == "uncaught":
                with torch.cuda.stream(side):
                    big = torch.empty(want, dtype=torch.uint8, device="cuda")  # OOM-LINE-UNCAUGHT
            try:
                with torch.cuda.stream(side):
                    big = torch.empty(want, dtype=torch.uint8, device="cuda")  # OOM-LINE
                print("oom not reached", flush=True)
                del big
            except torch.OutOfMemoryError as e:
                if then == "free":	# the state of the instant, then the tensor gone at once
                    state = {"allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
                             "ballast": ballast.numel()}
                    del ballast
                    torch.cuda.empty_cache()
                    with open(os.path.join(d, "handler.json"), "w") as f:
                        json.dump(state, f)
                print("oom caught", flush=True)
                if then != "free":
                    handler_record(d, e)
    print("oom.py: ok", flush=True)


def run_expandable(d, then="catch"):
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"	# before torch reads it
    run_oom(d, then)


def run_frag(d):
    import torch
    a = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
    del a	# a 2 GiB segment, cached
    parts = [torch.empty(64 * MiB, dtype=torch.uint8, device="cuda") for _ in range(32)]
    for i in range(0, 32, 2):
        parts[i] = None	# 1 GiB free in 64 MiB holes of that segment
    free, _ = torch.cuda.mem_get_info()
    filler = torch.empty(max(free - 256 * MiB, 0), dtype=torch.uint8, device="cuda")
    print(f"ready {os.getpid()}", flush=True)
    wait_for(os.path.join(d, "go"))
    time.sleep(1)
    want = 512 * MiB
    try:
        big = torch.empty(want, dtype=torch.uint8, device="cuda")  # OOM-LINE
        print("oom not reached", flush=True)
        del big
    except torch.OutOfMemoryError as e:
        print("oom caught", flush=True)
        with open(os.path.join(d, "want"), "w") as f:
            f.write(str(want))
        handler_record(d, e)
    del filler, parts
    print("oom.py: ok", flush=True)


def run_snapshot(d):
    import torch
    keep = []
    for dev in range(min(torch.cuda.device_count(), 2)):
        with torch.cuda.device(dev):
            for size in (1000, 3 * MiB + 1, 12 * MiB, 100 * MiB, 70000):
                keep.append(torch.empty(size, dtype=torch.uint8, device=f"cuda:{dev}"))
            gone = torch.empty(5 * MiB, dtype=torch.uint8, device=f"cuda:{dev}")
            del gone
    torch.cuda.synchronize()
    print(f"ready {os.getpid()}", flush=True)
    wait_for(os.path.join(d, "go"))
    with open(os.path.join(d, "program.pickle"), "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)
    print("snapshot", flush=True)
    wait_for(os.path.join(d, "stop"))
    print("oom.py: ok", flush=True)


def verdict(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)


def active(snap):
    return sorted((s["device"], b["address"], b["size"]) for s in snap["segments"] for b in s["blocks"]
                  if b["state"] == "active_allocated")


def check_oom(mode, d):
    report = open(os.path.join(d, f"{mode}.report")).read()
    want = int(open(os.path.join(d, "want")).read())
    mark = "# OOM-LINE-UNCAUGHT" if mode == "uncaught" else "# OOM-LINE"
    line = next(i + 1 for i, text in enumerate(open(__file__)) if text.rstrip().endswith(mark)
                and _in_mode(i, "frag" if mode == "frag" else "oom"))
    verdict("state: read at the failure's instant" in report, f"{mode}: the report's state is the failing instant's")
    m = re.search(r"^request: (\d+) bytes, GPU (\d+), (\w+), error (\d+), at (.*)$", report, re.M)
    verdict(bool(m) and int(m[1]) >= want, f"{mode}: the report names the request: {m[1] if m else None} bytes "
            f">= the {want} asked")
    handler_json = os.path.join(d, "handler.json")
    message = json.load(open(handler_json)).get("message", "") if os.path.exists(handler_json) else ""
    tried = re.search(r"Tried to allocate (\S+ \S+?)\.? GPU", message) or re.search(r"Tried to allocate (\S+ \w+)", message)
    if m and tried:	# c10's format_size: two decimals of KiB, MiB or GiB
        verdict(format_size(int(m[1])) == tried[1], f"{mode}: the request as PyTorch's message says it: "
                f"{format_size(int(m[1]))} == \"Tried to allocate {tried[1]}\"")
    if mode.startswith("exp"):
        page = re.search(r"^page: the failed (\w+) made one (\d+)-byte page", report, re.M)
        verdict(bool(page) and page[1] == "cuMemCreate" and bool(m) and m[3] == "cuMemCreate"
                and "the request's bytes are PyTorch's" in report,
                f"{mode}: the failed call is an expandable segment's page (cuMemCreate, "
                f"{page[2] if page else None} bytes) and the request PyTorch's")
    verdict(bool(m) and f"oom.py:{line}" in m[5], f"{mode}: ... at the line that asked (oom.py:{line}; {m[5] if m else None})")
    verdict("PyTorch's allocator gave up" in report, f"{mode}: PyTorch's allocator gave up, said")
    if os.path.exists(os.path.join(d, "stream")):
        stream = int(open(os.path.join(d, "stream")).read())
        m = re.search(r"^stream: (0x[0-9a-f]+|0) ", report, re.M)
        verdict(bool(m) and int(m[1], 16) == stream, f"{mode}: the request's stream {m[1] if m else None} == "
                f"the side stream it was asked on ({stream:#x})")
    if mode == "uncaught":	# nothing to compare with: no handler ran
        verdict(os.path.getsize(os.path.join(d, f"{mode}.oom.pickle")) > 0, f"{mode}: --oom-snapshot written")
        return
    state = json.load(open(os.path.join(d, "handler.json")))
    m = re.search(r"^allocator: reserved (\d+), allocated (\d+)", report, re.M)
    verdict(bool(m) and int(m[2]) == state["allocated"], f"{mode}: allocated {m[2] if m else None} == "
            f"memory_allocated() in the handler {state['allocated']}")
    verdict(bool(m) and int(m[1]) == state["reserved"], f"{mode}: reserved {m[1] if m else None} == "
            f"memory_reserved() in the handler {state['reserved']}")
    by_line = sum(int(x) for x in re.findall(r"^ +(\d+) +\d+  ", report, re.M))
    verdict(by_line == state["allocated"], f"{mode}: live bytes by line sum to memory_allocated() ({by_line})")
    if mode in ("oomfree", "expfree"):
        big = re.search(r"^  +0x[0-9a-f]+ +(\d+) +(\d+)  .*oom.py:(\d+)", report, re.M)
        ballast_line = next(i + 1 for i, text in enumerate(open(__file__)) if text.rstrip().endswith("# BALLAST-LINE"))
        verdict(bool(big) and int(big[2]) == state["ballast"] and int(big[3]) == ballast_line,
                f"{mode}: the tensor freed in the handler is the report's largest block, live, at its line "
                f"(oom.py:{ballast_line}; {big[0].strip() if big else None})")
        return
    handler = pickle.load(open(os.path.join(d, "handler.pickle"), "rb"))
    ours = pickle.load(open(os.path.join(d, f"{mode}.oom.pickle"), "rb"))
    verdict(active(ours) == active(handler), f"{mode}: --oom-snapshot's active blocks == the handler's _snapshot() "
            f"({len(active(ours))} and {len(active(handler))})")
    frag = "verdict: fragmentation" in report
    verdict(frag == (mode == "frag"), f"{mode}: {'fragmentation' if mode == 'frag' else 'not fragmentation'} said")


def format_size(n):
    if n <= 1024:
        return f"{n} bytes"
    for unit, scale in (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)):
        if n <= scale << 10 or unit == "GiB":
            return f"{n / scale:.2f} {unit}"


def _in_mode(i, mode):
    """Whether line i+1 of this file lies in run_MODE."""
    lines = open(__file__).read().splitlines()[:i + 1]
    defs = [text for text in lines if text.startswith("def ")]
    return defs and defs[-1].startswith(f"def run_{mode}(")


def check_snapshot(d):
    ours = pickle.load(open(os.path.join(d, "gputop.pickle"), "rb"))
    theirs = pickle.load(open(os.path.join(d, "program.pickle"), "rb"))
    seg = lambda s: sorted((x["device"], x["address"], x["total_size"]) for x in s["segments"])
    verdict(seg(ours) == seg(theirs), f"snapshot: segments == _snapshot()'s ({len(seg(ours))} and {len(seg(theirs))})")
    verdict(active(ours) == active(theirs), f"snapshot: active blocks == _snapshot()'s ({len(active(ours))} and "
            f"{len(active(theirs))})")
    devices = {x["device"] for x in ours["segments"]}
    verdict(len(devices) == len({x["device"] for x in theirs["segments"]}), f"snapshot: on {len(devices)} GPU(s)")
    framed = [b for s in ours["segments"] for b in s["blocks"] if b["state"] == "active_allocated" and b["frames"]]
    verdict(len(framed) == 0, "snapshot: blocks from before the attach without frames (all were)")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "run":
        {"oom": run_oom, "frag": run_frag, "snapshot": run_snapshot, "oomfree": lambda d: run_oom(d, "free"),
         "uncaught": lambda d: run_oom(d, "uncaught"), "expoom": run_expandable,
         "expfree": lambda d: run_expandable(d, "free")}[sys.argv[2]](sys.argv[3])
    elif what == "check-oom":
        check_oom(sys.argv[2], sys.argv[3])
    elif what == "check-snapshot":
        check_snapshot(sys.argv[2])
