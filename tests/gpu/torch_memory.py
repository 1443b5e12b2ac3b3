"""torch_memory.py — issue 27's acceptance on a GPU: a training loop with known tensors, for
scripts/gpu-torch-memory; and the check of gputop's torch_memory against what PyTorch says.

Run:   torch_memory.py run --mode eager|compile [--history] --state FILE --stop FILE
  A small MLP (Adam) trains; torch.compile(mode="reduce-overhead") compiles it with CUDA graphs
  in compile mode; PYTORCH_CUDA_ALLOC_CONF (expandable_segments:True or not) is the caller's.
  After a warm-up of WARMUP steps it prints "ready PID" (gputop attaches then). Each step also
  makes the big tensor anew, at the line marked "@site big" (BIG bytes, the largest live block,
  and made after the attach so that its stack is taken). On SIGUSR1, at the end of the step
  it is in: synchronize, then what PyTorch says -- memory_allocated(), memory_reserved(), and
  torch.cuda.memory._snapshot()'s live blocks, largest first -- into --state FILE; prints
  "quiet" and allocates nothing for QUIET seconds (gputop is stopped meanwhile, so that its
  last figures are of that very instant). It ends when --stop FILE exists:
  "torch_memory: ok steps=N loss=X". --history: torch.cuda.memory._record_memory_history() from
  the start (the oracle run: the snapshot's blocks then carry the frames that made them).
Check: torch_memory.py check LABEL GPUTOP.json STATE.json
  PASS/FAIL lines: the allocator followed, blocks before the attach read, live blocks ==
  memory_allocated() exactly, reserved == memory_reserved(), the allocator's own count agrees,
  the largest blocks (address, size) == the snapshot's, the top Python line by live bytes is the
  "@site big" line, no free of an unknown block, every block read; --history: the snapshot's
  largest block was made at that line too.
Needs python3 and torch only."""
import json
import os
import signal
import sys
import time

WARMUP = 30
BIG = int(os.environ.get("TORCH_MEMORY_BIG_MIB", "768")) << 20  # bytes: more than the model,
# its gradients and Adam's state together
QUIET = float(os.environ.get("TORCH_MEMORY_QUIET", "6"))  # seconds without an allocation after a report
TOP = 10            # largest blocks compared


def big_line():
    with open(os.path.abspath(__file__)) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# @site big"):
                return i
    return None


def snapshot_blocks(torch, device):
    """The snapshot's live blocks of device: [{address, size, requested, line}], largest first."""
    snap = torch.cuda.memory._snapshot()
    blocks = []
    for seg in snap["segments"]:
        if seg.get("device", device) != device:
            continue
        addr = seg["address"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                frames = b.get("frames") or []
                py = [f for f in frames if str(f.get("filename", "")).endswith(".py")]
                blocks.append({"address": b.get("address", addr), "size": b["size"],
                               "requested": b.get("requested_size"),
                               "line": py[0]["line"] if py else None,
                               "file": py[0]["filename"] if py else None})
            addr += b["size"]
    blocks.sort(key=lambda b: (-b["size"], b["address"]))
    return blocks


def run(args):
    import torch
    mode = args[args.index("--mode") + 1]
    state_path = args[args.index("--state") + 1]
    stop = args[args.index("--stop") + 1]
    if "--history" in args:
        torch.cuda.memory._record_memory_history(max_entries=200000)
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048),
                                torch.nn.ReLU(), torch.nn.Linear(2048, 512)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    forward = torch.compile(model, mode="reduce-overhead") if mode == "compile" else model
    x = torch.randn(256, 1024, device=dev)
    y = torch.randn(256, 512, device=dev)

    def step():
        if mode == "compile":
            torch.compiler.cudagraph_mark_step_begin()
        loss = torch.nn.functional.mse_loss(forward(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(WARMUP):
        loss = step()
    torch.cuda.synchronize()
    asked = []
    signal.signal(signal.SIGUSR1, lambda *_: asked.append(1))
    print("ready %d" % os.getpid(), flush=True)
    big = None
    steps = 0
    while not os.path.exists(stop):
        loss = step()
        big = None
        big = torch.empty(BIG, dtype=torch.uint8, device=dev)  # @site big
        steps += 1
        if asked:
            asked.clear()
            torch.cuda.synchronize()
            device = torch.cuda.current_device()
            state = {"device": device, "allocated": torch.cuda.memory_allocated(device),
                     "reserved": torch.cuda.memory_reserved(device), "big_line": big_line(),
                     "file": os.path.abspath(__file__), "big_bytes": big.numel(), "mode": mode,
                     "expandable": "expandable_segments:True" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                     "torch": torch.__version__}
            blocks = snapshot_blocks(torch, device)
            state["snapshot_allocated"] = sum(b["size"] for b in blocks)
            state["snapshot_blocks"] = len(blocks)
            state["blocks"] = blocks[:TOP]
            with open(state_path + ".tmp", "w") as f:
                json.dump(state, f)
            os.rename(state_path + ".tmp", state_path)
            print("quiet", flush=True)
            time.sleep(QUIET)
    torch.cuda.synchronize()
    print("torch_memory: ok steps=%d loss=%.6f" % (steps, float(loss)), flush=True)


def check(args):
    label, gj, sj = args[0], args[1], args[2]
    g = json.load(open(gj))
    s = json.load(open(sj))
    tm = g.get("torch_memory") or {}
    out = []

    def verdict(ok, what, detail=""):
        out.append("%s %s: %s%s" % ("PASS" if ok else "FAIL", label, what, "" if ok else " (%s)" % detail))

    verdict(tm.get("state") == "tracking", "the caching allocator is followed",
            "state %s: %s" % (tm.get("state"), tm.get("message")))
    verdict(tm.get("blocks_before_attach") == "read" and tm.get("before_attach_blocks", 0) > 0,
            "the blocks live before the attach read (%s)" % tm.get("before_attach_blocks"),
            "%s: %s" % (tm.get("blocks_before_attach"), tm.get("message")))
    dev = [d for d in tm.get("devices", []) if d.get("device") == s["device"]]
    d = dev[0] if dev else {}
    verdict(d.get("allocated_bytes") == s["allocated"],
            "live blocks = memory_allocated() = %d" % s["allocated"], "gputop %s" % d.get("allocated_bytes"))
    verdict(d.get("reserved_bytes") == s["reserved"],
            "reserved = memory_reserved() = %d" % s["reserved"], "gputop %s" % d.get("reserved_bytes"))
    verdict(d.get("allocator_allocated_bytes") == s["allocated"] and d.get("agrees") is True,
            "the allocator's own count read, and it agrees",
            "allocator %s, agrees %s" % (d.get("allocator_allocated_bytes"), d.get("agrees")))
    verdict(s["snapshot_allocated"] == s["allocated"], "(the oracle) _snapshot()'s live blocks sum to memory_allocated()",
            "snapshot %d" % s["snapshot_allocated"])
    mine = [(int(b["address"], 16), b["bytes"]) for b in tm.get("largest_blocks", [])[:TOP]]
    theirs = [(b["address"], b["size"]) for b in s["blocks"][:TOP]]
    verdict(mine == theirs, "the %d largest blocks (address, size) = _snapshot()'s" % len(theirs),
            "gputop %s, snapshot %s" % (mine[:4], theirs[:4]))
    lines = [x for x in tm.get("by_line", []) if x.get("site") and x["site"].get("python")]
    top = lines[0] if lines else {}
    site = top.get("site") or {}
    if "--stacks" in args[3:]:  # lines only where stacks were asked for
      verdict(site.get("line") == s["big_line"] and str(site.get("file", "")).endswith(os.path.basename(s["file"]))
              and top.get("live_bytes", 0) >= s["big_bytes"],
              "top Python line by live bytes: line %s, the big tensor's" % s["big_line"],
              "gputop's top: %s:%s %s bytes" % (site.get("file"), site.get("line"), top.get("live_bytes")))
    # A block handed out while the calls' ring was full is dropped and counted (lost), never
    # waited for: its free is then unknown. So is the block of a thread held inside a free or
    # an allocation while the blocks before the attach were read (one at most a thread held
    # then, threads_at_read). Nothing else may be.
    lost = sum(r.get("lost", 0) for r in g.get("api", []) if r.get("layer") == "torch")
    held = tm.get("threads_at_read", 0) if tm.get("blocks_before_attach") == "read" else 0
    verdict(tm.get("unknown_frees", 1) <= lost + held and tm.get("unread_blocks") == 0,
            "every free of a known block but for blocks the full ring dropped (%d, counted) or in flight at "
            "the attach (at most %d threads held), every block read" % (lost, held),
            "unknown frees %s, unread %s" % (tm.get("unknown_frees"), tm.get("unread_blocks")))
    if any(b.get("line") for b in s["blocks"]):
        verdict(s["blocks"][0]["line"] == s["big_line"], "(the oracle) _snapshot()'s history: the largest block made "
                "at line %s" % s["big_line"], "history says line %s" % s["blocks"][0]["line"])
    for line in out:
        print(line)
    return 0 if all(line.startswith("PASS") for line in out) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        run(sys.argv[2:])
    elif len(sys.argv) > 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2:]))
    else:
        sys.exit(__doc__)
