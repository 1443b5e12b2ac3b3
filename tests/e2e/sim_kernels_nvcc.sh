#!/usr/bin/env bash
# A real nvcc program (tests/progs/kernels.cu, built with -cudart shared) with <<<>>> launches:
# CUDA 13's stubs launch through __cudaLaunchKernel(handle, ...) -> cudaLaunchKernel, so gputop
# must name kernels from handles (the stubs' static __handle variables, __cudaGetKernel). On the
# SIMULATED runtime alone, then over the SIMULATED driver (where handles are the driver's CUkernels
# and every launch also reaches cuLaunchKernel: still 18 launches, not 35).
source "$(dirname "$0")/../lib.sh"
need_bin kernels sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop

check_kernels() {
	local F=$1 what=$2
	jq_eq "$F" '.launches' 18 "$what: 18 launches"
	jq_eq "$F" '.kernels | length' 4 "$what: four kernels"
	jq_eq "$F" '[.kernels[].name | select(test("@"))]' '[]' "$what: every kernel named"
	expect_kernel "$F" 'vec_add(float*, float const*, int)' 8 '[32,1,1]' '[128,1,1]'
	expect_kernel "$F" 'nn::relu(float*, int)' 5 '[8,1,1]' '[512,1,1]'
	expect_kernel "$F" 'void fill<float>(float*, float, int)' 3 '[4,1,1]' '[1024,1,1]'
	expect_kernel "$F" 'void fill<int>(int*, int, int)' 2 '[64,1,1]' '[64,1,1]'
	expect_launch_api "$F" 17 cudaLaunchKernel cuLaunchKernel
	expect_launch_api "$F" 1 cudaLaunchKernelExC cuLaunchKernelEx
	expect_api "$F" cudaMalloc 3 0
	expect_api "$F" cudaMemset 1 0
	expect_api "$F" cudaMemcpy 2 0
	expect_api "$F" cudaFree 3 0
	expect_api "$F" cudaDeviceSynchronize 1 0
	jq_eq "$F" '.memory.allocations' 3 "$what: 3 allocations"
	jq_eq "$F" '.memory.live_allocations' 0 "$what: nothing left allocated"
	expect_xfer "$F" D2H 2 32768
	jq_eq "$F" '.memset | {calls, bytes}' '{"calls":1,"bytes":16384}' "$what: one memset of 16384 B"
}

for mode in runtime layered; do
	if [ $mode == runtime ]; then
		export LD_LIBRARY_PATH=$SIM
	else
		export LD_LIBRARY_PATH=$SIM:$SIMDRV
	fi
	note "--- simulated $mode (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
	run_plain "$TMP/plain-$mode" "$BIN/kernels"
	expect_match "$(cat "$TMP/plain-$mode.out")" '^kernels: ok$' "$mode: kernels works without gputop"
	run_gputop_json "$TMP/$mode.json" -- -b -- "$BIN/kernels" || continue
	expect_eq "$GPUTOP_STATUS" 0 "$mode: gputop exits with the program's status"
	prog_lines "$GPUTOP_OUT" kernels >"$TMP/traced.lines"
	prog_lines "$TMP/plain-$mode.out" kernels >"$TMP/plain.lines"
	expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "$mode: program output is the same under gputop"
	check_kernels "$TMP/$mode.json" "$mode"
done
finish
