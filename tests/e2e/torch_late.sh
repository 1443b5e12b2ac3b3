#!/usr/bin/env bash
# PyTorch's Blocks kept in place (issue 32): the stubs keep the allocator's live Blocks in the
# program (arch/tally.h's block[]) and, while nobody asks for their stacks or order, write no
# record of them; gputop reads what changed whenever it comes. Made late on purpose: 4 threads
# take and give back 80,000 blocks through the SIMULATED libc10_cuda.so (tests/progs/
# torch_storm.c), in two halves; gputop frozen (SIGSTOP) 2 s during the second half, or starved
# by a busy loop on every CPU, launched and attached (then each thread's 4 blocks from before
# gputop, given back later, must leave too). Then the live blocks, their bytes
# (memory_allocated()), the calls handed out and taken back are exact, and no record was dropped
# (a record per call would have overflowed the ring while gputop was frozen).
# EXACT_TRIALS runs each case (default 1; make check-robust: 20).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin torch_storm sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
TRIALS=${EXACT_TRIALS:-1}
T=4
N=20000
TM=.torch_memory
LIBS=$SIM:$BIN/simtorch

# exact JSON OUT WHAT HOW: the figures against what the program printed.
exact() {
	local F=$1 out=$2 what=$3 how=$4 line allocs frees allocated live
	line=$(grep '^torch_storm:' "$out")
	expect_match "$line" "failures=0" "$what: the program's calls all succeeded"
	allocs=$(sed -n 's/.* allocs=\([0-9]*\) .*/\1/p' <<<"$line")
	frees=$(sed -n 's/.* frees=\([0-9]*\) .*/\1/p' <<<"$line")
	allocated=$(sed -n 's/.* allocated=\([0-9]*\) .*/\1/p' <<<"$line")
	live=$(sed -n 's/.* live=\([0-9]*\) .*/\1/p' <<<"$line")
	jq_eq "$F" "$TM.state" '"tracking"' "$what: the allocator is followed"
	jq_eq "$F" "$TM.devices[0].live_blocks" "$live" "$what: exactly the $live blocks never given back live"
	jq_eq "$F" "$TM.devices[0].allocated_bytes" "$allocated" "$what: their bytes = memory_allocated()"
	jq_eq "$F" "$TM.devices[0].agrees" true "$what: the allocator's own count agrees"
	jq_eq "$F" "$TM.unknown_frees + $TM.unread_blocks" 0 "$what: every block read, every free known"
	if [ "$how" = launch ]; then
		jq_eq "$F" "$TM.allocs" "$allocs" "$what: every block handed out counted"
		jq_eq "$F" "$TM.frees" "$frees" "$what: every block taken back counted"
		jq_eq "$F" "[.api[] | select(.layer == \"torch\") | .calls] | add" $((allocs + frees)) \
			"$what: the allocator's calls in the API table"
	else
		jq_eq "$F" "$TM.blocks_before_attach" '"read"' "$what: the blocks from before gputop read"
	fi
	jq_eq "$F" '.cost.lost_records' 0 "$what: no record dropped (none written for a Block)"
}

# storm NAME MODE HOW: one run of torch_storm (robust_lib.bash's rb_storm).
storm() {
	rb_storm "$1" "$2" "$3" env LD_LIBRARY_PATH="$LIBS" "$BIN/torch_storm" $T $N
	exact "$TMP/$1.json" "$STORM_OUT" "$3, $2 ($trial)" "$3"
}

for ((trial = 1; trial <= TRIALS; trial++)); do
	storm "launch-frozen-$trial" frozen launch
	storm "launch-starved-$trial" starved launch
	storm "attach-frozen-$trial" frozen attach
done

finish
