#!/usr/bin/env bash
# Robustness, gputop ending badly (issue 5); the traced program (4 threads calling CUDA as fast
# as they can on the SIMULATED runtime, tests/progs/rb_busy.c) must always finish with exactly
# the output and status it has without gputop.
#  1. SIGINT, SIGTERM, SIGHUP, SIGQUIT to gputop: a clean detach, gputop exits 0.
#  2. gputop crashing (GPUTOP_TEST_CRASH=segv:N / abort:N, a test-only switch: SIGSEGV or abort()
#     at its Nth stop, in the middle of a busy multi-threaded run): the crash handler restores
#     every byte and return address, brings every thread (those running, and those whose stop
#     was not read yet) back into the program's code and detaches; gputop then dies of its
#     signal (139 / 134). In attach and in launch mode; and a crash in another thread of gputop
#     (GPUTOP_TEST_CRASH=thread:N, as if the UI thread crashed), which hands the rescue to the
#     thread that may use ptrace.
#  3. SIGKILL of gputop while the program is quiet, its threads inside a long traced call
#     (return addresses swapped): the watchdog process restores bytes and return addresses.
#     What is guaranteed, as README says: the program survives a SIGKILL of gputop if no thread
#     is stopped at one of gputop's breakpoints at that instant (the kernel then releases it
#     with the SIGTRAP pending, and nothing can undo that). Under a program calling CUDA
#     thousands of times a second that is likely, so this test kills gputop only while the
#     program is quiet; the busy case is not asserted.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_busy sim/libcudart.so.13
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIM

# --- 1. signals to gputop ---------------------------------------------------------------------
export RB_STOP_FILE=$TMP/stop
rm -f "$TMP/stop"
rb_spawn busy "$BIN/rb_busy" busy 4 0
for sig in INT TERM HUP QUIT; do
	# -b -d 0.1: its tables show when it has seen calls (a fixed pause may see none on a loaded
	# machine, and the JSON must show them; with the stubs none of them stops)
	rb_gputop_bg "sig$sig" -p "$TARGET" -b -d 0.1 --json "$TMP/sig$sig.json"
	rb_wait_attached "sig$sig"
	wait_for_line "$TMP/sig$sig.out" '^cudaMalloc +[1-9]' 20 || note "SIG$sig: no cudaMalloc in gputop's tables after 20 s"
	kill -"$sig" "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 20
	expect_eq "$WAIT_STATUS" 0 "SIG$sig to gputop: it detaches and exits 0"
	expect_match "$(cat "$TMP/sig$sig.err")" 'detached from' "SIG$sig: gputop says it detached"
	jq_check "$TMP/sig$sig.json" '.exit_status == null and ([.api[] | select(.name == "cudaMalloc") | .calls] | add) > 0' \
		"SIG$sig: the JSON summary is written, the program outlived the session"
	expect_running "$TARGET" "SIG$sig: the program runs on"
done
touch "$TMP/stop"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "after 4 signals to gputop: the program exits 0"
expect_eq "$(grep -v '^ready' "$TMP/busy.out")" 'rb_busy: threads=4 iterations=many failures=0 mismatches=0' \
	"after 4 signals to gputop: its output"
rb_no_trap "$TMP/busy.err" "signals to gputop"

# launch mode: SIGTERM to gputop alone (kill, not the terminal) detaches; the program runs on
rm -f "$TMP/stop"
rb_gputop_bg term-launch -q --json "$TMP/term-launch.json" -- "$BIN/rb_busy" busy 4 0
wait_for_line "$TMP/term-launch.out" '^ready' 20
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/term-launch.out")
sleep 0.3
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "launch, SIGTERM to gputop: it detaches and exits 0"
expect_running "$PROG" "launch, SIGTERM to gputop: the program runs on"
touch "$TMP/stop"
wait_gone "$PROG" 30
expect_eq "$(grep -v '^ready' "$TMP/term-launch.out")" 'rb_busy: threads=4 iterations=many failures=0 mismatches=0' \
	"launch, SIGTERM to gputop: the program's output"
unset RB_STOP_FILE

# --- 2. gputop crashes -------------------------------------------------------------------------
# At its Nth stop: the calls and the launches stop at their entry here (GPUTOP_CALL_STUB=0, and
# GPUTOP_LAUNCH_RING=0 for the runtime's launches, which go through the launch ring without
# libcuda), the state with the most to restore (int3s, swapped return addresses); with the stubs
# a busy program makes only a handful of stops, and part 4 covers it.
export GPUTOP_CALL_STUB=0 GPUTOP_LAUNCH_RING=0
EXPECTED='rb_busy: threads=4 iterations=600 failures=0 mismatches=0'
export RB_GO_FILE=$TMP/go
touch "$TMP/go"
rb_plain plain "$BIN/rb_busy" busy 4 150
expect_eq "$(grep -v '^ready' "$TMP/plain.plain")" "$EXPECTED" "without gputop: the output"

# crash_attach MODE N: gputop -p crashes at its Nth stop; the program must finish unharmed.
crash_attach() {
	local name=$1-$2 want=139
	[ "$1" == abort ] && want=134
	rm -f "$TMP/go"
	rb_spawn "$name" "$BIN/rb_busy" busy 4 150
	spawn "$TMP/$name-g" env GPUTOP_TEST_CRASH="$1:$2" "$GPUTOP" -p "$TARGET"
	GPUTOP_PID=$SPAWNED_PID
	rb_wait_attached "$name-g"
	touch "$TMP/go"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" "$want" "$name: gputop dies of its signal ($want)"
	expect_match "$(cat "$TMP/$name-g.err")" 'crashed; restored' "$name: the crash handler restored the program"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "$name: the program exits 0"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$EXPECTED" "$name: the program's output"
	rb_no_trap "$TMP/$name.err" "$name"
}
crash_attach segv 40
crash_attach segv 1500
crash_attach abort 300
crash_attach abort 2500
crash_attach thread 700	# a crash in another thread of gputop than the one that traces

# launch mode: the program is gputop's child; it goes on alone after the crash.
touch "$TMP/go"
spawn "$TMP/crash-launch" env GPUTOP_TEST_CRASH=segv:700 "$GPUTOP" -- "$BIN/rb_busy" busy 4 150
wait_pid "$SPAWNED_PID" 30
expect_eq "$WAIT_STATUS" 139 "launch, segv:700: gputop dies of SIGSEGV"
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/crash-launch.out")
wait_gone "$PROG" 30
expect_eq "$(grep -v '^ready' "$TMP/crash-launch.out")" "$EXPECTED" "launch, segv:700: the program's output"
rb_no_trap "$TMP/crash-launch.err" "launch, segv:700"
unset RB_GO_FILE GPUTOP_CALL_STUB GPUTOP_LAUNCH_RING

# --- 3. SIGKILL: the watchdog ----------------------------------------------------------------------
# The simulated runtime's hook tells when both threads are inside cudaDeviceSynchronize (past
# its entry breakpoint, return addresses swapped): no fixed pause that a loaded machine outlasts.
export SIMCUDA_SYNC_US=1500000 RB_GO_FILE=$TMP/go SIMCUDA_SYNC_HOOK=rb_busy_in_sync RB_COUNT_FILE=$TMP/in-sync
# kill_in_sync NAME GPUTOP_ENV...: both threads inside cudaDeviceSynchronize, gputop killed.
kill_in_sync() {
	local name=$1 what=$1
	shift
	rm -f "$TMP/go" "$TMP/in-sync"
	rb_spawn "$name" "$BIN/rb_busy" sync 2
	env "$@" bash -c 'exec "$0" -p "$1" -b -d 100 >"$2.out" 2>"$2.err" </dev/null' \
		"$GPUTOP" "$TARGET" "$TMP/$name-g" &
	GPUTOP_PID=$!
	rb_wait_attached "$name-g"
	touch "$TMP/go"
	wait_for_line "$TMP/in-sync" '^2$' 20 || note "$what: the threads did not both say they are inside the call"
	kill -KILL "$GPUTOP_PID"
	wait "$GPUTOP_PID" 2>/dev/null
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "$what: the program exits 0"
	printf 'rb_busy: in sync\nrb_busy: sync threads=2 returned=2 canaries=2\n' >"$TMP/$name.want"
	grep -v '^ready' "$TMP/$name.out" >"$TMP/$name.lines"
	expect_file_eq "$TMP/$name.lines" "$TMP/$name.want" "$what: both calls returned to their callers"
	if wait_for_line "$TMP/$name-g.err" 'watchdog: gputop died; restored' 20; then
		ok "$what: the watchdog says it restored the program"
	else
		not_ok "$what: the watchdog says it restored the program"
		tail -n 5 "$TMP/$name-g.err" | sed 's/^/#   stderr: /'
	fi
}
# The calls return through the call stub, which needs nobody.
kill_in_sync kill GPUTOP_DEBUG=0
# Every return through the trampoline (GPUTOP_RETFAST=0): the watchdog writes no stack; it turns
# the trampoline into a jump to the lookup, which finds each thread's return address by the
# stack slot its ret popped (part 5 of issue 17). Broken, both threads die of SIGTRAP there.
kill_in_sync kill-tramp GPUTOP_RETFAST=0
finish
