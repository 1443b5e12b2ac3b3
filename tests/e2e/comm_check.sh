#!/usr/bin/env bash
# The checker of scripts/gpu-comm (tests/gpu/comm_check.py), tested here on the SIMULATED runtime
# and NCCL with nccl_job's accounts (the format torch_nccl.py prints): two rank processes under
# gputop pass both the exact and the at-least comparison; an account with one byte more, or a
# rank that gputop did not trace, makes it fail.
source "$(dirname "$0")/../lib.sh"
need_bin nccl_job sim/libcudart.so.13 simnccl/libnccl.so.2
need_gputop
command -v python3 >/dev/null || skip "python3 is not installed"
export LD_LIBRARY_PATH=$SIM:$SIMDRV:$BIN/simnccl SIMCUDA_DEVICES=2
export NCCL_JOB_ACCOUNT=$TMP/acc
CHECK=(python3 "$ROOT/tests/gpu/comm_check.py")

run_gputop_json "$TMP/g.json" -- -b -q -- bash -c '"$0" rank 0 2 5 & "$0" rank 1 2 5 & wait' "$BIN/nccl_job" ||
	bail "a summary to check"
"${CHECK[@]}" exact sim "$TMP/g.json" "$NCCL_JOB_ACCOUNT" >"$TMP/exact.out"
expect_eq "$?" 0 "exact: gputop's figures are the accounts'"
expect_match "$(cat "$TMP/exact.out")" 'PASS sim: rank 1 \(pid [0-9]+\) AllReduce bytes' "exact: a row per op and rank"
"${CHECK[@]}" atleast sim "$TMP/g.json" "$NCCL_JOB_ACCOUNT" >"$TMP/atleast.out"
expect_eq "$?" 0 "at least: and the communicators' rank and size"
expect_match "$(cat "$TMP/atleast.out")" 'PASS sim: rank 0 \(pid [0-9]+\) communicator' "at least: the communicator checked"

jq -c '.collectives.AllReduce.bytes += 1' "$NCCL_JOB_ACCOUNT" >"$TMP/acc.more"
"${CHECK[@]}" exact sim "$TMP/g.json" "$TMP/acc.more" >"$TMP/more.out"
expect_eq "$?" 1 "exact: one byte more in an account fails"
expect_match "$(cat "$TMP/more.out")" 'FAIL sim: rank 0 .* AllReduce bytes' "exact: and says which figure"
jq -c '.pid += 1000000' "$NCCL_JOB_ACCOUNT" >"$TMP/acc.other"
"${CHECK[@]}" atleast sim "$TMP/g.json" "$TMP/acc.other" >"$TMP/other.out"
expect_eq "$?" 1 "a process gputop did not trace fails"
finish
