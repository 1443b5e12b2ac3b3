#!/usr/bin/env python3
"""torch_snapshot_check.py SNAPSHOT PROGRAM_OUTPUT MODE — checks gputop's --memory-snapshot file
against what the SIMULATED allocator printed of itself (simtorch_print_snapshot) at the same
instant, and against what torch.cuda._memory_viz's readers (stats/segsum, segments, trace,
segment_plot) take from a _snapshot(): the keys they read and the sums they assert. Prints TAP-like
"ok - ..." / "not ok - ..." lines; the caller counts them. The pickle is read by Python's own
pickle module (a _snapshot() holds only dicts, lists, tuples, ints, strings, bools, floats: no
PyTorch class to stand in for)."""
import pickle
import re
import sys

snap_path, out_path, mode = sys.argv[1:4]
failures = 0


def check(ok, what):
    global failures
    print(("ok - " if ok else "not ok - ") + what)
    failures += not ok


with open(snap_path, "rb") as f:
    data = pickle.load(f)

# What the simulated allocator said of itself, its segments in address order.
sim = []
for line in open(out_path):
    m = re.match(r"simtorch: segment 0x([0-9a-f]+) (\d+) (\d+) (\w+) (\w+)$", line)
    if m:
        sim.append({"address": int(m[1], 16), "total_size": int(m[2]), "allocated_size": int(m[3]),
                    "segment_type": m[4], "is_expandable": m[5] == "expandable", "blocks": []})
        continue
    m = re.match(r"simtorch: block 0x([0-9a-f]+) (\d+) (\d+) (\w+)$", line)
    if m:
        sim[-1]["blocks"].append({"address": int(m[1], 16), "size": int(m[2]), "requested_size": int(m[3]),
                                  "state": m[4]})
check(len(sim) >= (2 if mode == "expandable" else 3), f"{mode}: the program printed its segments ({len(sim)})")
if mode == "default":
    check(any(s["allocated_size"] == 0 for s in sim),
          f"{mode}: one of them holds no block handed out (read from the pool's std::set alone)")

check(isinstance(data, dict) and set(data) >= {"segments", "device_traces", "allocator_settings"},
      f"{mode}: a dict with segments, device_traces, allocator_settings")
segs = data.get("segments", [])
seg_keys = {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
            "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"}
block_keys = {"address", "size", "requested_size", "state", "frames"}
check(all(set(s) == seg_keys for s in segs), f"{mode}: every segment has _snapshot()'s keys")
check(all(set(b) == block_keys for s in segs for b in s["blocks"]), f"{mode}: every block has _snapshot()'s keys")
check(all(isinstance(s["segment_pool_id"], tuple) and len(s["segment_pool_id"]) == 2 for s in segs),
      f"{mode}: segment_pool_id is a pair, as PyTorch pickles it")

# The same segments and blocks, in the same order, as the allocator's own books.
got = [{"address": s["address"], "total_size": s["total_size"], "allocated_size": s["allocated_size"],
        "segment_type": s["segment_type"], "is_expandable": s["is_expandable"],
        "blocks": [{k: b[k] for k in ("address", "size", "requested_size", "state")} for b in s["blocks"]]}
       for s in segs]
check(got == sim, f"{mode}: segments and blocks equal the allocator's own ({len(sim)} segments, "
      f"{sum(len(s['blocks']) for s in sim)} blocks)")
if got != sim:
    print("# gputop:", got, "\n# program:", sim)

# What _memory_viz's segsum asserts of each segment, and the blocks it walks by offset.
for s in segs:
    blocks = s["blocks"]
    internal = sum(b["size"] - b["requested_size"] for b in blocks if b["state"] == "active_allocated")
    allocated = sum(b["requested_size"] for b in blocks if b["state"] == "active_allocated")
    external = sum(b["size"] for b in blocks if b["state"] != "active_allocated")
    if internal + allocated + external != s["total_size"]:
        check(False, f"{mode}: segment {s['address']:#x}: free + allocated = total_size")
        break
    if any(b["address"] != s["address"] + sum(x["size"] for x in blocks[:i]) for i, b in enumerate(blocks)):
        check(False, f"{mode}: segment {s['address']:#x}: blocks back to back from the segment's address")
        break
else:
    check(True, f"{mode}: each segment's blocks add up to it, back to back (what segsum asserts)")
check(all(s["allocated_size"] == sum(b["size"] for b in s["blocks"] if b["state"] == "active_allocated")
          for s in segs), f"{mode}: allocated_size sums the active blocks")
check(isinstance(data["device_traces"], list) and len(data["device_traces"]) >= 1
      and all(t == [] for t in data["device_traces"]), f"{mode}: device_traces: one empty list per device")
conf = data["allocator_settings"]
check(conf.get("expandable_segments") == (mode == "expandable")
      and conf.get("PYTORCH_CUDA_ALLOC_CONF") == ("expandable_segments:True" if mode == "expandable" else ""),
      f"{mode}: allocator_settings from PYTORCH_CUDA_ALLOC_CONF")

# Frames: with --stacks allocs, the blocks made after the attach name their line; those from
# before it have none.
active = [b for s in segs for b in s["blocks"] if b["state"] == "active_allocated"]
framed = [b for b in active if b["frames"]]
check(all(set(f) == {"filename", "line", "name"} for b in active for f in b["frames"]),
      f"{mode}: frames are {{filename, line, name}}")
before = {12 * 1048576 + 0, 3 * 1048576 + 1}	# requested before the attach (torch_blocks' A)
check(all(not b["frames"] for b in active if b["requested_size"] in before)
      and all(b["frames"] for b in active if b["requested_size"] not in before),
      f"{mode}: blocks from before the attach without frames, the others with ({len(framed)})")
check(any(f["filename"].endswith("torch_blocks.c") and f["name"] in ("make_big",) for b in framed
          for f in b["frames"]), f"{mode}: the 100 MiB block's frames name make_big in torch_blocks.c")
sys.exit(1 if failures else 0)
