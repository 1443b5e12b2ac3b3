#!/usr/bin/env bash
# Robustness: a thread that cannot stop while gputop stops a followed process to probe it. The
# parent of a vfork waits, beyond any ptrace interrupt, for its child to exec or end; the child,
# followed too, was stopped with the others: gputop waited for a stop that never came, and the
# process's other threads, held, with it, for good. Now a world stop to probe a process gives
# up after 1 s, lets every thread go and tries again a second later; after 3 tries the process
# is left unprobed, said.
# The child is no longer stopped with the others either (it only makes system calls until it
# execs or ends): a detach, which must stop every thread, waits for the child to end, then
# goes; before, it waited for good.
# Program: tests/progs/rb_vfork.c (a thread's vfork child waits for a file; another thread
# prints "beat N" every 50 ms; the main thread dlopens the SIMULATED runtime).
source "$(dirname "$0")/../lib.sh"
need_bin rb_vfork sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
stop=$TMP/stop

"$GPUTOP" -q -- sh -c '"$0" "$1"; true' "$BIN/rb_vfork" "$stop" >"$TMP/out" 2>"$TMP/err" &
g=$!
if wait_for_line "$TMP/err" 'is not traced: a thread of it did not stop within 1 s, 3 times' 30; then
	ok "gputop gave up probing it, said: $(grep -o 'process [0-9]* is not traced.*' "$TMP/err")"
else
	not_ok "gputop gave up probing it, said"
fi
# The program runs on: its beats go on (they were held while gputop waited for ever).
beats() { grep -c '^beat ' "$TMP/out"; }
n=$(beats)
moved=0
for _ in $(seq 200); do
	[ "$(beats)" -ge $((n + 3)) ] && { moved=1; break; }
	sleep 0.05
done
expect_eq "$moved" 1 "the program's threads run on after gputop gave up (beats after $n: $(beats))"
touch "$stop"
wait_pid "$g" 30
expect_eq "$WAIT_STATUS" 0 "gputop ends with the shell's status (0)"
expect_match "$(tail -n 1 "$TMP/out")" '^rb_vfork: done$' "the program ends as untraced"
if [ "$WAIT_STATUS" != 0 ]; then
	sleep 1
	pkill -KILL -f "$BIN/rb_vfork" 2>/dev/null
fi

# 2. A detach (SIGTERM) while the vfork child lives: it goes once the child has ended.
rm -f "$stop"
"$GPUTOP" -q -- sh -c '"$0" "$1"; true' "$BIN/rb_vfork" "$stop" >"$TMP/out2" 2>"$TMP/err2" &
g=$!
wait_for_line "$TMP/err2" 'is not traced: a thread of it did not stop' 30 || not_ok "detach: gputop gave up probing it first"
kill -TERM "$g"
sleep 0.5
touch "$stop"	# the child ends: its parent can stop, and the detach go on
wait_pid "$g" 30
expect_eq "$WAIT_STATUS" 0 "detach while a vfork child lives: gputop ends (status 0)"
for _ in $(seq 100); do grep -q '^rb_vfork: done$' "$TMP/out2" && break; sleep 0.05; done
expect_match "$(tail -n 1 "$TMP/out2")" '^rb_vfork: done$' "detach while a vfork child lives: the program ends as untraced"
pkill -KILL -f "$BIN/rb_vfork" 2>/dev/null
finish
