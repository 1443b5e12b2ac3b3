#!/usr/bin/env python3
"""int3_scan.py PID LIB... — counts the int3 bytes (0xcc) at the entry of every function that the
named libraries export, in the running process PID's memory (as mapped now): what gputop planted
there, if anything. Prints "int3 N of M entries" and one line per int3 found ("LIB SYMBOL").
Reads /proc/PID/mem: needs the right to ptrace PID (root, or its tracer's user with
ptrace_scope 0)."""
import subprocess
import sys

pid, libs = int(sys.argv[1]), sys.argv[2:]
bases = {}
for line in open("/proc/%d/maps" % pid):
    f = line.split()
    if len(f) >= 6 and int(f[2], 16) == 0 and any(f[5].endswith("/" + lib) for lib in libs):
        bases.setdefault(f[5], int(f[0].split("-")[0], 16))
found, total = [], 0
with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
    for path, base in sorted(bases.items()):
        nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
        for line in nm.splitlines():
            f = line.split()
            if len(f) != 3 or f[1] not in "TtWi":
                continue
            total += 1
            mem.seek(base + int(f[0], 16))
            if mem.read(1) == b"\xcc":
                found.append("%s %s" % (path.rsplit("/", 1)[1], f[2]))
print("int3 %d of %d entries" % (len(found), total))
for x in found:
    print(x)
