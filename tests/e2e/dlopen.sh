#!/usr/bin/env bash
# A CUDA library loaded with dlopen after gputop attached (or started the program) is noticed
# and probed: dlopen_late loads the SIMULATED libcudart.so.13 only after its go signal.
source "$(dirname "$0")/../lib.sh"
need_bin dlopen_late sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM
MiB=1048576

check_late() {
	local F=$1 what=$2
	expect_api "$F" cudaMalloc 3 0
	expect_api "$F" cudaFree 1 0
	expect_launch_api "$F" 4 cudaLaunchKernel cuLaunchKernel
	jq_eq "$F" '.launches' 4 "$what: 4 launches"
	expect_kernel "$F" 'late_kernel' 4 '[2,1,1]' '[64,1,1]'
	jq_eq "$F" '.memory.live_allocations' 2 "$what: 2 live allocations"
	jq_eq "$F" '.memory.live_bytes' $((2 * MiB)) "$what: 2 MiB live"
	jq_eq "$F" '.memory.leaks | length' 2 "$what: 2 leaks"
}

# --- launch mode: the library arrives after the program started ------------------------------
touch "$TMP/go-now"
run_gputop_json "$TMP/launch.json" -- -b -- "$BIN/dlopen_late" --go "$TMP/go-now" &&
	check_late "$TMP/launch.json" launch
expect_eq "$GPUTOP_STATUS" 0 "launch: gputop exits with the program's status"
expect_match "$(cat "$GPUTOP_OUT")" '^dlopen_late: ok mallocs=3 frees=1 launches=4$' "launch: program output"

# --- attach mode: attached before the library is loaded --------------------------------------
if can_attach_to_others; then
	spawn "$TMP/target" "$BIN/dlopen_late" --go "$TMP/go"
	TARGET=$SPAWNED_PID
	wait_for_line "$TMP/target.out" '^ready [0-9]+$' 30 || bail "the program said ready"
	spawn "$TMP/gputop" "$GPUTOP" -p "$TARGET" -b -d 0.2 --json "$TMP/attach.json"
	GPUTOP_PID=$SPAWNED_PID
	if wait_for_line "$TMP/gputop.err" 'attached' 30; then
		ok "attach: gputop says it attached"
	else
		not_ok "attach: gputop says it attached"
		tail -n 10 "$TMP/gputop.err" | sed 's/^/#   stderr: /'
	fi
	touch "$TMP/go"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "attach: the program exits with status 0"
	expect_match "$(cat "$TMP/target.out")" '^dlopen_late: ok mallocs=3 frees=1 launches=4$' \
		"attach: program output"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "attach: gputop ends when the program exits"
	if jq -e . "$TMP/attach.json" >/dev/null 2>&1; then
		check_late "$TMP/attach.json" attach
	else
		not_ok "attach: JSON summary written"
	fi
else
	note "attach part not run: this user may not ptrace other processes"
fi
finish
