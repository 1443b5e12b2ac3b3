#!/usr/bin/env python3
"""check.py — the comparisons of scripts/gpu-check: expected figures against gputop's --json.

Every comparison appends one row {check, expected, measured, verdict} to a results file (JSON
lines); verdict is "pass", "FAIL" or "info" (a figure shown, not judged). `table` prints them all
and writes docs/validation.md. Nothing here ever raises on bad input: a missing or broken file
becomes FAIL rows that say so, so that a run which went wrong is reported, not crashed on.

  check.py cuda  --label L --mode launch|attach --out PROG_STDOUT --status N
                 --json GPUTOP_JSON --gstatus N [--gerr GPUTOP_STDERR] --results R
  check.py torch --dir D --steps N --results R      (files of the PyTorch runs in D, see below)
  check.py row   --results R --check C --expected E --measured M --verdict V
  check.py table --results R --env ENV_JSON [--md FILE]...

The CUDA programs (tests/gpu/*.cu, protocol in gpucheck.h) print `EXPECT {json}` with a "setup"
part (done before the go file: counted in launch mode only) and a "measured" part (after it:
counted in both modes), and `MEASURED {json}` with what they timed themselves.

The PyTorch directory D holds profile.out (the untraced run with --profile: PROFILE and RESULT
lines), then launch.* and attach.* (out: the script's stdout with RESULT; err: gputop's stderr;
json: gputop's summary; status: the script's exit status; gstatus: gputop's).
"""
import argparse
import json
import os
import sys
import textwrap

BANDWIDTH_TOLERANCE = 0.10	# gputop's GB/s against the program's CUDA-event GB/s (>= 64 MiB copies)
TORCH_LAUNCH_TOLERANCE = 0.01	# gputop's launch count against torch.profiler's
TOP_KERNELS = 20


# --- small helpers --------------------------------------------------------------------------

def load_json(path):
    """The parsed file, or None (missing, empty, broken)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, TypeError):
        return None


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def tagged(lines, tag):
    """The JSON objects of the lines that start with TAG (e.g. "EXPECT ")."""
    out = []
    for line in lines:
        if line.startswith(tag):
            try:
                out.append(json.loads(line[len(tag):]))
            except ValueError:
                pass
    return out


def last_line(path, default="(nothing)"):
    lines = [l for l in read_lines(path) if l.strip()]
    return lines[-1][:160] if lines else default


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def mib(n):
    if n is None:
        return "—"
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return "%d MiB" % (n // (1024 * 1024))
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n // 1024)
    return "%d B" % n


class Results:
    def __init__(self, path):
        self.path = path

    def add(self, check, expected, measured, verdict):
        if verdict is True:
            verdict = "pass"
        elif verdict is False:
            verdict = "FAIL"
        row = {"check": check, "expected": str(expected), "measured": str(measured), "verdict": verdict}
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print("%-5s %s: expected %s, measured %s" % (verdict, check, row["expected"], row["measured"]))


# --- what the CUDA programs expect ----------------------------------------------------------

def merge_expect(parts):
    """Adds up expectation parts (setup + measured): counts add, lists concatenate."""
    out = {"kernels": {}, "launches": 0, "transfers": {}, "memset": [0, 0], "synchronize": 0,
           "api": {}, "leaks": [], "allocations": 0, "frees": 0}
    for p in parts:
        for name, k in p.get("kernels", {}).items():
            o = out["kernels"].setdefault(name, {"launches": 0, "grid": k.get("grid"), "block": k.get("block")})
            o["launches"] += k.get("launches", 0)
        for kind, t in p.get("transfers", {}).items():
            o = out["transfers"].setdefault(kind, {"sync": [0, 0], "async": [0, 0]})
            for mode in ("sync", "async"):
                v = t.get(mode, [0, 0])
                o[mode] = [o[mode][0] + v[0], o[mode][1] + v[1]]
        m = p.get("memset", [0, 0])
        out["memset"] = [out["memset"][0] + m[0], out["memset"][1] + m[1]]
        for fn, n in p.get("api", {}).items():
            out["api"][fn] = out["api"].get(fn, 0) + n
        out["leaks"] += p.get("leaks", [])
        for key in ("launches", "synchronize", "allocations", "frees"):
            out[key] += p.get(key, 0)
    return out


def dims(v):
    return "(%s)" % ",".join(str(x) for x in v) if isinstance(v, list) else "—"


def leak_key(l):
    return (str(l.get("kind")), num(l.get("bytes")) or 0, str(l.get("api")))


def leak_text(keys):
    """"2 × device 64 KiB cudaMalloc + host 256 KiB cudaMallocHost" (keys sorted)."""
    groups = []
    for key in keys:
        if groups and groups[-1][0] == key:
            groups[-1][1] += 1
        else:
            groups.append([key, 1])
    return " + ".join("%s%s %s %s" % ("%d × " % n if n > 1 else "", k, mib(b), api)
                      for (k, b, api), n in groups) if groups else "none"


def check_cuda(a, res):
    lines = read_lines(a.out)
    label = a.label
    expects = tagged(lines, "EXPECT ")
    measured_self = {}
    for m in tagged(lines, "MEASURED "):
        measured_self.update(m)
    ok_line = next((l for l in lines if ": ok" in l and not l.startswith(("EXPECT", "MEASURED"))), None)
    fail_line = next((l for l in lines if ": FAILED" in l), None)

    # The program itself: its own results right, exit 0 (under gputop).
    prog_ok = a.status == 0 and ok_line is not None and fail_line is None
    if fail_line:
        verdict = fail_line[fail_line.index(": FAILED") + 2:]
    elif ok_line:
        verdict = "ok" + (" (not checked: simulated)" if "GPUCHECK_SIMULATED" in ok_line else "")
    else:
        verdict = "no verdict line (last: %s)" % last_line(a.out)
    res.add("%s: program's own check, exit status" % label, "ok, exit 0",
            "%s, exit %s" % (verdict[:120], a.status), prog_ok)
    if not expects:
        res.add("%s: expected figures (EXPECT line)" % label, "printed", "missing", False)
        return
    e = expects[0]
    parts = [e.get("setup", {}), e.get("measured", {})] if a.mode == "launch" else [e.get("measured", {})]
    want = merge_expect(parts)

    j = load_json(a.json)
    if not isinstance(j, dict):
        j = {}
        res.add("%s: gputop exit, JSON summary" % label, "exit 0, JSON written",
                "exit %s, no JSON (%s)" % (a.gstatus, last_line(a.gerr) if a.gerr else "—"), False)
    else:
        seen_exit = j.get("exit_status")
        launched = j.get("launched")
        good = a.gstatus == 0 and seen_exit == 0 and launched == (a.mode == "launch")
        res.add("%s: gputop exit, JSON summary" % label,
                "exit 0, JSON with exit_status 0, launched=%s" % str(a.mode == "launch").lower(),
                "exit %s, JSON with exit_status %s, launched=%s" % (a.gstatus, seen_exit, str(launched).lower()), good)

    # Kernels: every expected one by its demangled name, exact launches and dimensions.
    by_name = {}
    for k in j.get("kernels", []) or []:
        name = k.get("name")
        o = by_name.setdefault(name, {"launches": 0, "grid": k.get("grid"), "block": k.get("block")})
        o["launches"] += num(k.get("launches")) or 0
    for name, k in want["kernels"].items():
        got = by_name.get(name)
        exp = "%d × grid %s block %s" % (k["launches"], dims(k["grid"]), dims(k["block"]))
        if got is None:
            res.add("%s: kernel %s" % (label, name), exp, "absent", False)
            continue
        mea = "%d × grid %s block %s" % (got["launches"], dims(got["grid"]), dims(got["block"]))
        res.add("%s: kernel %s" % (label, name), exp, mea, exp == mea)
    others = ["%s ×%d" % (n, k["launches"]) for n, k in by_name.items() if n not in want["kernels"]]
    res.add("%s: no other kernel" % label, "none", ", ".join(others)[:200] if others else "none", not others)
    launches = num(j.get("launches"))
    est = j.get("launches_estimated")
    res.add("%s: launches (total, not estimated)" % label, "%d" % want["launches"],
            "%s%s" % (launches if launches is not None else "—", " (estimated)" if est else ""),
            launches == want["launches"] and est is False)

    # Copies per direction: calls and bytes, sync and async apart.
    got_t = {t.get("kind"): t for t in j.get("transfers", []) or [] if isinstance(t, dict)}
    for kind in ("H2D", "D2H", "D2D", "H2H"):
        w = want["transfers"].get(kind, {"sync": [0, 0], "async": [0, 0]})
        g = got_t.get(kind)
        if g is None and w["sync"][0] == 0 and w["async"][0] == 0:
            continue
        exp = "sync %d × %s, async %d × %s" % (w["sync"][0], mib(w["sync"][1]), w["async"][0], mib(w["async"][1]))
        if g is None:
            mea = "none"
        else:
            s, y = g.get("sync", {}), g.get("async", {})
            mea = "sync %s × %s, async %s × %s" % (s.get("calls"), mib(num(s.get("bytes"))),
                                                    y.get("calls"), mib(num(y.get("bytes"))))
        ok = g is not None and [g.get("sync", {}).get("calls"), g.get("sync", {}).get("bytes")] == w["sync"] \
            and [g.get("async", {}).get("calls"), g.get("async", {}).get("bytes")] == w["async"]
        res.add("%s: %s copies" % (label, kind), exp, mea, ok)
    ms = j.get("memset") or {}
    if want["memset"][0] or ms.get("calls"):
        res.add("%s: memsets" % label, "%d × %s" % (want["memset"][0], mib(want["memset"][1])),
                "%s × %s" % (ms.get("calls", "—"), mib(num(ms.get("bytes")))),
                [ms.get("calls"), ms.get("bytes")] == want["memset"])
    sy = (j.get("synchronize") or {}).get("calls")
    res.add("%s: synchronize calls" % label, want["synchronize"], sy if sy is not None else "—",
            sy == want["synchronize"])

    # API calls: the listed functions, exact counts, no errors.
    api = {r.get("name"): r for r in j.get("api", []) or [] if isinstance(r, dict)}
    bad = []
    for fn, n in sorted(want["api"].items()):
        r = api.get(fn, {})
        calls, errors = r.get("calls", 0), r.get("errors", 0)
        if calls != n:
            bad.append("%s %s≠%d" % (fn, calls, n))
        if errors:
            bad.append("%s %s errors" % (fn, errors))
    res.add("%s: API calls (%d functions)" % (label, len(want["api"])), "all exact, no errors",
            "; ".join(bad) if bad else "all exact, no errors", not bad and bool(j))

    # Memory: what is left allocated at the end, and how many allocations and frees.
    mem = j.get("memory") or {}
    wl = sorted(leak_key(l) for l in want["leaks"])
    gl = sorted(leak_key(l) for l in mem.get("leaks", []) or [])
    res.add("%s: leaks" % label, leak_text(wl), leak_text(gl) if mem else "—", wl == gl and bool(mem))
    dev = sum(b for k, b, _ in wl if k in ("device", "managed"))
    host = sum(b for k, b, _ in wl if k == "host")
    exp = "device %d B, host %d B, %d allocations" % (dev, host, len(wl))
    mea = "device %s B, host %s B, %s allocations" % (mem.get("live_bytes", "—"), mem.get("live_host_bytes", "—"),
                                                      mem.get("live_allocations", "—"))
    res.add("%s: live memory at the end" % label, exp, mea, exp == mea)
    exp = "%d allocations, %d frees" % (want["allocations"], want["frees"])
    mea = "%s allocations, %s frees" % (mem.get("allocations", "—"), mem.get("frees", "—"))
    res.add("%s: allocations and frees seen" % label, exp, mea, exp == mea)

    # Bandwidth: gputop's GB/s per direction against the program's own CUDA-event timing.
    for kind, prog_gbps in sorted((measured_self.get("bandwidth") or {}).items()):
        g = num((got_t.get(kind) or {}).get("gbps"))
        p = num(prog_gbps)
        exp = "%.2f GB/s ±%d%% (program's CUDA events)" % (p, BANDWIDTH_TOLERANCE * 100) if p else "—"
        if g is None or not p:
            res.add("%s: %s bandwidth" % (label, kind), exp, "%s GB/s" % g if g is not None else "—", False)
            continue
        dev = (g - p) / p
        res.add("%s: %s bandwidth" % (label, kind), exp, "%.2f GB/s (%+.1f%%)" % (g, dev * 100),
                abs(dev) <= BANDWIDTH_TOLERANCE)
    if "bandwidth" in e.get("measured", {}) and not measured_self.get("bandwidth"):
        res.add("%s: bandwidth" % label, "the program's CUDA-event GB/s", "not printed (program failed?)", False)


# --- PyTorch ---------------------------------------------------------------------------------

LAUNCH_APIS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")

CALLER_NOTES = {
    "libc10_cuda": "PyTorch's caching allocator (counted by memory_reserved)",
    "libcublasLt": "cuBLASLt workspace: allocated by cuBLASLt itself, outside the caching allocator",
    "libcublas": "cuBLAS workspace/handle state: allocated by cuBLAS itself, outside the caching allocator",
    "libtorch_cuda": "allocated by libtorch_cuda directly, outside the caching allocator",
    "libcudart": "allocated inside the CUDA runtime (its own state)",
    "libnccl": "NCCL's own buffers",
}


def caller_note(module):
    for key, note in CALLER_NOTES.items():
        if key in module:
            return note
    return "not in memory_reserved"


def real_name(n):
    """A kernel name that names something: demangled C++ or a plain C identifier, no address."""
    if not isinstance(n, str) or not n or "@0x" in n or n.startswith("0x"):
        return False
    if "::" in n or "(" in n:
        return True
    return n.replace("_", "a").isalnum() and not n[0].isdigit() and len(n) >= 3


def top_names(j):
    ks = [k for k in (j.get("kernels") or []) if isinstance(k, dict)]
    ks.sort(key=lambda k: -(num(k.get("launches")) or 0))
    return ks[:TOP_KERNELS]


def profile_total(counts):
    return sum(counts.get(k, 0) for k in LAUNCH_APIS)


def torch_run_rows(res, label, d, name, mode):
    """Rows common to the two traced runs; returns (json, result line)."""
    out = os.path.join(d, name + ".out")
    lines = read_lines(out)
    result = (tagged(lines, "RESULT ") or [None])[-1]
    status = read_status(os.path.join(d, name + ".status"))
    gstatus = read_status(os.path.join(d, name + ".gstatus"))
    ok = status == 0 and result is not None
    res.add("%s: training script ran to its end, exit 0" % label, "RESULT line, exit 0",
            "%s, exit %s" % ("RESULT line" if result else "no RESULT (%s)" % last_line(out), status), ok)
    j = load_json(os.path.join(d, name + ".json"))
    if not isinstance(j, dict):
        res.add("%s: gputop exit, JSON summary" % label, "exit 0, JSON written",
                "exit %s, no JSON (%s)" % (gstatus, last_line(os.path.join(d, name + ".err"))), False)
        return {}, result
    good = gstatus == 0 and j.get("exit_status") == 0 and j.get("launched") == (mode == "launch")
    res.add("%s: gputop exit, JSON summary" % label,
            "exit 0, JSON with exit_status 0, launched=%s" % str(mode == "launch").lower(),
            "exit %s, JSON with exit_status %s, launched=%s" % (gstatus, j.get("exit_status"),
                                                                str(j.get("launched")).lower()), good)
    return j, result


def launches_row(res, label, j, expected, what):
    got = num(j.get("launches"))
    est = j.get("launches_estimated")
    if got is None or not expected:
        res.add("%s: launches vs torch.profiler (%s) ±1%%" % (label, what), expected or "—",
                "—" if got is None else got, False)
        return
    dev = (got - expected) / expected
    res.add("%s: launches vs torch.profiler (%s) ±1%%" % (label, what), "%d" % expected,
            "%d (%+.2f%%)%s" % (got, dev * 100, " estimated" if est else ""),
            abs(dev) <= TORCH_LAUNCH_TOLERANCE and est is False)


def names_row(res, label, j):
    top = top_names(j)
    real = [k for k in top if real_name(k.get("name"))]
    bad = [str(k.get("name"))[:60] for k in top if not real_name(k.get("name"))]
    with_ns = sum(1 for k in top if "::" in str(k.get("name")))
    res.add("%s: real kernel names among the top %d" % (label, TOP_KERNELS),
            "%d/%d" % (len(top), len(top)) if top else "kernels",
            "%d/%d (%d with ::)%s" % (len(real), len(top), with_ns, (": " + ", ".join(bad[:3])) if bad else ""),
            bool(top) and len(real) == len(top) and with_ns > 0)


def read_status(path):
    try:
        return int(open(path).read().strip())
    except (OSError, ValueError):
        return None


def check_torch(a, res):
    d, steps = a.dir, a.steps
    # The untraced run with torch.profiler: what the program launches, phase by phase.
    plines = read_lines(os.path.join(d, "profile.out"))
    prof = (tagged(plines, "PROFILE ") or [None])[-1]
    untraced = (tagged(plines, "RESULT ") or [None])[-1]
    if prof:
        per = {k: prof.get(k) or {} for k in ("setup", "warmup", "steps")}
        tot = {k: profile_total(v) for k, v in per.items()}
        detail = ", ".join("%s %d" % (k, per["steps"].get(k, 0)) for k in LAUNCH_APIS if per["steps"].get(k))
        res.add("torch untraced: torch.profiler launch calls", "counted",
                "set-up %d, %d warm-up steps %d, %d steps %d (%.2f/step: %s)" % (
                    tot["setup"], prof.get("n_warmup", 0), tot["warmup"], steps, tot["steps"],
                    tot["steps"] / steps if steps else 0, detail), "info")
    else:
        tot = {}
        res.add("torch untraced: torch.profiler launch calls", "PROFILE line",
                "missing (%s)" % last_line(os.path.join(d, "profile.out")), False)

    # Launch mode: the whole program.
    j, result = torch_run_rows(res, "torch launch", d, "launch", "launch")
    if j:
        launches_row(res, "torch launch", j, sum(tot.values()) if tot else None,
                     "set-up + warm-up + %d steps" % steps)
        mem = j.get("memory") or {}
        callers = mem.get("by_caller")
        reserved = (result or {}).get("reserved")
        if not isinstance(callers, list):
            res.add("torch launch: live device bytes from libc10_cuda = memory_reserved()",
                    reserved if reserved is not None else "—", "no memory.by_caller in the JSON", False)
        else:
            c10 = [c for c in callers if "libc10_cuda" in str(c.get("module"))]
            got = sum(num(c.get("live_bytes")) or 0 for c in c10)
            res.add("torch launch: live device bytes from libc10_cuda = memory_reserved()",
                    "%s B" % reserved, "%d B in %d allocations" % (got, sum(num(c.get("live_allocations")) or 0 for c in c10)),
                    reserved is not None and got == reserved)
            for c in sorted(callers, key=lambda c: -(num(c.get("live_bytes")) or 0)):
                m = str(c.get("module"))
                if "libc10_cuda" in m:
                    continue
                res.add("torch launch: live device bytes from %s" % (m or "(unknown module)"), "—",
                        "%s in %s allocations: %s" % (mib(num(c.get("live_bytes"))), c.get("live_allocations"),
                                                      caller_note(m)), "info")
        res.add("torch launch: live device bytes, all callers", "—",
                "%s (memory_reserved %s, memory_allocated %s)" % (
                    mib(num(mem.get("live_bytes"))), mib(num((result or {}).get("reserved"))),
                    mib(num((result or {}).get("allocated")))), "info")
        names_row(res, "torch launch", j)
    traced = (result or {}).get("steps_per_s")

    # Attach mode: attached after set-up and warm-up, before the measured steps.
    j, aresult = torch_run_rows(res, "torch attach", d, "attach", "attach")
    if j:
        launches_row(res, "torch attach", j, tot.get("steps") if tot else None, "%d steps" % steps)
        names_row(res, "torch attach", j)
    attached = (aresult or {}).get("steps_per_s")
    u = (untraced or {}).get("steps_per_s")

    def rate(v):
        if not v:
            return "—"
        return "%.0f steps/s%s" % (v, " (%.0f%% of untraced)" % (100 * v / u) if u else "")
    res.add("torch: training speed (judged by the overhead issue, not here)", "—",
            "untraced %s; traced from launch %s; attached %s" % (
                "%.0f steps/s" % u if u else "—", rate(traced), rate(attached)), "info")


# --- the table -------------------------------------------------------------------------------

def load_rows(path):
    rows = []
    for line in read_lines(path):
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    return rows


COLUMN_MAX = (72, 52, 64)	# check, expected, measured: longer cells wrap onto more lines


def render(rows):
    heads = ("check", "expected", "measured", "verdict")
    width = [len(h) for h in heads[:3]]
    for r in rows:
        for i, h in enumerate(heads[:3]):
            width[i] = max(width[i], min(len(r.get(h, "")), COLUMN_MAX[i]))
    fmt = "  ".join("%%-%ds" % w for w in width) + "  %s"
    out = [(fmt % heads).rstrip(), "  ".join("-" * w for w in width + [7])]
    for r in rows:
        cells = [textwrap.wrap(r.get(h, ""), width[i], break_on_hyphens=False) or [""]
                 for i, h in enumerate(heads[:3])]
        for n in range(max(len(c) for c in cells)):
            line = [c[n] if n < len(c) else "" for c in cells] + [r.get("verdict", "") if n == 0 else ""]
            out.append((fmt % tuple(line)).rstrip())
    passed = sum(1 for r in rows if r.get("verdict") == "pass")
    failed = sum(1 for r in rows if r.get("verdict") == "FAIL")
    info = sum(1 for r in rows if r.get("verdict") == "info")
    return out, passed, failed, info


def table(a):
    rows = load_rows(a.results)
    env = load_json(a.env) or {}
    out, passed, failed, info = render(rows)
    summary = "%d passed, %d failed" % (passed, failed)
    print("\n".join(out))
    print("(%d figures shown for information, not judged)" % info)
    print(summary)
    if a.md:
        md = ["# gputop on a real GPU: validation", "",
              "Written by `scripts/gpu-check` (do not edit by hand; run the script again instead).", "",
              "| | |", "| --- | --- |"]
        for key, title in (("date", "date"), ("gpu", "GPU"), ("driver", "driver"), ("cuda", "CUDA (nvcc)"),
                           ("torch", "PyTorch"), ("gputop", "gputop"), ("host", "host"),
                           ("duration", "run time")):
            if env.get(key):
                md.append("| %s | %s |" % (title, str(env[key]).replace("|", "/")))
        md += ["", "Tolerances: exact for counts, bytes and leaks; bandwidth within 10% of the program's own "
               "CUDA-event timing (copies of 64 MiB and 256 MiB); PyTorch launches within 1% of torch.profiler's "
               "count. `info` rows are shown, not judged. Launch mode counts set-up and measured work; attach mode "
               "(gputop -p, attached while the program waits for its go file) only the measured work.", "",
               "```", *out, "(%d figures shown for information, not judged)" % info, summary, "```", ""]
        text = "\n".join(md)
        for path in a.md:
            try:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            except OSError as err:
                print("check.py: cannot write %s: %s" % (path, err), file=sys.stderr)
    return 1 if failed or not rows else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cuda")
    c.add_argument("--label", required=True)
    c.add_argument("--mode", choices=("launch", "attach"), required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--status", type=int)
    c.add_argument("--json", required=True)
    c.add_argument("--gstatus", type=int)
    c.add_argument("--gerr")
    c.add_argument("--results", required=True)
    t = sub.add_parser("torch")
    t.add_argument("--dir", required=True)
    t.add_argument("--steps", type=int, required=True)
    t.add_argument("--results", required=True)
    r = sub.add_parser("row")
    r.add_argument("--results", required=True)
    r.add_argument("--check", required=True)
    r.add_argument("--expected", required=True)
    r.add_argument("--measured", required=True)
    r.add_argument("--verdict", choices=("pass", "FAIL", "info"), required=True)
    tb = sub.add_parser("table")
    tb.add_argument("--results", required=True)
    tb.add_argument("--env")
    tb.add_argument("--md", action="append")
    a = p.parse_args()

    if a.cmd == "table":
        return table(a)
    res = Results(a.results)
    try:
        if a.cmd == "cuda":
            check_cuda(a, res)
        elif a.cmd == "torch":
            check_torch(a, res)
        else:
            res.add(a.check, a.expected, a.measured, a.verdict)
    except Exception as err:	# a bug here must show up as a failure, not end the whole run
        res.add("%s: checker" % getattr(a, "label", a.cmd), "no error",
                "%s: %s" % (type(err).__name__, err), False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
