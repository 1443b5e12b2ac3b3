#!/usr/bin/env bash
# Kernels of nvcc's extended lambdas (tests/progs/lambdas.cu, a real nvcc program, as PyTorch's
# elementwise kernels are) on the SIMULATED runtime, driver and CUPTI. nvcc names a lambda's
# kernel on the host side with placeholder types ("Unvhdl…", "Unvdl…": the stub's static
# __handle variable, which gputop reads after an attach), which __cxa_demangle cannot read; the
# device symbol, which the runtime registers and the driver and CUPTI name, holds the lambda's
# own type. Named by the placeholder, a kernel's launches and its --gpu-time records (joined by
# name) fell into two rows (found on an H200 with PyTorch 2.11). Now such a name is doubted: the
# handle's first launch asks the driver (cuKernelGetName). Checked, launched and attached, with
# and without --gpu-time: one row a kernel, named by its device name, its launches and its runs
# on the GPU together; no row named by a mangled name.
source "$(dirname "$0")/../lib.sh"
need_bin lambdas sim/libcudart.so.13 simdrv/libcuda.so.1 simcupti/libcupti.so.13
need_gputop
[ -f "$ROOT/build/libgputop-gpu.so" ] || skip "build/libgputop-gpu.so is not built (no CUPTI headers)"

TWICE='void apply<main::{lambda(float)#1}>(float*, int, main::{lambda(float)#1})'
PLUS='void apply<main::{lambda(float)#2}>(float*, int, main::{lambda(float)#2})'
KT=1000 KP=500	# ns a run of each on the simulated GPU (CUPTI's records)
export LD_LIBRARY_PATH=$SIM:$SIMDRV GPUTOP_CUPTI=$BIN/simcupti/libcupti.so.13
export SIMCUPTI_KERNEL_NS=_Z5applyIZ4mainEUlfE_EvPfiT_=$KT,_Z5applyIZ4mainEUlfE0_EvPfiT_=$KP

# The placeholder names are really there: the host side's handle variables hold them.
if nm "$BIN/lambdas" | grep -q 'Unvhdl.*8__handle$' && nm "$BIN/lambdas" | grep -q 'Unvdl.*8__handle$'; then
	ok "nvcc named the handle variables with lambda placeholders"
else
	not_ok "nvcc named the handle variables with lambda placeholders"
fi

# check FILE WHAT TWICE_LAUNCHES PLUS_LAUNCHES GPU(0|1)
check() {
	local F=$1 w=$2 nt=$3 np=$4 gpu=$5
	jq_eq "$F" '.kernels | length' 2 "$w: two kernel rows"
	jq_eq "$F" '[.kernels[].name | select(startswith("_Z") or test("@"))]' '[]' "$w: no row named by a mangled name"
	expect_kernel "$F" "$TWICE" "$nt" '[1,1,1]' '[256,1,1]'
	expect_kernel "$F" "$PLUS" "$np" '[1,1,1]' '[256,1,1]'
	if [ "$gpu" == 1 ]; then
		jq_eq "$F" "$(kernel_row "$TWICE").gpu_time | [.count, (.total_s * 1e9 | round)]" "[$nt,$((nt * KT))]" \
			"$w: twice's runs on the GPU in its row"
		jq_eq "$F" "$(kernel_row "$PLUS").gpu_time | [.count, (.total_s * 1e9 | round)]" "[$np,$((np * KP))]" \
			"$w: plus_one's runs on the GPU in its row"
		jq_eq "$F" '.gpu_time.unnamed_records' 0 "$w: every record named"
	fi
}

run_plain "$TMP/plain" "$BIN/lambdas" /dev/null
expect_eq "$(prog_lines "$TMP/plain.out" lambdas)" 'lambdas: launches=52 failures=0' "lambdas works without gputop"

for gt in 1 0; do
	opt=() w=plain
	[ $gt == 1 ] && opt=(--gpu-time) w=gpu-time
	# Launched: every launch counted.
	rm -f "$TMP/go"
	spawn "$TMP/l$gt" "$GPUTOP" "${opt[@]}" --json "$TMP/l$gt.json" -- "$BIN/lambdas" "$TMP/go"
	wait_for_line "$TMP/l$gt.out" '^ready [0-9]+$' 30 || bail "launch $w: the program said ready"
	touch "$TMP/go"
	wait_pid "$SPAWNED_PID" 60
	expect_eq "$WAIT_STATUS" 0 "launch $w: gputop exits with the program's status"
	expect_eq "$(prog_lines "$TMP/l$gt.out" lambdas)" 'lambdas: launches=52 failures=0' "launch $w: the program's output"
	check "$TMP/l$gt.json" "launch $w" 31 21 $gt

	# Attached once each kernel's handle variable is filled (its first launch): named from the
	# program's memory, the placeholder's name; the launches after the attach counted.
	can_attach_to_others || continue
	rm -f "$TMP/go"
	spawn "$TMP/p$gt" "$BIN/lambdas" "$TMP/go"
	prog=$SPAWNED_PID
	wait_for_line "$TMP/p$gt.out" '^ready [0-9]+$' 30 || bail "attach $w: the program said ready"
	spawn "$TMP/a$gt" "$GPUTOP" "${opt[@]}" -p "$prog" --json "$TMP/a$gt.json"
	gputop=$SPAWNED_PID
	wait_for_line "$TMP/a$gt.err" 'attached to' 30 || bail "attach $w: gputop attached"
	touch "$TMP/go"
	wait_pid "$prog" 60
	expect_eq "$WAIT_STATUS" 0 "attach $w: the program ends well"
	expect_eq "$(prog_lines "$TMP/p$gt.out" lambdas)" 'lambdas: launches=52 failures=0' "attach $w: the program's output"
	wait_pid "$gputop" 60
	expect_eq "$WAIT_STATUS" 0 "attach $w: gputop ends with the program"
	check "$TMP/a$gt.json" "attach $w" 30 20 $gt
done
finish
