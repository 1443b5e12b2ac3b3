#!/usr/bin/env python3
"""comm_check.py — compares gputop's --json NCCL figures with what the programs say they issued
(scripts/gpu-comm; tested on the simulated NCCL by tests/e2e/comm_check.sh).

usage: comm_check.py exact|atleast NAME GPUTOP.json ACCOUNTS
  ACCOUNTS: lines of JSON objects (or "RESULT {...}" lines), one per process:
            {"pid", "rank", "nranks", "collectives": {op: {"calls", "bytes"}}, "p2p": [...]}
  exact    gputop saw exactly the accounted calls (attached after the set-up): per process and
           op, calls and bytes equal, and no other operation; its P2P sends, per source GPU, equal
           the account's (a destination may be null when the communicator predates the attach).
  atleast  gputop saw the whole run (launch mode): per process and op, calls and bytes at least
           the account's (the framework adds its own), and the process's rank and size come
           from its communicator (a communicator {rank, nranks} in communicators[]).
Prints one PASS/FAIL line per check; exit status 1 if any failed."""
import json
import sys


def accounts(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("RESULT "):
                line = line[len("RESULT "):]
            if line.startswith("{"):
                out.append(json.loads(line))
    return out


def main():
    mode, name, gputop_path, acc_path = sys.argv[1:5]
    with open(gputop_path) as f:
        g = json.load(f)
    procs = {p["pid"]: p for p in g.get("processes", [])}
    fails = 0

    def check(ok, what, expected, measured):
        nonlocal fails
        fails += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: {what}: expected {expected} | measured {measured}")

    accs = accounts(acc_path)
    check(len(accs) > 0, "accounts read", "> 0", len(accs))
    for a in accs:
        p = procs.get(a["pid"])
        who = f"rank {a['rank']} (pid {a['pid']})"
        check(p is not None, f"{who} traced", "listed", "listed" if p else "missing")
        if not p:
            continue
        got = {c["op"]: c for c in p.get("collectives", [])}
        for op, want in sorted(a["collectives"].items()):
            have = got.get(op, {"calls": 0, "bytes": 0})
            for k in ("calls", "bytes"):
                ok = have[k] == want[k] if mode == "exact" else have[k] >= want[k]
                check(ok, f"{who} {op} {k}", ("" if mode == "exact" else ">= ") + str(want[k]), have[k])
        if mode == "exact":
            extra = sorted(set(got) - set(a["collectives"]))
            check(not extra, f"{who} no other operation", "[]", extra)
            # By source device: attached after the communicator was made, gputop does not know
            # the peer's device (null), only that the bytes left this one.
            def by_src(rows):
                out = {}
                for e in rows:
                    c, b = out.get(e["src_device"], (0, 0))
                    out[e["src_device"]] = (c + e["calls"], b + e["bytes"])
                return sorted(out.items(), key=lambda kv: str(kv[0]))
            check(by_src(p.get("p2p", [])) == by_src(a.get("p2p", [])), f"{who} P2P sends by source GPU",
                  by_src(a.get("p2p", [])), by_src(p.get("p2p", [])))
            resolved = [e for e in p.get("p2p", []) if e["dst_device"] is not None]
            print(f"  {who}: {len(resolved)} of {len(p.get('p2p', []))} P2P rows with a known destination")
        if a.get("rank", -1) >= 0:
            check(p.get("rank") == a["rank"], f"{who} rank", a["rank"], p.get("rank"))
        if mode == "atleast" and a.get("nranks", -1) > 0 and a.get("rank", -1) >= 0:
            comms = [(c.get("rank"), c.get("nranks")) for c in p.get("communicators", [])]
            check((a["rank"], a["nranks"]) in comms, f"{who} communicator (rank, nranks)",
                  (a["rank"], a["nranks"]), comms)
            check(p.get("nranks") == a["nranks"], f"{who} nranks", a["nranks"], p.get("nranks"))
    print(f"{name}: {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
