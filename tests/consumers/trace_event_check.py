#!/usr/bin/env python3
"""trace_event_check.py — a strict check of a Chrome trace event file (the JSON Object Format of
Google's "Trace Event Format" document), as gputop's --timeline writes it: the fields each phase
needs and their types, and complete events properly nested on each thread (the format requires
it; viewers draw overlapping ones wrongly).

gputop's --timeline-compact (a complete event may stand for a run of calls): an instant whose
args has "calls" must come right after a complete event of the same thread, at its ts, named
args.call; that complete event stands for args.calls calls (any other for one). Counters of cat
"launches" count each kernel's launches (their last value, the kernel's launches in the file).

Usage: trace_event_check.py FILE
Prints one JSON line of counts ({"X": n, "i": n, "C": n, "M": n, "threads": n, "launch_events": n,
"calls": {name: complete events}, "represented": {name: calls they stand for}, "launches_counted":
n}) and exits 0, or prints the problems on stderr and exits 1."""
import json
import sys

PHASES = {"X", "i", "I", "C", "M", "B", "E"}
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index", "process_labels"}


def check(doc):
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["not an object with a traceEvents array"], None
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        problems.append("displayTimeUnit is %r, not ms or ns" % doc.get("displayTimeUnit"))
    counts = {"X": 0, "i": 0, "C": 0, "M": 0, "threads": 0, "launch_events": 0, "calls": {},
              "represented": {}, "launches_counted": 0}
    complete = {}
    launch_counters = {}
    previous = None  # the event before, in the file
    for n, e in enumerate(doc["traceEvents"]):
        before, previous = previous, e
        where = "event %d (%s)" % (n, json.dumps(e)[:120])
        if not isinstance(e, dict):
            problems.append(where + ": not an object")
            continue
        ph = e.get("ph")
        if ph not in PHASES:
            problems.append(where + ": ph %r" % ph)
            continue
        if not isinstance(e.get("name"), str) or not e["name"]:
            problems.append(where + ": no name")
        for key in ("pid", "tid"):
            if not isinstance(e.get(key), int) or isinstance(e.get(key), bool):
                problems.append(where + ": %s is not an integer" % key)
        if "args" in e and not isinstance(e["args"], dict):
            problems.append(where + ": args is not an object")
        if ph != "M" and not isinstance(e.get("ts"), (int, float)):
            problems.append(where + ": no numeric ts")
        counts[ph if ph in counts else "X"] += 1
        if ph == "M":
            if e.get("name") not in METADATA or not isinstance(e.get("args", {}).get("name", 0), (str, int)):
                problems.append(where + ": metadata event without a known name and args.name")
            if e.get("name") == "thread_name":
                counts["threads"] += 1
        elif ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                problems.append(where + ": complete event without a dur >= 0")
            else:
                complete.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], n))
            counts["calls"][e["name"]] = counts["calls"].get(e["name"], 0) + 1
            counts["represented"][e["name"]] = counts["represented"].get(e["name"], 0) + 1
        elif ph in ("i", "I"):
            if e.get("s", "t") not in ("g", "p", "t"):
                problems.append(where + ": instant event scope %r" % e.get("s"))
            if e.get("cat") == "launch":
                counts["launch_events"] += 1
            run = e.get("args", {}).get("calls") if isinstance(e.get("args"), dict) else None
            if run is not None:
                if not isinstance(run, int) or isinstance(run, bool) or run < 1:
                    problems.append(where + ": args.calls is not a count above 0")
                elif not (isinstance(before, dict) and before.get("ph") == "X" and
                          before.get("name") == e["args"].get("call") and
                          (before.get("pid"), before.get("tid"), before.get("ts")) == (e.get("pid"), e.get("tid"), e.get("ts"))):
                    problems.append(where + ": a run's count not right after its complete event")
                else:
                    counts["represented"][before["name"]] += run - 1
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in args.values()):
                problems.append(where + ": counter without numeric args")
            elif e.get("cat") == "launches":
                key = (e["pid"], e["name"])
                launch_counters[key] = max(launch_counters.get(key, 0), *args.values())
    counts["launches_counted"] = sum(launch_counters.values())
    # Complete events of one thread: each either ends before the next begins or holds it whole.
    for (pid, tid), spans in complete.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for start, end, n in spans:
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                problems.append("event %d: overlaps an enclosing complete event on %d/%d without nesting"
                                % (n, pid, tid))
            open_ends.append(end)
    return problems, counts


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as err:
        print("trace_event_check: %s: %s" % (sys.argv[1], err), file=sys.stderr)
        return 1
    problems, counts = check(doc)
    for p in problems[:20]:
        print("trace_event_check: " + p, file=sys.stderr)
    if problems:
        return 1
    print(json.dumps(counts, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
