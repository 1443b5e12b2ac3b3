#!/usr/bin/env bash
# Robustness, detach under load (issue 5):
#  1. 100 attach/detach cycles in a row (gputop -p PID -b -n 1 -d 0.01, or --timeout 0.05) to a
#     program whose 4 threads call CUDA as fast as they can (SIMULATED runtime): after every
#     cycle it still runs, and it finishes with exactly the output it has without gputop.
#  2. 50 cycles to a program that starts and ends threads all the time (attach re-reads the
#     thread list until it is stable; new threads come and go during the detach), 20 of them
#     with --max-overhead (every thread then also stops at its exit).
#  3. Detach while threads are inside a traced call (cudaDeviceSynchronize, which busy-waits
#     SIMCUDA_SYNC_US on the simulated runtime) with their return address swapped: after the
#     detach each call returns to its own caller (stack canary intact) and the program finishes
#     correctly; in attach mode (SIGTERM to gputop) and in launch mode (--timeout).
# Programs: tests/progs/rb_busy.c, rb_threads.c.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_busy rb_threads sim/libcudart.so.13
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIM

# cycles NAME N: N attach/detach cycles to TARGET (with the options in CYCLE_ARGS too); every
# 10th (a 0.5 s session) writes a JSON summary, which must name the target and have seen calls.
# Fails at the first cycle after which the target is gone.
CYCLE_ARGS=()
cycles() {
	local name=$1 n=$2 i bad=0 status args
	for ((i = 1; i <= n; i++)); do
		if ((i % 2)); then
			args=(-b -n 1 -d 0.01)
		else
			args=(--timeout 0.05)
		fi
		if ((i % 10 == 0)); then
			# a session long enough to see calls whatever the load: in 50 ms a loaded
			# machine may not run the program's threads at all
			args=(--timeout 0.5 --json "$TMP/$name-$i.json")
		fi
		args+=("${CYCLE_ARGS[@]}")
		timeout -k 5 30 "$GPUTOP" -q -p "$TARGET" "${args[@]}" >/dev/null 2>"$TMP/$name-cycle.err" </dev/null
		status=$?
		if [ "$status" -ne 0 ]; then
			bad=$((bad + 1))
			note "$name: cycle $i (${args[*]}): gputop status $status"
			tail -n 3 "$TMP/$name-cycle.err" | sed 's/^/#   /'
		fi
		if ! running "$TARGET"; then
			not_ok "$name: the program survives every cycle (gone after cycle $i: $(tail -n 2 "$TMP/$name.err"))"
			return 1
		fi
	done
	ok "$name: the program survives $n attach/detach cycles"
	expect_eq "$bad" 0 "$name: gputop exits 0 every time"
	local j seen=0
	for ((j = 10; j <= n; j += 10)); do
		# its calls, not stops: with the stubs (and the runtime's launches through the launch
		# ring) a busy program makes none
		jq -e ".pid == $TARGET and .exit_status == null and ([.api[].calls] | add // 0) > 0" "$TMP/$name-$j.json" \
			>/dev/null 2>&1 && seen=$((seen + 1))
	done
	expect_eq "$seen" $((n / 10)) "$name: each summary names the program and saw its calls"
}

# --- 1. 100 cycles to a busy program ---------------------------------------------------------------
export RB_STOP_FILE=$TMP/stop
rm -f "$TMP/stop"
rb_spawn busy-plain "$BIN/rb_busy" busy 4 0
sleep 0.3
touch "$TMP/stop"
wait_pid "$TARGET" 30
grep -v '^ready' "$TMP/busy-plain.out" >"$TMP/busy.expected"
expect_eq "$(cat "$TMP/busy.expected")" 'rb_busy: threads=4 iterations=many failures=0 mismatches=0' \
	"without gputop: the busy program's output"

rm -f "$TMP/stop"
rb_spawn busy "$BIN/rb_busy" busy 4 0
start=$(date +%s.%N)
cycles busy 100
note "100 cycles in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
touch "$TMP/stop"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "busy: exit status 0 after 100 cycles"
grep -v '^ready' "$TMP/busy.out" >"$TMP/busy.lines"
expect_file_eq "$TMP/busy.lines" "$TMP/busy.expected" "busy: output as without gputop"
rb_no_trap "$TMP/busy.err" busy

# --- 2. 30 cycles to a program whose threads come and go ---------------------------------------------
rm -f "$TMP/stop"
spawn "$TMP/churn" "$BIN/rb_threads" churn 0 8
TARGET=$SPAWNED_PID
# it has started its threads (it prints nothing before its end): a fixed pause could find it
# not even exec'd yet on a loaded machine
deadline=$(($(date +%s) + 20))
while [ "$(ls "/proc/$TARGET/task" 2>/dev/null | wc -l)" -lt 2 ] && [ "$(date +%s)" -lt "$deadline" ]; do
	sleep 0.02
done
cycles churn 30
# and with --max-overhead, which also stops every thread at its exit (PTRACE_O_TRACEEXIT)
CYCLE_ARGS=(--max-overhead 5)
cycles churn-budget 20
CYCLE_ARGS=()
touch "$TMP/stop"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "churn: exit status 0 after 30 cycles"
expect_eq "$(cat "$TMP/churn.out")" 'rb_threads: churn threads=many failed=0' "churn: output as without gputop"
rb_no_trap "$TMP/churn.err" churn
unset RB_STOP_FILE

# --- 3. detach while calls are in flight ------------------------------------------------------------
export SIMCUDA_SYNC_US=1500000 RB_GO_FILE=$TMP/go SIMCUDA_SYNC_HOOK=rb_busy_in_sync
SYNC_OK='rb_busy: sync threads=3 returned=3 canaries=3'
rm -f "$TMP/go"
touch "$TMP/go"
rb_plain sync "$BIN/rb_busy" sync 3
grep -v '^ready' "$TMP/sync.plain" >"$TMP/sync.expected"
printf 'rb_busy: in sync\n%s\n' "$SYNC_OK" >"$TMP/sync.want"
expect_file_eq "$TMP/sync.expected" "$TMP/sync.want" "without gputop: the sync program's output"

rm -f "$TMP/go"
# The simulated runtime's hook (rb_busy_in_sync) counts the threads inside cudaDeviceSynchronize:
# the detach comes once all three are in (1.5 s each), not after a pause a loaded machine outlasts.
RB_COUNT_FILE=$TMP/in-sync rb_spawn sync-attach "$BIN/rb_busy" sync 3
rb_gputop_bg sync-attach-g -p "$TARGET" --json "$TMP/sync-attach.json"
rb_wait_attached sync-attach-g
touch "$TMP/go"
wait_for_line "$TMP/in-sync" '^3$' 20 || note "the threads did not all say they are inside the call"
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "attach: gputop detaches while 3 calls are in flight, status 0"
expect_running "$TARGET" "attach: the program still runs after the detach"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "attach: the program ends with status 0"
grep -v '^ready' "$TMP/sync-attach.out" >"$TMP/sync-attach.lines"
expect_file_eq "$TMP/sync-attach.lines" "$TMP/sync.expected" \
	"attach: every call in flight returned to its caller (output as without gputop)"
jq_eq "$TMP/sync-attach.json" '.exit_status' null "attach: the JSON says the program outlived the session"
expect_api "$TMP/sync-attach.json" cudaMalloc 3 0
rb_no_trap "$TMP/sync-attach.err" "attach, in flight"

# launch mode: --timeout ends the session while the calls are in flight; the program is then
# left to run on its own, and is no longer gputop's to wait for.
touch "$TMP/go"
rb_traced sync-launch --timeout 0.8 -- "$BIN/rb_busy" sync 3
expect_eq "$TRACED_STATUS" 0 "launch: gputop ends at its --timeout with status 0"
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/sync-launch.traced")
wait_gone "$PROG" 30
expect_eq "$(grep -cx "$SYNC_OK" "$TMP/sync-launch.traced")" 1 \
	"launch: every call in flight returned to its caller"
jq_eq "$TMP/sync-launch.json" '.exit_status' null "launch: the JSON says the program outlived the session"
finish
