#!/usr/bin/env bash
# Acceptance 3: on the SIMULATED runtime (tests/sim: host memory, no GPU) basic allocates,
# copies, launches and frees for real, and gputop's --json figures match what it did, exactly:
# calls, bytes per direction, leaks, kernel names and launch counts. Output and exit status are
# the same with and without gputop. Figures: tests/progs/workload.cpp (per iteration).
source "$(dirname "$0")/../lib.sh"
need_bin basic sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM
MiB=1048576

# --- 3 iterations, leaking 3 MiB of device memory and 4096 B of pinned host memory each -------
run_plain "$TMP/plain" "$BIN/basic" 3
expect_match "$(cat "$TMP/plain.out")" '^basic: ok iterations=3$' "basic works on the simulated runtime"
run_gputop_json "$TMP/s.json" -- -b -- "$BIN/basic" 3 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" basic >"$TMP/traced.lines"
prog_lines "$TMP/plain.out" basic >"$TMP/plain.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "program output is the same under gputop"

F=$TMP/s.json
jq_eq "$F" '.launched' true "launch mode"
jq_eq "$F" '.exit_status' 0 "exit status"
jq_check "$F" '.command | test("basic")' "command names the program"
expect_api "$F" cudaMalloc 9 0
expect_api "$F" cudaMallocHost 3 0
expect_api "$F" cudaMemcpy 9 0
expect_api "$F" cudaMemcpyAsync 3 0
expect_api "$F" cudaMemset 3 0
expect_launch_api "$F" 45 cudaLaunchKernel cuLaunchKernel
expect_api "$F" cudaDeviceSynchronize 3 0
expect_api "$F" cudaFree 6 0
jq_eq "$F" '[.api[] | select(.calls > 0) | .name] | sort' \
	'["cudaDeviceSynchronize","cudaFree","cudaLaunchKernel","cudaMalloc","cudaMallocHost","cudaMemcpy","cudaMemcpyAsync","cudaMemset"]' \
	"no other API function was called"

# Kernels: names demangled from the stubs' symbols.
jq_eq "$F" '.launches' 45 "45 launches in all"
jq_eq "$F" '.launches_estimated' false "launch counts are exact"
jq_eq "$F" '.kernels | length' 2 "two kernels"
expect_kernel "$F" 'scale(float*, int)' 30 '[4,2,1]' '[128,1,1]'
expect_kernel "$F" 'void ml::axpy<float>(float*, float*, int)' 15 '[8,1,1]' '[256,1,1]'

# Transfers: per iteration H2D 1 MiB + 4096 B async, D2D 1 MiB, D2H 1 MiB.
expect_xfer "$F" H2D 6 $((3 * MiB + 3 * 4096))
expect_xfer "$F" D2H 3 $((3 * MiB))
expect_xfer "$F" D2D 3 $((3 * MiB))
expect_xfer "$F" H2H 0 0
jq_eq "$F" "$(xfer_row H2D).sync | {calls, bytes}" "{\"calls\":3,\"bytes\":$((3 * MiB))}" "H2D synchronous: 3 x 1 MiB"
jq_eq "$F" "$(xfer_row H2D).async | {calls, bytes}" '{"calls":3,"bytes":12288}' "H2D asynchronous: 3 x 4096 B"
jq_eq "$F" '.memset | {calls, bytes}' "{\"calls\":3,\"bytes\":$((9 * MiB))}" "memsets: 3 x 3 MiB"
jq_eq "$F" '.synchronize.calls' 3 "3 synchronize calls"

# Memory: p3 (3 MiB, cudaMalloc) and h (4096 B, cudaMallocHost) leak each iteration.
jq_eq "$F" '.memory.allocations' 12 "12 allocations (9 cudaMalloc + 3 cudaMallocHost)"
jq_eq "$F" '.memory.frees' 6 "6 frees"
jq_eq "$F" '.memory.live_allocations' 6 "6 live allocations at the end"
jq_eq "$F" '.memory.live_bytes' $((9 * MiB)) "9 MiB of device memory live"
jq_eq "$F" '.memory.live_host_bytes' 12288 "12288 B of pinned host memory live"
jq_eq "$F" '.memory.peak_bytes' $((12 * MiB)) "peak device memory: 6 MiB leaked + 6 MiB in the last iteration"
host_leak='{"bytes":4096,"api":"cudaMallocHost","kind":"host"}'
device_leak='{"bytes":3145728,"api":"cudaMalloc","kind":"device"}'
jq_eq "$F" '[.memory.leaks[] | {bytes, api, kind}] | sort_by(.bytes)' \
	"[$host_leak,$host_leak,$host_leak,$device_leak,$device_leak,$device_leak]" \
	"leaks: 3 x 3 MiB cudaMalloc, 3 x 4096 B cudaMallocHost"
jq_check "$F" '[.memory.leaks[].address | test("^0x[0-9a-f]+$")] | all' "leak addresses are hex"
jq_check "$F" '[.memory.leaks[].address] | unique | length == 6' "leak addresses are distinct"
jq_check "$F" '. as $s | [.memory.leaks[].thread] | all(. == $s.pid)' "leaks made by the main thread"
jq_check "$F" '[.memory.leaks[].age_s] | all(. >= 0)' "leak ages are known"
jq_check "$F" '.memory.leaks[0].device == 0' "leaks on device 0"

# --- --no-leak: everything freed, cudaFreeHost included ----------------------------------------
run_gputop_json "$TMP/noleak.json" -- -b -- "$BIN/basic" 1 --no-leak || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status (--no-leak)"
F=$TMP/noleak.json
expect_api "$F" cudaFree 3 0
expect_api "$F" cudaFreeHost 1 0
jq_eq "$F" '.memory.allocations' 4 "--no-leak: 4 allocations"
jq_eq "$F" '.memory.frees' 4 "--no-leak: 4 frees"
jq_eq "$F" '.memory.live_allocations' 0 "--no-leak: nothing live"
jq_eq "$F" '.memory.leaks | length' 0 "--no-leak: no leak"
jq_eq "$F" '.memory.peak_bytes' $((6 * MiB)) "--no-leak: peak 6 MiB"
finish
