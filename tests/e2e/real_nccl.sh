#!/usr/bin/env bash
# The toolkit's real NCCL (libnccl.so.2, 2.x, with its statically linked cudart) on a machine
# without a GPU: every call that needs a communicator or a GPU fails, and gputop must see each
# one through its probes in NVIDIA's own code (jump probes, relocated entry instructions), with
# the program's output and exit status unchanged. nccl_job errors N prints, per function, how
# many calls it made and how many failed; gputop's API rows must say the same.
source "$(dirname "$0")/../lib.sh"
need_bin nccl_job
need_gputop
[ -e "$REAL/libnccl.so.2" ] || skip "no libnccl.so.2 in $REAL"
export LD_LIBRARY_PATH=$REAL
N=5
run_plain "$TMP/plain" "$BIN/nccl_job" errors $N
expect_eq "$PLAIN_STATUS" 0 "nccl_job errors runs on the real NCCL"
run_gputop_json "$TMP/r.json" -- -b -- "$BIN/nccl_job" errors $N || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" "$PLAIN_STATUS" "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" nccl_job >"$TMP/traced.lines"
prog_lines "$TMP/plain.out" nccl_job >"$TMP/plain.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "the program's output is the same under gputop"
while read -r _ name calls failed; do
	expect_api "$TMP/r.json" "$name" "${calls#calls=}" "${failed#failed=}"
done <"$TMP/plain.lines"
jq_check "$TMP/r.json" '[.api[] | select(.layer == "nccl" and .calls > 0 and .name != "ncclCommInitRank") | .stops_per_call] | all(. == 0)' \
	"collectives and groups cost no stop (the call stub)"
jq_eq "$TMP/r.json" '.collectives' '[]' "failed calls are no collectives"
expect_match "$(cat "$GPUTOP_ERR")" 'probing [0-9]+ CUDA functions in libnccl\.so\.2' "gputop probes libnccl.so.2"
finish
