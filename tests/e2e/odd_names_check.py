#!/usr/bin/env python3
"""odd_names_check.py — reads gputop's outputs of a run of tests/progs/odd_names.c back with
strict parsers, as a user's tools would: python3's json on text decoded as UTF-8 with
errors="strict", and the folded file as strict UTF-8 text. Names that are not UTF-8 must come
out by gputop's one rule (src/base/utf8.h): each ill-formed part as U+FFFD, which is what
bytes.decode("utf-8", "replace") gives.

Usage: odd_names_check.py PROGRAM_OUTPUT PROGRAM_PATH SUMMARY.json TIMELINE.json FOLDED
Prints one "ok - ..." or "not ok - ..." line per check (tests/lib.sh's form); exit status 1 if
any failed."""
import json
import os
import sys

failed = 0


def check(good, what, detail=None):
    global failed
    print("%s - %s" % ("ok" if good else "not ok", what))
    if not good:
        failed += 1
        if detail is not None:
            print("#   %s" % str(detail)[:600])


def strict_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="strict")


def strict_json(path, what):
    try:
        return json.loads(strict_text(path))
    except (UnicodeDecodeError, ValueError) as e:
        check(False, "%s: strict UTF-8 and JSON" % what, e)
        return None


def main():
    prog_out, prog_path, summary, timeline, folded = sys.argv[1:6]
    raw = [bytes.fromhex(l.split()[1]) for l in open(prog_out, "rb").read().decode("ascii", "replace").splitlines()
           if l.startswith("name ")]
    check(len(raw) == 7, "the program said its 7 kernel names", raw)
    want = sorted(n.decode("utf-8", "replace") for n in raw)
    command = os.fsencode(prog_path).decode("utf-8", "replace")

    doc = strict_json(summary, "--json")
    if doc is not None:
        check(True, "--json: strict UTF-8 and JSON")
        check(doc.get("command") == command, "--json: command, bytes that are not UTF-8 as U+FFFD",
              "%r != %r" % (doc.get("command"), command))
        names = sorted(k["name"] for k in doc["kernels"])
        check(names == want, "--json: every kernel name, each ill-formed part as U+FFFD", names)
        check(all(k["launches"] == 2 for k in doc["kernels"]), "--json: 2 launches of each kernel")
        procs = doc.get("processes", [])
        check(len(procs) == 1 and procs[0]["command"] == command, "--json: the process's command too")

    trace = strict_json(timeline, "--timeline")
    if trace is not None:
        check(True, "--timeline: strict UTF-8 and JSON")
        events = trace["traceEvents"]
        launched = sorted(e["name"] for e in events if e.get("cat") == "launch")
        check(launched == sorted(want * 2), "--timeline: a launch event per launch, named by the rule", launched)
        procs = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
        base = os.path.basename(os.fsencode(prog_path))[:15].decode("utf-8", "replace")
        check(any(p.startswith(base + " (") for p in procs), "--timeline: the process's track named by the rule",
              "%r, not starting with %r" % (procs, base))

    try:
        lines = strict_text(folded).splitlines()
        check(True, "--folded: strict UTF-8 text")
    except UnicodeDecodeError as e:
        check(False, "--folded: strict UTF-8 text", e)
        lines = []
    if lines:
        leaves = sorted(l.rsplit(" ", 1)[0].split(";")[-1] for l in lines)
        fold = sorted(n.replace(";", ":").replace("\n", " ").replace("\r", " ") for n in want)
        check(leaves == fold, "--folded: each kernel a leaf, named by the rule (';' as ':', line breaks as ' ')",
              leaves)
        check(sum(int(l.rsplit(" ", 1)[1]) for l in lines) == 14, "--folded: 14 launches in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
