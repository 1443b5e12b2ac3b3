#!/usr/bin/env bash
# Issue 27: PyTorch's memory after an attach, on the SIMULATED libc10_cuda.so. torch_blocks makes
# three blocks (1 KiB, 3 MiB, 12 MiB) and waits; gputop attaches and reads them from the
# allocator's table of allocated blocks (every thread held); the program makes and frees more,
# frees its 5 MiB block (the one block of its segment) and says "held"; gputop is stopped
# (SIGINT: detach, summary); the program then empties its cache and says what that gave back.
# Exact: live bytes and reserved as the allocator counts them, the blocks from before the attach
# (and that they are), what torch.cuda.empty_cache() would give back (20 MiB: the free segment),
# and a free of a block from before the attach known.
source "$(dirname "$0")/../lib.sh"
need_bin torch_blocks sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"

export LD_LIBRARY_PATH=$SIM:$BIN/simtorch
MiB=1048576
TM=.torch_memory

for mode in default expandable; do
	if [ "$mode" = expandable ]; then
		export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
	fi
	spawn "$TMP/prog-$mode" "$BIN/torch_blocks" --go "$TMP/go-$mode" --hold "$TMP/hold-$mode"
	PROG=$SPAWNED_PID
	wait_for_line "$TMP/prog-$mode.out" '^ready [0-9]+$' 30 || bail "$mode: the program said ready"
	threads=$(ls "/proc/$PROG/task" | wc -l)
	spawn "$TMP/gputop-$mode" env --default-signal=INT "$GPUTOP" -p "$PROG" --json "$TMP/$mode.json" -b -d 0.2
	GPUTOP_PID=$SPAWNED_PID
	wait_for_line "$TMP/gputop-$mode.err" 'attached' 30 || bail "$mode: gputop attached"
	touch "$TMP/go-$mode"
	wait_for_line "$TMP/prog-$mode.out" '^torch_blocks: held ' 30 || bail "$mode: the program made its blocks"
	sleep 0.5	# a few drains
	kill -INT "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "$mode: gputop detaches on SIGINT, status 0"
	touch "$TMP/hold-$mode"
	wait_pid "$PROG" 30
	expect_eq "$WAIT_STATUS" 0 "$mode: the program ends well after the detach"
	out=$TMP/prog-$mode.out
	held=$(sed -n 's/^torch_blocks: held allocated=\([0-9]*\) reserved=\([0-9]*\)$/\1 \2/p' "$out")
	freed=$(sed -n 's/^torch_blocks: empty_cache freed=\([0-9]*\) .*/\1/p' "$out")
	F=$TMP/$mode.json
	jq -e . "$F" >/dev/null 2>&1 || bail "$mode: a JSON summary"
	jq_eq "$F" "$TM.state" '"tracking"' "$mode: the allocator is followed"
	jq_eq "$F" "$TM.blocks_before_attach" '"read"' "$mode: blocks before the attach read"
	jq_eq "$F" "$TM | [.before_attach_blocks, .before_attach_bytes]" "[3,$((1024 + 3146240 + 12 * MiB))]" \
		"$mode: three of them, 1 KiB + 3 MiB + 12 MiB"
	jq_eq "$F" "$TM.devices[0].allocated_bytes" "${held% *}" "$mode: live blocks = memory_allocated()"
	jq_eq "$F" "$TM.devices[0] | [.allocator_allocated_bytes, .agrees]" "[${held% *},true]" "$mode: the allocator agrees"
	jq_eq "$F" "$TM.devices[0].reserved_bytes" "${held#* }" "$mode: reserved = memory_reserved()"
	jq_eq "$F" "[$TM.largest_blocks[] | [.bytes, .before_attach]]" \
		"[[104857600,false],[12582912,true],[3146240,true],[350208,false],[210432,false],[70144,false]]" \
		"$mode: the blocks, largest first; those from before the attach say so"
	jq_eq "$F" "$TM | [.allocs, .frees, .unknown_frees]" '[7,4,0]' "$mode: 7 handed out, 4 taken back (one from before the attach), each known"
	jq_eq "$F" "$TM.threads_at_read" "$threads" "$mode: the threads held while they were read: the program's"
	if [ "$mode" = default ]; then
		jq_eq "$F" "$TM.devices[0].empty_cache_bytes" "$freed" "$mode: empty_cache() would give back what it then gave ($freed)"
		expect_eq "$freed" $((20 * MiB)) "$mode: the program's empty_cache() gave back 20 MiB"
	else
		jq_check "$F" "[$TM.largest_blocks[].expandable_segment] | all" "$mode: in expandable segments"
		jq_check "$F" "$TM.devices[0].empty_cache_bytes != null" "$mode: empty_cache() estimated"
	fi
	unset PYTORCH_CUDA_ALLOC_CONF
done

# --- gputop killed with SIGKILL while the allocator's functions are probed: the program goes on
# through the call stub (no int3 to trap on) and ends as it would have without gputop.
run_plain "$TMP/plain" "$BIN/torch_blocks"
spawn "$TMP/prog-kill" "$BIN/torch_blocks" --go "$TMP/go-kill"
PROG=$SPAWNED_PID
wait_for_line "$TMP/prog-kill.out" '^ready [0-9]+$' 30 || bail "kill: the program said ready"
spawn "$TMP/gputop-kill" "$GPUTOP" -p "$PROG" -b -d 0.2
GPUTOP_PID=$SPAWNED_PID
wait_for_line "$TMP/gputop-kill.err" 'attached' 30 || bail "kill: gputop attached"
sleep 0.3
kill -KILL "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 10
touch "$TMP/go-kill"
wait_pid "$PROG" 30
expect_eq "$WAIT_STATUS" 0 "kill: the program ends with status 0 after gputop's SIGKILL"
expect_file_eq <(prog_lines "$TMP/prog-kill.out" torch_blocks) "$TMP/plain.out" "kill: it prints what it prints without gputop"
finish
