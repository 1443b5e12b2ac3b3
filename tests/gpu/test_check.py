#!/usr/bin/env python3
"""test_check.py — tests of check.py's comparisons on FAKE results (no GPU, no gputop needed):
bandwidth within and beyond 10%, PyTorch launches within and beyond 1%, memory by caller, kernel
names, missing and broken files. usage: python3 tests/gpu/test_check.py (exit 0 if all pass)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = [sys.executable, os.path.join(HERE, "check.py")]
MiB = 1 << 20
failures = 0


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def rows_of(results):
    with open(results) as f:
        return [json.loads(l) for l in f]


def verdict(rows, fragment):
    hits = [r for r in rows if fragment in r["check"]]
    if len(hits) != 1:
        raise AssertionError("%d rows match %r" % (len(hits), fragment))
    return hits[0]["verdict"]


def expect(what, got, want):
    global failures
    if got == want:
        print("ok - %s" % what)
    else:
        failures += 1
        print("not ok - %s: got %r, want %r" % (what, got, want))


def transfer(kind, calls, nbytes, seconds):
    return {"kind": kind, "calls": calls, "bytes": nbytes, "seconds": seconds, "gbps": nbytes / seconds / 1e9,
            "sync": {"calls": calls, "bytes": nbytes, "seconds": seconds},
            "async": {"calls": 0, "bytes": 0, "seconds": 0}}


def bandwidth_case(d, name, prog_h2d, gputop_h2d_seconds, mode="launch"):
    total = 3 * (64 + 256) * MiB
    expect_line = ("EXPECT {\"program\": \"bandwidth\", \"setup\": {\"api\": {\"cudaMallocHost\": 1, \"cudaMalloc\": 1},"
                   " \"allocations\": 2, \"leaks\": [{\"kind\": \"host\", \"bytes\": %d, \"api\": \"cudaMallocHost\"},"
                   " {\"kind\": \"device\", \"bytes\": %d, \"api\": \"cudaMalloc\"}]},"
                   " \"measured\": {\"transfers\": {\"H2D\": {\"sync\": [6, %d]}, \"D2H\": {\"sync\": [6, %d]}},"
                   " \"synchronize\": 12, \"api\": {\"cudaMemcpy\": 12, \"cudaEventSynchronize\": 12},"
                   " \"bandwidth\": true}}" % (256 * MiB, 256 * MiB, total, total))
    write(os.path.join(d, name + ".out"), "\n".join([
        expect_line, "ready 123" if mode == "attach" else "H2D 64 MiB: 1.3 ms",
        "MEASURED {\"bandwidth\": {\"H2D\": %.4f, \"D2H\": 50.0}}" % prog_h2d, "bandwidth: ok"]) + "\n")
    leaks = [{"address": "0x1", "bytes": 256 * MiB, "api": "cudaMallocHost", "kind": "host"},
             {"address": "0x2", "bytes": 256 * MiB, "api": "cudaMalloc", "kind": "device"}]
    j = {"pid": 123, "launched": mode == "launch", "exit_status": 0, "kernels": [], "launches": 0,
         "launches_estimated": False,
         "api": [{"name": "cudaMemcpy", "calls": 12, "errors": 0}, {"name": "cudaEventSynchronize", "calls": 12, "errors": 0},
                 {"name": "cudaMalloc", "calls": 1, "errors": 0}, {"name": "cudaMallocHost", "calls": 1, "errors": 0}],
         "transfers": [transfer("H2D", 6, total, gputop_h2d_seconds), transfer("D2H", 6, total, total / 50.5e9)],
         "memset": {"calls": 0, "bytes": 0, "seconds": 0}, "synchronize": {"calls": 12, "seconds": 0.001},
         "memory": {"live_bytes": 256 * MiB, "live_host_bytes": 256 * MiB, "live_allocations": 2, "allocations": 2,
                    "frees": 0, "leaks": leaks}}
    if mode == "attach":	# attached after the set-up: no allocation seen
        j["api"] = j["api"][:2]
        j["memory"] = {"live_bytes": 0, "live_host_bytes": 0, "live_allocations": 0, "allocations": 0, "frees": 0,
                       "leaks": []}
    write(os.path.join(d, name + ".json"), json.dumps(j))
    results = os.path.join(d, name + ".jsonl")
    subprocess.run(CHECK + ["cuda", "--label", name, "--mode", mode, "--out", os.path.join(d, name + ".out"),
                            "--status", "0", "--json", os.path.join(d, name + ".json"), "--gstatus", "0",
                            "--results", results], check=True, stdout=subprocess.DEVNULL)
    return rows_of(results)


def torch_case(d, launches, attach_launches, by_caller=True, names=None, reserved=74 * MiB):
    os.makedirs(d, exist_ok=True)
    prof = {"setup": {"cudaLaunchKernel": 14}, "warmup": {"cudaLaunchKernel": 460, "cudaLaunchKernelExC": 140,
                                                          "cuLaunchKernel": 80},
            "steps": {"cudaLaunchKernel": 6900, "cudaLaunchKernelExC": 2100, "cuLaunchKernel": 1200},
            "n_warmup": 20, "n_steps": 300}
    write(os.path.join(d, "profile.out"), "warning\nPROFILE %s\nRESULT %s\n" % (
        json.dumps(prof), json.dumps({"steps": 300, "steps_per_s": 850.0, "reserved": reserved, "allocated": 1})))
    names = names or ["void at::native::kernel_%d<float>(float*)" % i for i in range(19)] + ["sm80_xmma_gemm_f32"]
    kernels = [{"name": n, "launches": 300} for n in names]
    for mode, n in (("launch", launches), ("attach", attach_launches)):
        write(os.path.join(d, mode + ".out"), ("ready 99\n" if mode == "attach" else "") + "RESULT %s\n" % json.dumps(
            {"steps": 300, "steps_per_s": 430.0, "reserved": reserved, "allocated": 1}))
        write(os.path.join(d, mode + ".status"), "0\n")
        write(os.path.join(d, mode + ".gstatus"), "0\n")
        mem = {"live_bytes": reserved + 128 * MiB, "leaks": []}
        if by_caller:
            mem["by_caller"] = [{"module": "libc10_cuda.so", "live_bytes": reserved, "live_allocations": 7},
                                {"module": "libcublasLt.so.13", "live_bytes": 128 * MiB, "live_allocations": 2}]
        write(os.path.join(d, mode + ".json"), json.dumps(
            {"pid": 99, "launched": mode == "launch", "exit_status": 0, "launches": n, "launches_estimated": False,
             "kernels": kernels, "memory": mem}))
    results = os.path.join(d, "r.jsonl")
    if os.path.exists(results):
        os.unlink(results)
    subprocess.run(CHECK + ["torch", "--dir", d, "--steps", "300", "--results", results], check=True,
                   stdout=subprocess.DEVNULL)
    return rows_of(results)


def main():
    d = tempfile.mkdtemp(prefix="test_check.")
    total = 3 * (64 + 256) * MiB

    # Bandwidth: gputop 5% above the program's figure passes, 15% fails; exact figures pass.
    rows = bandwidth_case(d, "bw5", 45.0, total / 47.25e9)
    expect("bandwidth +5%: pass", verdict(rows, "H2D bandwidth"), "pass")
    expect("bandwidth: every row passes", sorted({r["verdict"] for r in rows}), ["pass"])
    rows = bandwidth_case(d, "bw15", 45.0, total / 51.75e9)
    expect("bandwidth +15%: FAIL", verdict(rows, "H2D bandwidth"), "FAIL")
    rows = bandwidth_case(d, "bwatt", 45.0, total / 44.0e9, mode="attach")
    expect("bandwidth attach: set-up not expected", sorted({r["verdict"] for r in rows}), ["pass"])

    # A broken JSON and a missing program output: FAIL rows, no crash.
    write(os.path.join(d, "broken.json"), "{\"pid\": 1, ")
    results = os.path.join(d, "broken.jsonl")
    subprocess.run(CHECK + ["cuda", "--label", "broken", "--mode", "launch", "--out", os.path.join(d, "bw5.out"),
                            "--status", "0", "--json", os.path.join(d, "broken.json"), "--gstatus", "0",
                            "--results", results], check=True, stdout=subprocess.DEVNULL)
    rows = rows_of(results)
    expect("broken JSON: JSON row fails", verdict(rows, "gputop exit, JSON"), "FAIL")
    expect("broken JSON: copies fail", verdict(rows, "H2D copies"), "FAIL")
    results = os.path.join(d, "none.jsonl")
    subprocess.run(CHECK + ["cuda", "--label", "none", "--mode", "attach", "--out", os.path.join(d, "nothing.out"),
                            "--json", os.path.join(d, "nothing.json"), "--results", results], check=True,
                   stdout=subprocess.DEVNULL)
    rows = rows_of(results)
    expect("no output at all: two FAIL rows", [r["verdict"] for r in rows], ["FAIL", "FAIL"])

    # PyTorch: exact counts pass; 2% off fails; no by_caller fails the memory row only.
    good_launch, good_attach = 14 + 680 + 10200, 10200
    rows = torch_case(os.path.join(d, "t1"), good_launch, good_attach)
    judged = {r["check"]: r["verdict"] for r in rows if r["verdict"] != "info"}
    expect("torch exact: every judged row passes", sorted(set(judged.values())), ["pass"])
    expect("torch exact: 9 judged rows", len(judged), 9)
    expect("torch: cuBLASLt bytes explained", any("libcublasLt" in r["check"] and "cuBLASLt" in r["measured"]
                                                  for r in rows), True)
    rows = torch_case(os.path.join(d, "t2"), int(good_launch * 1.005), int(good_attach * 0.98))
    expect("torch launch +0.5%: pass", verdict(rows, "torch launch: launches"), "pass")
    expect("torch attach -2%: FAIL", verdict(rows, "torch attach: launches"), "FAIL")
    rows = torch_case(os.path.join(d, "t3"), good_launch, good_attach, by_caller=False)
    expect("torch without by_caller: memory row fails", verdict(rows, "libc10_cuda = memory_reserved"), "FAIL")
    names = ["kernel@0x7f00001234"] + ["at::native::k%d(float*)" % i for i in range(19)]
    rows = torch_case(os.path.join(d, "t4"), good_launch, good_attach, names=names)
    expect("torch: an unnamed kernel in the top 20 fails", verdict(rows, "torch launch: real kernel names"), "FAIL")

    # The table: counts and exit status.
    results = os.path.join(d, "table.jsonl")
    for v in ("pass", "pass", "FAIL", "info"):
        subprocess.run(CHECK + ["row", "--results", results, "--check", "c " + v, "--expected", "e",
                                "--measured", "m", "--verdict", v], check=True, stdout=subprocess.DEVNULL)
    md = os.path.join(d, "validation.md")
    p = subprocess.run(CHECK + ["table", "--results", results, "--md", md], capture_output=True, text=True)
    expect("table: summary line", p.stdout.strip().splitlines()[-1], "2 passed, 1 failed")
    expect("table: exit 1 on a failure", p.returncode, 1)
    expect("table: markdown written", "2 passed, 1 failed" in open(md).read(), True)

    print("# %s" % ("all passed" if not failures else "%d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
