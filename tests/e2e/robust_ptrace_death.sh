#!/usr/bin/env bash
# The kernel's side of "a SIGKILLed gputop leaves the program alive" (issue 17): a tracee held in
# an event stop (PTRACE_INTERRUPT) runs on, without a signal, when its tracer is killed. gputop
# moves threads with such stops only; tests/progs/ptrace_death.c also reports what becomes of a
# signal-delivery stop.
source "$(dirname "$0")/../lib.sh"
[ -x "$BIN/ptrace_death" ] || bail "tests/bin/ptrace_death is built"
out=$("$BIN/ptrace_death")
rc=$?
echo "$out" | sed 's/^/# /'
if [ "$rc" -eq 0 ]; then
	ok "a tracee in an event stop runs on when its tracer is killed"
else
	not_ok "a tracee in an event stop runs on when its tracer is killed"
fi
finish
