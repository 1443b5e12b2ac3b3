#!/usr/bin/env bash
# Issue 35: --memory-snapshot on the SIMULATED libc10_cuda.so (tests/sim/c10_cuda.c). torch_blocks
# makes blocks, gputop attaches (--stacks allocs), the program makes and frees more, prints its
# allocator's segments and blocks as _snapshot() would list them (from its own books) and waits;
# gputop is stopped (SIGINT: a detach, every thread held) and writes the snapshot then. Checked
# by tests/e2e/torch_snapshot_check.py with python3's pickle: the same segments and blocks
# (addresses, sizes, requested sizes, states), _snapshot()'s keys, what _memory_viz's readers
# assert, frames for the blocks made after the attach and none for those from before. Default and
# expandable segments; then the key S in the TUI, and a file that cannot be written refused.
source "$(dirname "$0")/../lib.sh"
need_bin torch_blocks sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
command -v python3 >/dev/null || skip "python3 is needed to read the pickle"

export LD_LIBRARY_PATH=$SIM:$BIN/simtorch

# check_snapshot FILE PROGRAM_OUT MODE: the checker's verdicts, counted here.
check_snapshot() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < <(python3 "$ROOT/tests/e2e/torch_snapshot_check.py" "$@" 2>&1)
}

for mode in default expandable; do
	[ "$mode" = expandable ] && export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
	spawn "$TMP/prog-$mode" "$BIN/torch_blocks" --go "$TMP/go-$mode" --hold "$TMP/hold-$mode"
	PROG=$SPAWNED_PID
	wait_for_line "$TMP/prog-$mode.out" '^ready [0-9]+$' 30 || bail "$mode: the program said ready"
	spawn "$TMP/gputop-$mode" env --default-signal=INT "$GPUTOP" -p "$PROG" -b -d 0.2 --stacks allocs \
		--memory-snapshot "$TMP/$mode.pickle"
	GPUTOP_PID=$SPAWNED_PID
	wait_for_line "$TMP/gputop-$mode.err" 'attached' 30 || bail "$mode: gputop attached"
	touch "$TMP/go-$mode"
	wait_for_line "$TMP/prog-$mode.out" '^torch_blocks: held ' 30 || bail "$mode: the program made its blocks"
	[ -e "$TMP/$mode.pickle" ] && not_ok "$mode: no snapshot before it is asked for" || ok "$mode: no snapshot before it is asked for"
	kill -INT "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "$mode: gputop detaches on SIGINT, status 0"
	expect_match "$(cat "$TMP/gputop-$mode.err")" "memory snapshot of $PROG's PyTorch memory written to $TMP/$mode.pickle" \
		"$mode: gputop says where it wrote the snapshot"
	touch "$TMP/hold-$mode"
	wait_pid "$PROG" 30
	expect_eq "$WAIT_STATUS" 0 "$mode: the program ends well after the detach"
	[ -s "$TMP/$mode.pickle" ] || bail "$mode: the snapshot was written"
	check_snapshot "$TMP/$mode.pickle" "$TMP/prog-$mode.out" "$mode"
	unset PYTORCH_CUDA_ALLOC_CONF
done

# A file that cannot be written (its directory does not exist): refused before anything runs
# (exit 6), the program never started; two options naming one file: exit 2.
"$GPUTOP" --memory-snapshot "$TMP/none/s.pickle" -b -- "$BIN/torch_blocks" >"$TMP/ro.out" 2>"$TMP/ro.err"
expect_eq "$?" 6 "an unwritable --memory-snapshot: exit 6"
expect_match "$(cat "$TMP/ro.err")" "cannot write --memory-snapshot file '$TMP/none/s.pickle'" "... said"
expect_eq "$(grep -c torch_blocks "$TMP/ro.out")" 0 "... and the program never ran"
"$GPUTOP" --memory-snapshot "$TMP/same" --json "$TMP/same" -b -- "$BIN/torch_blocks" >/dev/null 2>"$TMP/same.err"
expect_eq "$?" 2 "--memory-snapshot and --json naming one file: exit 2"
finish
