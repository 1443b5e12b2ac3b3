#!/usr/bin/env bash
# Acceptance 4: 4 threads x 20,000 launches each, all at once, on the SIMULATED runtime: gputop
# counts exactly 80,000, and the program's own count and exit status are right. Without
# libcuda the runtime's launches go through the launch ring (no stop); with
# GPUTOP_LAUNCH_RING=0 each stops at its int3: no hit lost while other threads run through the
# breakpoint.
source "$(dirname "$0")/../lib.sh"
need_bin threads sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM
# run WHAT: the program under gputop, its figures. Through the ring, a launch the full ring
# dropped (gputop late on a loaded machine) is counted under its kernel all the same.
run() {
	local what=$1
	run_gputop_json "$TMP/$what.json" -- -b -- "$BIN/threads" 4 20000 || return 1
	expect_eq "$GPUTOP_STATUS" 0 "$what: gputop exits with the program's status"
	expect_eq "$(prog_lines "$GPUTOP_OUT" threads)" "threads: total=80000 failures=0" \
		"$what: the program counted 80000 successful launches"
	F=$TMP/$what.json
	expect_launch_api "$F" 80000 cudaLaunchKernel cuLaunchKernel
	jq_eq "$F" '.launches' 80000 "$what: 80000 launches counted"
	jq_eq "$F" '.launches_estimated' false "$what: counted, not estimated"
	if [ "$what" == ring ]; then
		jq_eq "$F" '[.kernels[] | .name]' '["worker_kernel(int*)"]' "$what: one kernel"
		jq_eq "$F" '[.kernels[].launches] | add' 80000 "$what: its 80000 launches, recorded or dropped"
		note "$what: records dropped by the full ring: $(jq '.cost.lost_records' "$F")"
	else
		jq_eq "$F" '.kernels | length' 1 "$what: one kernel"
		expect_kernel "$F" 'worker_kernel(int*)' 80000 '[1,1,1]' '[32,1,1]'
	fi
}

run ring && jq_check "$TMP/ring.json" '.cost.stops < 100' "ring: the launches stop nothing (a park at the kernel's first)"
export GPUTOP_LAUNCH_RING=0
run int3 && jq_check "$TMP/int3.json" '.cost.stops >= 80000' "int3 (GPUTOP_LAUNCH_RING=0): at least one stop per launch"
finish
