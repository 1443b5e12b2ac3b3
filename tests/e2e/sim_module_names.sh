#!/usr/bin/env bash
# Kernels loaded while gputop traces (tests/progs/module_names.c on the SIMULATED libcuda.so.1):
# cuModuleGetFunction and cuLibraryGetKernel go through the call stub (no stop, no int3), and
# each handle is named at its first launch's park by asking the driver (cuFuncGetName,
# cuKernelGetName), not from the caller's name buffer, which the program writes over as soon as
# each call returned. A handle looked up again is asked again at its next launch: the one the
# simulated driver reuses for another kernel (as a driver may after a module's unload) counts
# under its new name from then on, its earlier launch under the old one. The same with
# GPUTOP_CALL_STUB=0, where module loading keeps its int3 and the name is read at the return.
source "$(dirname "$0")/../lib.sh"
need_bin module_names simdrv/libcuda.so.1
need_gputop

export LD_LIBRARY_PATH=$SIMDRV
WANT='module_names: functions=8 kernels=8 launches=57 reused=1 failures=0'
run_plain "$TMP/plain" "$BIN/module_names"
expect_eq "$(cat "$TMP/plain.out")" "$WANT" "module_names works on the simulated driver"

# check FILE WHAT: the figures of one run.
check() {
	local F=$1 what=$2 i
	jq_eq "$F" '.launches' 57 "$what: 57 launches"
	jq_eq "$F" '.kernels | length' 17 "$what: 17 kernels"
	jq_eq "$F" '[.kernels[].name | select(test("@|overwrite"))]' '[]' "$what: every kernel named by its own name"
	expect_kernel "$F" 'mfun_0(float*)' 1 '[1,1,1]' '[32,1,1]'
	expect_kernel "$F" 'mfun_1(float*)' 4 '[2,1,1]' '[32,1,1]'
	for i in 2 3 4 5 6 7; do
		expect_kernel "$F" "mfun_$i(float*)" $((i + 1)) "[$((i + 1)),1,1]" '[32,1,1]'
	done
	for i in 0 1 2 3 4 5 6 7; do
		expect_kernel "$F" "lker_$i(int*)" 2 '[1,1,1]' '[64,1,1]'
	done
	expect_kernel "$F" 'reused(float*)' 3 '[5,1,1]' '[128,1,1]'
	expect_api "$F" cuModuleGetFunction 10 0
	expect_api "$F" cuLibraryGetKernel 8 0
	expect_launch_api "$F" 57 cuLaunchKernel
}

run_gputop_json "$TMP/stub.json" -- -q -- "$BIN/module_names" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "call stub: gputop exits with the program's status"
expect_eq "$(prog_lines "$GPUTOP_OUT" module_names)" "$WANT" "call stub: the program's output"
check "$TMP/stub.json" "call stub"
# Parks: 16 first launches, mfun_1's and the reused handle's next ones; one stop more at the
# start (19 here). Module loading stopping at its entry and return would add 36.
jq_range "$TMP/stub.json" '.cost.stops' 18 20 "call stub: the parks (one stop a handle asked), no stop of module loading"

GPUTOP_CALL_STUB=0 run_gputop_json "$TMP/int3.json" -- -q -- "$BIN/module_names" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "int3: gputop exits with the program's status"
expect_eq "$(prog_lines "$GPUTOP_OUT" module_names)" "$WANT" "int3: the program's output"
check "$TMP/int3.json" "int3 (GPUTOP_CALL_STUB=0)"
finish
