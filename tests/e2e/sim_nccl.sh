#!/usr/bin/env bash
# Issue 11, parts 3-5, on the SIMULATED runtime, driver and NCCL (tests/sim: nothing moves):
# gputop's NCCL and multi-GPU figures are exactly what tests/progs/nccl_job says it issued (its
# own account, NCCL_JOB_ACCOUNT), per process and in all:
#  - one process, two devices, ncclCommInitAll: collectives by op (calls, bytes = count x the
#    datatype's size; ncclBcast counted as the Broadcast it calls), grouped calls counted once
#    each, a ring of ncclSend/ncclRecv as the GPU x GPU matrix, a failed call in no collective;
#    the CUDA calls NCCL makes inside its own calls (its buffers) counted, once;
#  - two processes (ranks 0 and 1, device = rank, the rank not in their environment): each
#    process's rank and size come from its communicator, each its own collectives, and the
#    sends' destinations resolved across the processes;
#  - peer copies between four devices (cudaMemcpyPeer[Async], D2D and cudaMemcpyDefault across
#    devices, and a same-device D2D that is none), allocations per device;
#  - the driver API: the device of contexts made current (set, push, pop), cuMemcpyPeer's
#    devices from its contexts;
#  - attached after the communicator was made: what gputop did not see is not made up.
# The program's output and exit status are the same with and without gputop.
source "$(dirname "$0")/../lib.sh"
need_bin nccl_job sim/libcudart.so.13 simdrv/libcuda.so.1 simnccl/libnccl.so.2
need_gputop
export LD_LIBRARY_PATH=$SIM:$SIMDRV:$BIN/simnccl

# expect_account GPUTOP_OBJECT_JSON ACCOUNT_JSON WHAT: collectives and p2p equal the account's.
expect_account() {
	local g=$1 a=$2 what=$3
	jq -c '[.collectives[] | {op, calls, bytes}] | sort_by(.op)' "$g" >"$g.coll"
	jq -c '[.collectives | to_entries[] | {op: .key, calls: .value.calls, bytes: .value.bytes}] | sort_by(.op)' \
		"$a" >"$a.coll"
	jq_check "$a.coll" 'length >= 6' "$what: the program issued collectives of 6 ops or more"
	expect_file_eq "$g.coll" "$a.coll" "$what: collectives by op, calls and bytes, as the program issued"
	jq -c '.p2p | sort_by(.src_device, .dst_device)' "$g" >"$g.p2p"
	jq -c '.p2p | sort_by(.src_device, .dst_device)' "$a" >"$a.p2p"
	jq_check "$a.p2p" 'length >= 1' "$what: the program moved bytes between devices"
	expect_file_eq "$g.p2p" "$a.p2p" "$what: the P2P matrix (source, destination, calls, bytes)"
}

# --- one process, two devices, ncclCommInitAll -------------------------------------------------
export SIMCUDA_DEVICES=2
run_plain "$TMP/plain" "$BIN/nccl_job" all 4
expect_eq "$PLAIN_STATUS" 0 "nccl_job all runs on the simulated NCCL"
export NCCL_JOB_ACCOUNT=$TMP/all.account
run_gputop_json "$TMP/all.json" -- -b -q -- "$BIN/nccl_job" all 4 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
prog_lines "$GPUTOP_OUT" nccl_job >"$TMP/traced.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.out" "the program's output is the same under gputop"
F=$TMP/all.json
jq '.' "$NCCL_JOB_ACCOUNT" >"$TMP/all.acc"
expect_account "$F" "$TMP/all.acc" "ncclCommInitAll"
P=$TMP/all.proc
jq '.processes[0]' "$F" >"$P"
expect_account "$P" "$TMP/all.acc" "its process"
jq_eq "$P" '.communicators' '[{"rank":0,"nranks":2,"device":0},{"rank":1,"nranks":2,"device":1}]' \
	"two communicators: rank i of 2 on device i"
jq_eq "$P" '.rank' null "one process of several ranks has no single rank"
jq_eq "$P" '.devices' '[0,1]' "it used devices 0 and 1"
# The program's 1 MiB on each device (cudaSetDevice before each), and each communicator's 1 MiB
# of buffers, which the simulated NCCL makes on the communicator's device with its own
# (statically linked) cudart inside ncclCommInitAll and frees at ncclCommDestroy: counted, once.
jq_eq "$F" '[.device_use[] | {device, allocations, allocated_bytes, live_bytes}]' \
	'[{"device":0,"allocations":2,"allocated_bytes":2097152,"live_bytes":1048576},{"device":1,"allocations":2,"allocated_bytes":2097152,"live_bytes":1048576}]' \
	"per device: the program's buffer and its communicator's, the latter freed"
expect_api "$F" cudaMalloc 4 0
expect_api "$F" cudaFree 2 0
# -b's summary: the same figures as lines.
calls=$(jq '.collectives.AllReduce.calls' "$TMP/all.acc")
expect_match "$(cat "$GPUTOP_OUT")" "[0-9]+ +— +AllReduce +$calls " "-b: the AllReduce line, $calls calls"
n01=$(jq '.p2p[] | select(.src_device == 0 and .dst_device == 1) | .calls' "$TMP/all.acc")
expect_match "$(cat "$GPUTOP_OUT")" "P2P GPU0 -> GPU1: $n01 calls" "-b: the P2P line GPU0 -> GPU1"
expect_match "$(cat "$GPUTOP_OUT")" "GPU +LIVE +ALLOCS" "-b: the table by GPU (two GPUs)"
ITER=4
expect_api "$F" ncclGroupStart $((2 * ITER)) 0
expect_api "$F" ncclGroupEnd $((2 * ITER)) 0
expect_api "$F" ncclAllReduce $((2 * ITER + 1)) 1
jq_check "$F" "$(api_row ncclAllReduce).layer == \"nccl\"" "NCCL rows are of layer nccl"
jq_eq "$F" "[.api[] | select(.name == \"ncclBcast\")] | length" 0 "ncclBcast is no row: its ncclBroadcast counts"
expect_api "$F" ncclBroadcast $((2 * ITER)) 0
expect_api "$F" ncclCommInitAll 1 0

# --- two processes, one rank each ----------------------------------------------------------------
LAUNCH='"$0" rank 0 2 3 & "$0" rank 1 2 3 & wait'
rm -f "$TMP/plain.acc"
NCCL_JOB_ACCOUNT=$TMP/ranks.account
rm -f "$NCCL_JOB_ACCOUNT"
run_gputop_json "$TMP/ranks.json" -- -b -q -- bash -c "$LAUNCH" "$BIN/nccl_job" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the launcher's status"
F=$TMP/ranks.json
jq_eq "$F" '.processes | length' 3 "three processes: the launcher and two ranks"
for r in 0 1; do
	jq --argjson r $r 'select(.rank == $r)' "$NCCL_JOB_ACCOUNT" >"$TMP/r$r.acc"
	PID=$(jq '.pid' "$TMP/r$r.acc")
	jq --argjson p "$PID" '.processes[] | select(.pid == $p)' "$F" >"$TMP/r$r.proc"
	jq_eq "$TMP/r$r.proc" '{rank, nranks, local_rank}' "{\"rank\":$r,\"nranks\":2,\"local_rank\":null}" \
		"rank $r: its rank and size from its communicator (none in its environment)"
	jq_eq "$TMP/r$r.proc" '.communicators' "[{\"rank\":$r,\"nranks\":2,\"device\":$r}]" \
		"rank $r: its communicator, on device $r"
	expect_account "$TMP/r$r.proc" "$TMP/r$r.acc" "rank $r"
done
jq -s '{collectives: (map(.collectives | to_entries[]) | group_by(.key)
	| map({key: .[0].key, value: {calls: (map(.value.calls) | add), bytes: (map(.value.bytes) | add)}})
	| from_entries), p2p: (map(.p2p[]))}' "$NCCL_JOB_ACCOUNT" >"$TMP/ranks.acc"
expect_account "$F" "$TMP/ranks.acc" "both ranks, in all"

# --- attached after the communicator was made ---------------------------------------------------
# Its operations count exactly; what gputop did not see is not made up: no communicator, so no
# rank or size, and the send's devices are not known (the thread set its device before).
NCCL_JOB_ACCOUNT=$TMP/attach.account
spawn "$TMP/att" env NCCL_JOB_GO="$TMP/go" "$BIN/nccl_job" rank 1 2 4
wait_for_line "$TMP/att.out" '^ready [0-9]+' 30 || bail "nccl_job said ready"
"$GPUTOP" --json "$TMP/attach.json" -b -d 60 -p "$SPAWNED_PID" >"$TMP/att.gputop.out" 2>"$TMP/att.gputop.err" &
GP=$!
wait_for_line "$TMP/att.gputop.err" 'attached to' 30 || bail "gputop attached"
touch "$TMP/go"
wait "$GP"
expect_eq "$?" 0 "attached: gputop ends with the program"
expect_match "$(cat "$TMP/att.out")" 'rank 1 of 2 ok' "attached: the program's work was done"
F=$TMP/attach.json
jq '.processes[0]' "$F" >"$TMP/attach.proc"
jq -c '[.collectives[] | {op, calls, bytes}] | sort_by(.op)' "$TMP/attach.proc" >"$TMP/attach.g"
jq -c '[.collectives | to_entries[] | {op: .key, calls: .value.calls, bytes: .value.bytes}] | sort_by(.op)' \
	"$NCCL_JOB_ACCOUNT" >"$TMP/attach.a"
expect_file_eq "$TMP/attach.g" "$TMP/attach.a" "attached: collectives by op as the program issued"
jq_eq "$TMP/attach.proc" '{rank, nranks, communicators}' '{"rank":null,"nranks":null,"communicators":[]}' \
	"attached: the communicator predates gputop: no rank, size or communicator made up"
jq_eq "$TMP/attach.proc" '[.p2p[] | {src_device, dst_device}]' '[{"src_device":null,"dst_device":null}]' \
	"attached: the sends' devices are not known"
jq_eq "$TMP/attach.proc" '[.p2p[].bytes] | add' "$(jq '[.p2p[].bytes] | add' "$NCCL_JOB_ACCOUNT")" \
	"attached: the sends' bytes are"

# --- peer copies between four devices -------------------------------------------------------
export SIMCUDA_DEVICES=4
NCCL_JOB_ACCOUNT=$TMP/peer.account
run_gputop_json "$TMP/peer.json" -- -b -q -- "$BIN/nccl_job" peer 3 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
F=$TMP/peer.json
jq -c '.p2p | sort_by(.src_device, .dst_device)' "$F" >"$TMP/peer.g"
jq -c '.p2p | sort_by(.src_device, .dst_device)' "$NCCL_JOB_ACCOUNT" >"$TMP/peer.a"
jq_check "$TMP/peer.a" 'length == 4' "the program copied between 4 pairs of devices"
expect_file_eq "$TMP/peer.g" "$TMP/peer.a" "peer copies: the P2P matrix as the program issued"
jq_eq "$F" '.collectives' '[]' "no collective"
jq_eq "$F" '[.device_use[] | .device]' '[0,1,2,3]' "four devices used"
jq_eq "$F" '[.device_use[] | .allocations] | add' 4 "one allocation per device"
jq_eq "$F" '[.device_use[] | .synchronize_calls]' '[1,1,1,1]' "a synchronize call on each device"
expect_api "$F" cudaMemcpyPeer 3 0
expect_api "$F" cudaMemcpyPeerAsync 3 0

# --- the driver API: contexts made current, a peer copy between contexts -------------------------
export SIMCUDA_DEVICES=2
NCCL_JOB_ACCOUNT=$TMP/ctx.account
run_gputop_json "$TMP/ctx.json" -- -b -q -- "$BIN/nccl_job" ctx || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
F=$TMP/ctx.json
jq_check "$NCCL_JOB_ACCOUNT" '.allocations[0] >= 1 and .allocations[1] >= 1' "the program allocated on both devices"
jq_eq "$F" '[.device_use[] | .allocations]' "$(jq -c '[.allocations[] | select(. > 0)]' "$NCCL_JOB_ACCOUNT")" \
	"allocations per device through cuCtxSetCurrent, cuCtxPushCurrent and cuCtxPopCurrent, as the program made them"
jq_eq "$F" '.p2p' "$(jq -c '.p2p' "$NCCL_JOB_ACCOUNT")" "cuMemcpyPeer: source and destination from its contexts"
jq_eq "$F" '[.device_use[] | select(.synchronize_calls > 0) | .device]' '[1]' \
	"cuCtxSynchronize on the device of the context popped back to"
finish
