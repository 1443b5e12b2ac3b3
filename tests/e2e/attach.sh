#!/usr/bin/env bash
# Acceptance 5: attach mode. A program started before gputop (wait_then_work, on the SIMULATED
# runtime) is attached; only the work it does after the attach is counted, exactly; when gputop
# detaches it goes on and finishes with the right output and exit status 0.
#  1. gputop stays until the program exits: figures of 2 iterations of workload.cpp, exit_status 0.
#  2. gputop -n 2 detaches while the program still waits: exit_status null, nothing counted,
#     and the program then works normally (no breakpoint left behind).
#  3. SIGINT to gputop detaches the same way.
source "$(dirname "$0")/../lib.sh"
need_bin wait_then_work sim/libcudart.so.13
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"

export LD_LIBRARY_PATH=$SIM
MiB=1048576

# Baseline: the same work without gputop (the go file exists from the start).
touch "$TMP/go-now"
run_plain "$TMP/plain" "$BIN/wait_then_work" --go "$TMP/go-now" --iters 2
grep -v '^ready ' "$TMP/plain.out" >"$TMP/plain.lines"
expect_match "$(cat "$TMP/plain.lines")" '^wait_then_work: ok iterations=2$' "works without gputop"

# start_target NAME: starts wait_then_work waiting for $TMP/go-NAME; pid in TARGET.
start_target() {
	spawn "$TMP/$1" "$BIN/wait_then_work" --go "$TMP/go-$1" --iters 2
	TARGET=$SPAWNED_PID
	wait_for_line "$TMP/$1.out" '^ready [0-9]+$' 30 || bail "$1: the program said ready"
}

# start_gputop NAME ARGS...: gputop -p TARGET --json $TMP/NAME.json ARGS in the background;
# waits for it to say it attached. (env --default-signal: bash starts background commands with
# SIGINT ignored, and part 3 sends SIGINT.)
start_gputop() {
	local name=$1
	shift
	spawn "$TMP/gputop-$name" env --default-signal=INT "$GPUTOP" -p "$TARGET" \
		--json "$TMP/$name.json" "$@"
	GPUTOP_PID=$SPAWNED_PID
	if wait_for_line "$TMP/gputop-$name.err" 'attached' 30; then
		ok "$name: gputop says it attached"
	else
		not_ok "$name: gputop says it attached (a line with \"attached\" on stderr)"
		tail -n 10 "$TMP/gputop-$name.err" | sed 's/^/#   stderr: /'
	fi
}

# --- 1. attached until the program exits -----------------------------------------------------
start_target stay
start_gputop stay -b -d 0.2
touch "$TMP/go-stay"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "stay: the program exits with status 0"
grep -v '^ready ' "$TMP/stay.out" >"$TMP/stay.lines"
expect_file_eq "$TMP/stay.lines" "$TMP/plain.lines" "stay: program output as without gputop"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "stay: gputop ends when the program exits, status 0"
F=$TMP/stay.json
if jq -e . "$F" >/dev/null 2>&1; then
	ok "stay: JSON summary written"
	jq_eq "$F" '.launched' false "stay: attach mode"
	jq_eq "$F" '.pid' "$TARGET" "stay: pid"
	jq_eq "$F" '.exit_status' 0 "stay: the program's exit status was seen"
	expect_api "$F" cudaMalloc 6 0
	expect_api "$F" cudaMallocHost 2 0
	expect_api "$F" cudaMemcpy 6 0
	expect_api "$F" cudaMemcpyAsync 2 0
	expect_api "$F" cudaMemset 2 0
	expect_launch_api "$F" 30 cudaLaunchKernel cuLaunchKernel
	expect_api "$F" cudaDeviceSynchronize 2 0
	expect_api "$F" cudaFree 4 0
	jq_eq "$F" '.launches' 30 "stay: 30 launches"
	expect_kernel "$F" 'scale(float*, int)' 20 '[4,2,1]' '[128,1,1]'
	expect_kernel "$F" 'void ml::axpy<float>(float*, float*, int)' 10 '[8,1,1]' '[256,1,1]'
	expect_xfer "$F" H2D 4 $((2 * MiB + 2 * 4096))
	expect_xfer "$F" D2H 2 $((2 * MiB))
	expect_xfer "$F" D2D 2 $((2 * MiB))
	jq_eq "$F" '.memory.live_allocations' 4 "stay: 4 live allocations"
	jq_eq "$F" '.memory.live_bytes' $((6 * MiB)) "stay: 6 MiB live"
	jq_eq "$F" '.memory.leaks | length' 4 "stay: 4 leaks"
else
	not_ok "stay: JSON summary written to $F"
fi

# --- 2. gputop -n 2 detaches first; the program goes on unharmed ----------------------------------
start_target detach
start_gputop detach -b -d 0.2 -n 2
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "detach: gputop ends after 2 refreshes, status 0"
expect_running "$TARGET" "detach: the program still runs"
touch "$TMP/go-detach"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "detach: the program exits with status 0 (no breakpoint left)"
grep -v '^ready ' "$TMP/detach.out" >"$TMP/detach.lines"
expect_file_eq "$TMP/detach.lines" "$TMP/plain.lines" "detach: program output as without gputop"
F=$TMP/detach.json
if jq -e . "$F" >/dev/null 2>&1; then
	jq_eq "$F" '.exit_status' null "detach: exit_status null (the program outlived the session)"
	jq_eq "$F" '[.api[] | select(.calls > 0)] | length' 0 "detach: no call counted"
	jq_eq "$F" '.launches' 0 "detach: no launch counted"
else
	not_ok "detach: JSON summary written to $F"
fi

# --- 3. SIGINT to gputop detaches too ------------------------------------------------------
start_target sigint
start_gputop sigint -b -d 0.2
kill -INT "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "sigint: gputop detaches and ends on SIGINT, status 0"
touch "$TMP/go-sigint"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "sigint: the program exits with status 0"
grep -v '^ready ' "$TMP/sigint.out" >"$TMP/sigint.lines"
expect_file_eq "$TMP/sigint.lines" "$TMP/plain.lines" "sigint: program output as without gputop"
jq_eq "$TMP/sigint.json" '.exit_status' null "sigint: exit_status null"
finish
