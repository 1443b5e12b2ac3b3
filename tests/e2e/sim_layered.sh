#!/usr/bin/env bash
# The SIMULATED runtime over the SIMULATED driver, as on a real machine: every runtime call also
# reaches the driver (cudaMalloc -> cuMemAlloc_v2, cudaLaunchKernel -> cuLaunchKernel, through
# cuGetProcAddress pointers), and gputop must count each operation ONCE: basic 2 is still 30
# launches, 8 allocations, 2 MiB + 8 KiB to the device, named as the program's kernels.
source "$(dirname "$0")/../lib.sh"
need_bin basic sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop

export LD_LIBRARY_PATH=$SIM:$SIMDRV
MiB=1048576
run_plain "$TMP/plain" "$BIN/basic" 2
expect_match "$(cat "$TMP/plain.out")" '^basic: ok iterations=2$' "basic works on the layered simulation"
run_gputop_json "$TMP/s.json" -- -b -- "$BIN/basic" 2 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" basic >"$TMP/traced.lines"
prog_lines "$TMP/plain.out" basic >"$TMP/plain.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "program output is the same under gputop"

F=$TMP/s.json
# What the program called, once each.
expect_api "$F" cudaMalloc 6 0
expect_api "$F" cudaMallocHost 2 0
expect_api "$F" cudaMemcpy 6 0
expect_api "$F" cudaMemcpyAsync 2 0
expect_api "$F" cudaMemset 2 0
expect_api "$F" cudaDeviceSynchronize 2 0
expect_api "$F" cudaFree 4 0
# Operations, once each although both layers saw them.
expect_launch_api "$F" 30 cudaLaunchKernel cuLaunchKernel
jq_eq "$F" '.launches' 30 "30 launches, not 60"
jq_eq "$F" '.kernels | length' 2 "two kernels"
expect_kernel "$F" 'scale(float*, int)' 20 '[4,2,1]' '[128,1,1]'
expect_kernel "$F" 'void ml::axpy<float>(float*, float*, int)' 10 '[8,1,1]' '[256,1,1]'
expect_xfer "$F" H2D 4 $((2 * MiB + 2 * 4096))
expect_xfer "$F" D2H 2 $((2 * MiB))
expect_xfer "$F" D2D 2 $((2 * MiB))
jq_eq "$F" '.memset | {calls, bytes}' "{\"calls\":2,\"bytes\":$((6 * MiB))}" "2 memsets of 3 MiB"
jq_eq "$F" '.synchronize.calls' 2 "2 synchronize calls"
jq_eq "$F" '.memory.allocations' 8 "8 allocations, not 16"
jq_eq "$F" '.memory.frees' 4 "4 frees, not 8"
jq_eq "$F" '.memory.live_allocations' 4 "4 live allocations"
jq_eq "$F" '.memory.live_bytes' $((6 * MiB)) "6 MiB of device memory live"
jq_eq "$F" '.memory.live_host_bytes' 8192 "8192 B of host memory live"
jq_eq "$F" '[.memory.leaks[] | {bytes, api}] | sort_by(.bytes)' \
	'[{"bytes":4096,"api":"cudaMallocHost"},{"bytes":4096,"api":"cudaMallocHost"},{"bytes":3145728,"api":"cudaMalloc"},{"bytes":3145728,"api":"cudaMalloc"}]' \
	"leaks are attributed to the runtime calls the program made"
finish
