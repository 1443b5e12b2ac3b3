#!/usr/bin/env bash
# Acceptance 1: basic, linked against the toolkit's REAL libcudart.so.13, traced in launch mode
# on a machine without a GPU or driver: every call fails with cudaErrorInsufficientDriver (35),
# and gputop sees each one with its error; nothing counts as allocated. The program's output and
# exit status are the same with and without gputop.
source "$(dirname "$0")/../lib.sh"
need_bin basic
need_gputop
[ -e "$REAL/libcudart.so.13" ] || skip "no real libcudart.so.13 in $REAL"

export LD_LIBRARY_PATH=$REAL
run_plain "$TMP/plain" "$BIN/basic"
grep -q '^basic: FAILED iterations=1 failures=27 ' "$TMP/plain.out" ||
	skip "the real runtime works here (a GPU?): this test is for the no-driver path"

run_gputop_json "$TMP/s.json" -- -b -- "$BIN/basic" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" "$PLAIN_STATUS" "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" basic >"$TMP/traced.lines"
prog_lines "$TMP/plain.out" basic >"$TMP/plain.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "program output is the same under gputop"

F=$TMP/s.json
jq_eq "$F" '.launched' true "launch mode"
jq_eq "$F" '.exit_status' 0 "exit status 0 recorded"
# Every call the program made (workload.cpp lists them), each failed with 35.
expect_api "$F" cudaMalloc 3 3 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMallocHost 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMemcpy 3 3 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMemcpyAsync 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMemset 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaLaunchKernel 15 15 35 cudaErrorInsufficientDriver
expect_api "$F" cudaDeviceSynchronize 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaFree 2 2 35 cudaErrorInsufficientDriver
jq_eq "$F" '[.api[] | select(.calls > 0) | .name] | sort' \
	'["cudaDeviceSynchronize","cudaFree","cudaLaunchKernel","cudaMalloc","cudaMallocHost","cudaMemcpy","cudaMemcpyAsync","cudaMemset"]' \
	"no other API function was called"
jq_eq "$F" '[.api[] | select(.calls > 0) | .layer] | unique' '["runtime"]' "all of them runtime calls"
# Nothing was allocated.
jq_eq "$F" '.memory.live_allocations' 0 "no live allocation"
jq_eq "$F" '.memory.live_bytes' 0 "no live device bytes"
jq_eq "$F" '.memory.live_host_bytes' 0 "no live host bytes"
jq_eq "$F" '.memory.allocations' 0 "no successful allocation"
jq_eq "$F" '.memory.leaks | length' 0 "no leak"
finish
