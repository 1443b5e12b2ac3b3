#!/usr/bin/env bash
# The two system calls gputop cannot run from its own page — the first mmap of an attach (no
# page yet) and the last munmap of a detach (of that page) — run from a resuming gadget written
# into the unused end of an executable segment of the program (probe/xol.c, syscall_from_tail),
# so that a gputop killed during either leaves the thread going on where it was. Checked here:
# both calls are made from there (gputop's debug lines name them), and after the detach every
# byte of the program's executable mappings is as before (the gadget's bytes were put back).
# ring_loop on the SIMULATED driver.
source "$(dirname "$0")/../lib.sh"
need_bin ring_loop simdrv/libcuda.so.1
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes"

# exec_bytes PID: a hash of every executable mapping's bytes, as the process has them now.
exec_bytes() {
	python3 - "$1" <<'PY'
import hashlib, sys
pid = int(sys.argv[1]); h = hashlib.sha256()
with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if "x" in f[1] and not line.rstrip().endswith("[vsyscall]"):
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            mem.seek(lo); h.update(f[0].encode() + mem.read(hi - lo))
print(h.hexdigest())
PY
}

touch "$TMP/go"
spawn "$TMP/prog" env LD_LIBRARY_PATH="$SIMDRV" RB_GO_FILE="$TMP/go" "$BIN/ring_loop" 2 200000000
PROG=$SPAWNED_PID
wait_for_line "$TMP/prog.out" '^ring_loop: running' 20 || bail "ring_loop runs"
before=$(exec_bytes "$PROG")
GPUTOP_DEBUG=1 "$GPUTOP" -p "$PROG" -q --timeout 1 >"$TMP/g.out" 2>"$TMP/g.err"
expect_eq "$?" 0 "gputop attached, detached after 1 s, status 0"
expect_match "$(cat "$TMP/g.err")" 'system call 9 from a copy of the gadget' \
	"the first mmap ran from the gadget in the segment's unused end"
expect_match "$(cat "$TMP/g.err")" 'system call 11 from a copy of the gadget' \
	"the last munmap ran from the gadget in the segment's unused end"
expect_eq "$(exec_bytes "$PROG")" "$before" "every byte of the executable mappings as before the attach"
kill "$PROG"
finish
