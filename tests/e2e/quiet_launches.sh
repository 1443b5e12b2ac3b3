#!/usr/bin/env bash
# Quiet launches (issue 32, item 1; arch/tally.h struct tally_quiet): while nothing asks for a
# launch's detail, a kernel launch of a handle gputop has named writes no record (the stub
# counts it in place, with its dimensions); with --timeline every launch is still recorded.
# The figures come out the same either way: per kernel its launches, grid and block, per
# device its launches. GPUTOP_DEBUG's last line of a process says how many kernel launch
# records gputop read ("kernel launch records read N").
#  1. The driver's launch stub (tests/progs/ring_loop.c on the SIMULATED libcuda.so.1: 4
#     threads, cuLaunchKernel with its dimensions in registers and on the stack, and
#     cuLaunchKernelEx with them by pointer): 0 records without --timeline, all but the first
#     launches (which park, to name the kernel) with it.
#  2. The runtime's launches through the call stub (tests/progs/exact_storm.c on the SIMULATED
#     runtime alone: 8 threads, cudaLaunchKernel): the same.
source "$(dirname "$0")/../lib.sh"
need_bin ring_loop exact_storm simdrv/libcuda.so.1 sim/libcudart.so.13
need_gputop

records() {	# the debug log of a run: its kernel launch records read
	sed -n 's/.*kernel launch records read \([0-9]*\).*/\1/p' "$1" | tail -n 1
}

kernels() {	# json: what a launch record used to say, per kernel
	jq -c '[.kernels[] | {name, launches, grid, block}] | sort_by(.name)' "$1"
}

figures() {	# json: what a launch record used to say, per kernel and per device
	jq -c '[([.kernels[] | {name, launches, grid, block}] | sort_by(.name)), [.device_use[] | {device, launches}], .launches]' "$1"
}

# run NAME LIBS PROG ARGS...: once quiet, once with --timeline.
run() {
	local name=$1 libs=$2
	shift 2
	GPUTOP_DEBUG=1 LD_LIBRARY_PATH=$libs run_gputop_json "$TMP/$name.json" -- "$@" || bail "a summary to check"
	cp "$GPUTOP_ERR" "$TMP/$name.err"
	GPUTOP_DEBUG=1 LD_LIBRARY_PATH=$libs run_gputop_json "$TMP/$name.tl.json" --timeline "$TMP/$name.timeline.json" \
		-- "$@" || bail "a summary to check"
	cp "$GPUTOP_ERR" "$TMP/$name.tl.err"
}

# --- 1. the driver's launch stub --------------------------------------------------------------
R=4000
run ring "$SIMDRV" "$BIN/ring_loop" 4 $R
for f in ring ring.tl; do
	expect_kernel "$TMP/$f.json" 'ring_a(int*)' $((4 * R)) '[2,3,4]' '[32,2,1]'
	expect_kernel "$TMP/$f.json" 'ring_b(float*)' $((4 * R)) '[5,1,1]' '[64,1,1]'
	jq_eq "$TMP/$f.json" '.launches' $((8 * R)) "$f: $((8 * R)) launches"
	jq_eq "$TMP/$f.json" '.cost.lost_records' 0 "$f: no record dropped"
done
expect_eq "$(records "$TMP/ring.err")" 0 "ring: no kernel launch record without --timeline"
n=$(records "$TMP/ring.tl.err")
[ -n "$n" ] && [ "$n" -ge $((8 * R - 8)) ] && ok "ring --timeline: every launch recorded but the first of each kernel and thread ($n)" ||
	not_ok "ring --timeline: every launch recorded but the first of each kernel and thread (read: ${n:-none})"
jq_check "$TMP/ring.timeline.json" "[.. | objects | select(.name? == \"ring_a(int*)\")] | length >= $((4 * R - 4))" \
	"ring --timeline: the timeline holds ring_a's launches"
expect_eq "$(figures "$TMP/ring.json")" "$(figures "$TMP/ring.tl.json")" \
	"ring: per kernel (launches, grid, block) and per device, the same figures quiet and recorded"

# --- 2. the runtime's launches, through the call stub ---------------------------------------
T=8
N=2000
run storm "$SIM" "$BIN/exact_storm" $T $N
for f in storm storm.tl; do
	bad=$(jq -r --argjson n "$N" --argjson t "$T" '[range(0; $t) as $i | "worker\($i)" as $w |
		(.kernels | map(select(.name == $w)) | .[0]) as $k | select($k.launches != $n or $k.block != [32,1,1] or $k.grid != [1,1,1]) | $w] | join(", ")' "$TMP/$f.json")
	expect_eq "$bad" "" "$f: each thread's kernel $N launches, grid [1,1,1], block [32,1,1]"
	jq_eq "$TMP/$f.json" '.launches' $((T * (N + 1))) "$f: $((T * (N + 1))) launches"
done
expect_eq "$(records "$TMP/storm.err")" 0 "storm: no kernel launch record without --timeline"
n=$(records "$TMP/storm.tl.err")
lost=$(jq '.cost.lost_records' "$TMP/storm.tl.json")
[ -n "$n" ] && [ "$n" -ge $((T * N - lost)) ] && ok "storm --timeline: every launch recorded, but where the ring was full ($n, $lost records dropped)" ||
	not_ok "storm --timeline: every launch recorded, but where the ring was full (read: ${n:-none}, $lost records dropped)"
# (A full calls' ring drops records: what they would have told of devices is then missing,
# where a quiet launch's count is exact; so are the dimensions of a kernel whose every launch
# record was dropped (grid [0,0,0]: not known), which the quiet run has.)
known() {	# json: per kernel its launches, and its dimensions where the recorded run knows them
	jq -c --slurpfile tl "$TMP/storm.tl.json" '[.kernels[] | . as $k |
		($tl[0].kernels | map(select(.name == $k.name)) | .[0]) as $r |
		{name, launches} + (if $r.grid == [0,0,0] then {} else {grid, block} end)] | sort_by(.name)' "$1"
}
expect_eq "$(known "$TMP/storm.json")" "$(known "$TMP/storm.tl.json")" \
	"storm: per kernel (launches, grid, block where recorded), the same figures quiet and recorded"
jq_eq "$TMP/storm.json" '[.device_use[].launches] | add' $((T * (N + 1))) "storm: every launch counted on its device"

finish
