#!/usr/bin/env bash
# Acceptance 2: the same program linked statically against libcudart_static.a (cudart inside the
# executable, as nvcc links by default) gives the same API counts and errors as with the shared
# libcudart.so.13 (real_dynamic.sh), and the same output and exit status.
source "$(dirname "$0")/../lib.sh"
need_bin basic static_basic
need_gputop
[ -e "$REAL/libcudart.so.13" ] || skip "no real libcudart.so.13 in $REAL"

export LD_LIBRARY_PATH=$REAL
run_plain "$TMP/plain" "$BIN/static_basic"
grep -q '^basic: FAILED iterations=1 failures=27 ' "$TMP/plain.out" ||
	skip "the real runtime works here (a GPU?): this test is for the no-driver path"

run_gputop_json "$TMP/static.json" -- -b -- "$BIN/static_basic" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" "$PLAIN_STATUS" "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" basic >"$TMP/traced.lines"
prog_lines "$TMP/plain.out" basic >"$TMP/plain.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "program output is the same under gputop"

F=$TMP/static.json
expect_api "$F" cudaMalloc 3 3 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMallocHost 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMemcpy 3 3 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMemcpyAsync 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaMemset 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaLaunchKernel 15 15 35 cudaErrorInsufficientDriver
expect_api "$F" cudaDeviceSynchronize 1 1 35 cudaErrorInsufficientDriver
expect_api "$F" cudaFree 2 2 35 cudaErrorInsufficientDriver
jq_eq "$F" '.memory.live_allocations' 0 "no live allocation"
jq_eq "$F" '.memory.leaks | length' 0 "no leak"

# The very same table as the dynamically linked program's.
run_gputop_json "$TMP/dynamic.json" -- -b -- "$BIN/basic" || bail "a summary to compare with"
table='[.api[] | select(.calls > 0) | {name, calls, errors, last_error}] | sort_by(.name)'
static_table=$(jq -c "$table" "$TMP/static.json")
dynamic_table=$(jq -c "$table" "$TMP/dynamic.json")
expect_eq "$static_table" "$dynamic_table" "static and dynamic cudart give the same API table"
finish
