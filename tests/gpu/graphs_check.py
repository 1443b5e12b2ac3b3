# graphs_check.py — the verdicts of scripts/gpu-graphs (issue 15): gputop's --json summary
# against what the program knows it ran, or against torch.profiler's count of the same run.
# usage: graphs_check.py program LABEL SUMMARY.json [--attached-after-instantiation]
#        graphs_check.py torch LABEL SUMMARY.json PROFILE.json cudagraph|compile
# Prints one line per check, "PASS ..." or "FAIL ...", and exits 1 if any failed.
import json
import sys

failed = 0


def verdict(label, what, expected, measured, ok=None):
    global failed
    ok = expected == measured if ok is None else ok
    failed += not ok
    print("%s %s: %s — expected %s, gputop %s" % ("PASS" if ok else "FAIL", label, what, expected, measured))


def kernel(summary, prefix):
    """(direct launches, graph executions) of the kernel whose name starts with prefix."""
    rows = [k for k in summary.get("kernels", []) if k["name"].startswith(prefix)]
    return (sum(k["launches"] for k in rows), sum(k.get("graph_launches", 0) for k in rows))


def program(label, summary, after_instantiation):
    verdict(label, "graph launches", 100, summary.get("graph_launches"))
    verdict(label, "dk: direct launches, graph executions", (7, 0), kernel(summary, "dk("))
    graphs = [(g["nodes"], g["kernels"], g["launches"]) for g in summary.get("graphs", [])]
    if after_instantiation:
        # The driver has no call that tells an executable graph's nodes: gputop says it does not
        # know them (nodes null) rather than guess, and names no kernel for those launches.
        verdict(label, "graphs (nodes, kernels, launches)", [(None, None, 100)], graphs)
        verdict(label, "gk: no direct launch counted", 0, kernel(summary, "gk(")[0])
    else:
        verdict(label, "gk: direct launches, graph executions", (0, 1000), kernel(summary, "gk("))
        verdict(label, "graphs (nodes, kernels, launches)", [(10, 10, 100)], graphs)
    cost = summary.get("cost", {})
    launch_row = [a for a in summary.get("api", []) if a["name"].startswith(("cuGraphLaunch", "cudaGraphLaunch"))]
    verdict(label, "stops per graph launch (cuGraphLaunch through the launch ring)", [0],
            sorted({a.get("stops_per_call") for a in launch_row}))
    print("  %s: %s stops in all for %s graph launches" % (label, cost.get("stops"), summary.get("graph_launches")))


def torch(label, summary, prof, mode):
    ran = prof["kernels"] or {}
    mine = {k["name"]: (k["launches"], k.get("graph_launches", 0)) for k in summary.get("kernels", [])}
    total_prof = sum(ran.values())
    total_mine = sum(a + b for a, b in mine.values())
    if mode == "cudagraph":
        replayed = prof["replayed"] or {}
        graph_mine = sorted(b for a, b in mine.values() if b)
        verdict(label, "kernel executions through graph replays, per kernel (sorted counts)",
                sorted(replayed.values()), graph_mine)
        same = [n for n in replayed if n in mine]
        # Names are compared where both demanglers wrote them alike (CUPTI's and gputop's may
        # differ in a template argument's spelling): a note, the counts above are the verdict.
        print("  %s: %d of %d replayed kernels have the same name in both" % (label, len(same), len(replayed)))
        for n in same:
            verdict(label, "graph executions of %s" % n[:60], replayed[n], mine[n][1])
        verdict(label, "all kernel executions (warm-up + replays)", total_prof, total_mine)
    else:
        ok = total_prof > 0 and abs(total_mine - total_prof) <= 0.01 * total_prof
        verdict(label, "all kernel executions, within 1%", total_prof, total_mine, ok)
        print("  %s: %d kernels by torch.profiler, %d by gputop (%d direct, %d in %d graph launches)" %
              (label, len(ran), len(mine), sum(a for a, b in mine.values()), sum(b for a, b in mine.values()),
               summary.get("graph_launches", 0)))
        for n in sorted(n for n in ran if n in mine):
            verdict(label, "executions (direct + through graphs) of %s" % n[:60], ran[n], sum(mine[n]))
    for n in sorted(set(ran) - set(mine))[:10]:
        print("  %s: only torch.profiler names %s (%d)" % (label, n[:100], ran[n]))
    for n in sorted(set(mine) - set(ran))[:10]:
        print("  %s: only gputop names %s %s" % (label, n[:100], mine[n]))


def main(argv):
    with open(argv[3]) as f:
        summary = json.load(f)
    if argv[1] == "program":
        program(argv[2], summary, "--attached-after-instantiation" in argv)
    else:
        with open(argv[4]) as f:
            torch(argv[2], summary, json.load(f), argv[5])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
