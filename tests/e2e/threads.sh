#!/usr/bin/env bash
# Acceptance 4: 4 threads x 20,000 launches each, all at once, on the SIMULATED runtime: gputop
# counts exactly 80,000 (no hit lost while other threads run through the breakpoint), and the
# program's own count and exit status are right.
source "$(dirname "$0")/../lib.sh"
need_bin threads sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM
run_gputop_json "$TMP/s.json" -- -b -- "$BIN/threads" 4 20000 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
expect_eq "$(prog_lines "$GPUTOP_OUT" threads)" "threads: total=80000 failures=0" \
	"the program counted 80000 successful launches"
F=$TMP/s.json
expect_launch_api "$F" 80000 cudaLaunchKernel cuLaunchKernel
jq_eq "$F" '.launches' 80000 "80000 launches counted"
jq_eq "$F" '.launches_estimated' false "counted, not estimated"
jq_eq "$F" '.kernels | length' 1 "one kernel"
expect_kernel "$F" 'worker_kernel(int*)' 80000 '[1,1,1]' '[32,1,1]'
jq_check "$F" '.cost.stops >= 80000' "at least one stop per launch"
finish
