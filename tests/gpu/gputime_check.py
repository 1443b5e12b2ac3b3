# gputime_check.py — the checks of scripts/gpu-gputime on gputop's --json summaries; prints
# PASS/FAIL lines.
#   gputime_check.py spin WHAT GPUTOP.json N MS      kernel spin: N runs, N x MS ms of GPU time
#                                                    within 2%, gpu_busy given
#   gputime_check.py torch WHAT GPUTOP.json PROF.json  the 10 kernels with most GPU time in
#                                                    gputop's summary each within 10% of
#                                                    torch.profiler's total for that name;
#                                                    no row of GPU time without launches, no
#                                                    row named by a mangled (_Z) name
import json
import sys


def verdict(ok, what):
    print(("PASS " if ok else "FAIL ") + what)


def spin(what, path, n, ms):
    with open(path) as f:
        j = json.load(f)
    rows = [k for k in j["kernels"] if k["name"].startswith("spin(")]
    if not rows or not rows[0].get("gpu_time"):
        verdict(False, "%s: kernel spin has a GPU time (kernels: %s)" % (what, [k["name"] for k in j["kernels"]]))
        return
    g, want = rows[0]["gpu_time"], n * ms / 1000
    verdict(g["count"] == n, "%s: %d runs of spin have a GPU time (%d)" % (what, n, g["count"]))
    verdict(abs(g["total_s"] - want) <= 0.02 * want,
            "%s: spin's GPU time %.4f s, expected %.3f s +-2%%" % (what, g["total_s"], want))
    verdict(g["min_s"] >= ms / 1000 * 0.98 and g["max_s"] <= ms / 1000 * 1.5,
            "%s: each run %.4f..%.4f s (%.3f s asked)" % (what, g["min_s"], g["max_s"], ms / 1000))
    verdict(j.get("gpu_busy") is not None and j["gpu_time"]["busy_s"] >= g["total_s"] * 0.999,
            "%s: gpu_busy %s, busy_s %s" % (what, j.get("gpu_busy"), (j.get("gpu_time") or {}).get("busy_s")))


def torch_cmp(what, path, prof_path):
    with open(path) as f:
        j = json.load(f)
    with open(prof_path) as f:
        prof = json.load(f)["kernels"]
    timed = [k for k in j["kernels"] if k.get("gpu_time") and k["gpu_time"]["count"]]
    timed.sort(key=lambda k: -k["gpu_time"]["total_s"])
    # A kernel's launches and its GPU time on one row: joined by the demangled name, a kernel
    # gputop named otherwise than CUPTI (an nvcc extended lambda's host-side name, "Unvhdl…")
    # was split into a row of launches and a row of GPU time.
    split = [k["name"] for k in timed if not k.get("launches") and not k.get("graph_launches")]
    verdict(not split, "%s: every kernel with GPU time has launches (%d without: %s)"
            % (what, len(split), "; ".join(n[:90] for n in split[:3])))
    mangled = [k["name"] for k in j["kernels"] if k["name"].startswith("_Z")]
    verdict(not mangled, "%s: no kernel row named by a mangled name (%d: %s)"
            % (what, len(mangled), "; ".join(n[:90] for n in mangled[:3])))
    verdict(len(timed) >= 10, "%s: at least 10 kernels with GPU time (%d)" % (what, len(timed)))
    for k in timed[:10]:
        mine = k["gpu_time"]["total_s"]
        theirs = prof.get(k["name"])
        if not theirs:
            verdict(False, "%s: %s (%.4f s) is in torch.profiler's kernels" % (what, k["name"][:90], mine))
            continue
        d = (mine - theirs["total_s"]) / theirs["total_s"]
        verdict(abs(d) <= 0.10, "%s: %.90s: gputop %.4f s (%d runs), torch.profiler %.4f s (%d runs), %+.1f%%"
                % (what, k["name"], mine, k["gpu_time"]["count"], theirs["total_s"], theirs["count"], 100 * d))


if sys.argv[1] == "spin":
    spin(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
elif sys.argv[1] == "torch":
    torch_cmp(sys.argv[2], sys.argv[3], sys.argv[4])
else:
    sys.exit("gputime_check.py: spin|torch")
