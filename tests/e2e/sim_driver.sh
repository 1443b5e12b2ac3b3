#!/usr/bin/env bash
# The driver API called directly (tests/progs/driver.c) on the SIMULATED libcuda.so.1: exact
# figures for driver-layer allocations, copies, launches (named by the driver's cuFuncGetName at
# the first launch's park) and the leak it leaves (b, 131072 B).
source "$(dirname "$0")/../lib.sh"
need_bin driver simdrv/libcuda.so.1
need_gputop

export LD_LIBRARY_PATH=$SIMDRV
run_plain "$TMP/plain" "$BIN/driver"
expect_match "$(cat "$TMP/plain.out")" '^driver: ok launches=9$' "driver works on the simulated driver"
run_gputop_json "$TMP/s.json" -- -b -- "$BIN/driver" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" driver >"$TMP/traced.lines"
prog_lines "$TMP/plain.out" driver >"$TMP/plain.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "program output is the same under gputop"

F=$TMP/s.json
expect_api "$F" cuMemAlloc_v2 2 0
expect_api "$F" cuMemcpyHtoD_v2 1 0
expect_api "$F" cuMemcpyDtoH_v2 1 0
expect_launch_api "$F" 9 cuLaunchKernel
expect_api "$F" cuCtxSynchronize 1 0
expect_api "$F" cuMemFree_v2 1 0
jq_eq "$F" "$(api_row cuLaunchKernel).layer" '"driver"' "cuLaunchKernel is a driver call"
jq_eq "$F" '[.api[] | select(.calls > 0 and .layer == "runtime")]' '[]' "no runtime call"
jq_eq "$F" '.launches' 9 "9 launches"
jq_eq "$F" '.kernels | length' 1 "one kernel"
expect_kernel "$F" 'driver(float*)' 9 '[3,1,1]' '[64,1,1]'
expect_xfer "$F" H2D 1 65536
expect_xfer "$F" D2H 1 65536
expect_xfer "$F" D2D 0 0
jq_eq "$F" '.synchronize.calls' 1 "one synchronize call"
jq_eq "$F" '.memory.allocations' 2 "2 allocations"
jq_eq "$F" '.memory.frees' 1 "1 free"
jq_eq "$F" '.memory.live_allocations' 1 "1 live allocation"
jq_eq "$F" '.memory.live_bytes' 131072 "131072 B live"
jq_eq "$F" '.memory.peak_bytes' 196608 "peak 64 KiB + 128 KiB"
jq_eq "$F" '[.memory.leaks[] | {bytes, api, kind}]' \
	'[{"bytes":131072,"api":"cuMemAlloc_v2","kind":"device"}]' "the 128 KiB buffer leaks"
finish
