#!/usr/bin/env bash
# Exact at any rate (issue 32): every total is kept in the program by the stubs (arch/tally.c),
# so a gputop that falls behind loses detail, never a count. gputop is made late on purpose:
# 8 threads each launch their own kernel and allocate (tests/progs/exact_storm.c, SIMULATED
# runtime, alone and over the simulated driver), in two halves; gputop is frozen (SIGSTOP) for
# 2 s while the second half and every free run, or starved by a busy loop on every CPU for the
# whole run, in launch and attach mode. Then every per-kernel count, per-function count and
# error, the allocations, frees and the live table (8 live, their bytes) must be exact, though
# the rings dropped most records. And a PyTorch-sized burst of kernel registrations
# (registered_kernels 21000 100) loses no record: registrations are kept in place.
# EXACT_TRIALS runs each case (default 1; make check-robust: 20).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin exact_storm registered_kernels sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
TRIALS=${EXACT_TRIALS:-1}
T=8
N=10000

# exact FILE WHAT LATE LAUNCH_ROWS...: the figures of one run of exact_storm T N. LATE: how the
# kernels first launched while gputop was frozen are named: by name where their host function
# names them (the runtime's launches), "any" where only the driver could have named them, at a
# park that a frozen gputop could not serve (then "kernel@0x…", their count exact all the same).
exact() {
	local F=$1 what=$2 late=$3 t bad
	shift 3
	bad=$(jq -r --argjson n "$N" --argjson t "$T" --arg late "$late" '
		[range(0; $t) as $i | "worker\($i)" as $w | "late\($i)" as $l |
		 ((.kernels | map(select(.name == $w)) | .[0].launches // 0) as $c | select($c != $n) | "\($w) \($c)"),
		 (select($late == "named") |
		  (.kernels | map(select(.name == $l)) | .[0].launches // 0) as $c | select($c != 1) | "\($l) \($c)")]
		| join(", ")' "$F")
	expect_eq "$bad" "" "$what: each thread's kernel $N launches, its late one 1 (none off)"
	jq_eq "$F" '[.kernels[] | select(.name | test("^worker") | not) | .launches] | sort | unique' '[1]' \
		"$what: the $T late kernels, 1 launch each"
	jq_eq "$F" '.kernels | length' $((2 * T)) "$what: $((2 * T)) kernels, none split"
	expect_launch_api "$F" $((T * (N + 1))) "$@"
	jq_eq "$F" '.launches' $((T * (N + 1))) "$what: $((T * (N + 1))) launches"
	expect_api "$F" cudaMalloc $((T * N)) 0
	expect_api "$F" cudaFree $((T * (N - 1))) 0
	jq_eq "$F" '.memory.allocations' $((T * N)) "$what: every allocation counted"
	jq_eq "$F" '.memory.frees' $((T * (N - 1))) "$what: every free counted"
	jq_eq "$F" '.memory.live_allocations' "$T" "$what: exactly the $T allocations never freed live"
	jq_eq "$F" '.memory.live_bytes' $((T * 256 + T * (T - 1) / 2)) "$what: their bytes"
	note "$what: $(jq '.cost.lost_records' "$F") records dropped (detail only)"
}

# storm NAME LIBS MODE HOW: one run of exact_storm (robust_lib.bash's rb_storm).
storm() {
	rb_storm "$1" "$3" "$4" env LD_LIBRARY_PATH="$2" "$BIN/exact_storm" $T $N
	expect_match "$(grep '^exact_storm:' "$STORM_OUT")" "live=$T .*failures=0" "$1: the program's calls all succeeded"
}

for ((trial = 1; trial <= TRIALS; trial++)); do
	for how in launch attach; do
		for mode in frozen starved; do
			storm "rt-$how-$mode-$trial" "$SIM" "$mode" "$how"
			exact "$TMP/rt-$how-$mode-$trial.json" "runtime, $how, $mode ($trial)" named cudaLaunchKernel
		done
		storm "drv-$how-frozen-$trial" "$SIM:$SIMDRV" frozen "$how"
		exact "$TMP/drv-$how-frozen-$trial.json" "over the driver, $how, frozen ($trial)" any cudaLaunchKernel cuLaunchKernel
	done
done

# A process whose first CUDA call is a launch (tests/progs/rb_kernels.c over the simulated
# driver): the runtime's launch that loads the driver counts, the driver's launch inside it is
# named at its park all the same (it once went unnamed: one row "rbk_000 1" and one
# "kernel@0x… 1"), launched and attached before the first call.
first_launch() {
	local F=$1 what=$2
	jq_eq "$F" '.kernels | length' 64 "$what: 64 kernels, one row each"
	jq_eq "$F" '[.kernels[] | select((.name | test("^rbk_0[0-3][0-9a-f]$") | not) or .launches != 2)]' '[]' \
		"$what: each named by its own name, 2 launches"
	jq_eq "$F" '.launches' 128 "$what: 128 launches"
}
run_gputop_json "$TMP/first.json" -- -q -- env LD_LIBRARY_PATH="$SIM:$SIMDRV" "$BIN/rb_kernels" 64 0
first_launch "$TMP/first.json" "first call a launch, launched"
export RB_GO_FILE=$TMP/first.go
spawn "$TMP/first-prog" env LD_LIBRARY_PATH="$SIM:$SIMDRV" "$BIN/rb_kernels" 64 0
prog=$SPAWNED_PID
wait_for_line "$TMP/first-prog.out" '^ready [0-9]+$' 30 || not_ok "first call a launch: the program started"
rb_gputop_bg first-attach --json "$TMP/first-attach.json" -p "$prog"
rb_wait_attached first-attach
touch "$RB_GO_FILE"
wait_pid "$prog" 60
expect_eq "$WAIT_STATUS" 0 "first call a launch, attached: the program exits 0"
wait_pid "$GPUTOP_PID" 60
first_launch "$TMP/first-attach.json" "first call a launch, attached"
unset RB_GO_FILE

# Registrations: a burst larger than the calls' ring, kept in place (no record), every kernel
# launched later named from the names the stubs kept.
export RB_STOP_FILE=
run_gputop_json "$TMP/reg.json" -- -q -- env LD_LIBRARY_PATH="$SIM" "$BIN/registered_kernels" 21000 100 /dev/null
expect_eq "$GPUTOP_STATUS" 0 "registered_kernels: gputop exits 0"
jq_eq "$TMP/reg.json" '.cost.lost_records' 0 "21,000 registrations: no record lost"
jq_eq "$TMP/reg.json" '[.kernels[] | select(.name | test("^kernel[0-9]{5}\\(float\\*, int\\)$"))] | length' 100 \
	"the 100 kernels launched, each named from its registration"
jq_eq "$TMP/reg.json" '.launches' 5050 "5,050 launches"
finish
