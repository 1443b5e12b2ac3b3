#!/usr/bin/env bash
# Robustness, seccomp and the calls the stubs and --gpu-time make in the program (issue 25
# part 1). Beyond the injected mmap and munmap (robust_seccomp.sh), the stubs' park makes gettid
# and a timed futex wait (a kernel's first launch, --stacks), and --gpu-time's dlopen makes
# openat, read, mmap... (the table: src/probe/seccomp_calls.c). A program whose filter kills one
# of them died of SIGSYS under gputop, which exited 0. Now every thread's filter is run on those
# calls before they can be made (when the ring is made, at each new thread's first stop, every
# 0.1 s): refused, the stubs park no more in that process (said), or --gpu-time is not loaded
# there (said; exit status 9 in attach mode). The program is tests/progs/rb_seccomp.c with
# RB_FILTER: a filter that kills one call (gettid, futex with a timeout, openat), installed
# after its first CUDA call, before its 4 threads start; on the SIMULATED runtime (over the
# SIMULATED driver, where launches go through the launch stub, unless said).
#  1. launch mode, --stacks launches: a filter killing gettid (5 trials), one killing the timed
#     futex wait (3 trials); and on the runtime alone (the call stub parks), --stacks all,
#     gettid (3 trials): output and status as without gputop, the refusal said, counts exact;
#  2. attach mode (the filter there before gputop): gettid: said at once, the program finishes
#     with status 0, gputop too, counts exact;
#  3. --gpu-time, a filter killing openat: launch mode: the program as without gputop, gputop
#     says --gpu-time is not loaded and why, exits with the program's 0; attach mode: the same,
#     gputop exits 9.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_seccomp sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
[ "$(id -u)" -eq 0 ] || skip "needs root: gputop reads the program's filters with CAP_SYS_ADMIN"
P=$BIN/rb_seccomp
PARKS='its seccomp filter 1 of 1 \(newest first, [0-9]+ BPF instructions, thread [0-9]+\) answers SECCOMP_RET_KILL_PROCESS to %s, a call of the stubs. park \(a kernel.s first launch, --stacks\) and waits for room: the stubs park no more in [0-9]+'

# done_line FILTER: what rb_seccomp prints at its end.
done_line() {
	echo "rb_seccomp: filter=kills-$1 threads=4 iterations=200 failures=0 mismatches=0"
}

# counts_exact JSON [ALLOCATIONS]: 201 by default (the one made before the filter included)
counts_exact() {
	expect_api "$1" cudaMalloc "${2:-201}" 0
	expect_api "$1" cudaFree "${2:-201}" 0
	expect_api "$1" cudaMemcpy 400 0
	expect_launch_api "$1" 200 cudaLaunchKernel cuLaunchKernel
}

# launch_trials FILTER TRIALS GPUTOP_OPTIONS...
launch_trials() {
	local filter=$1 n=$2 i
	shift 2
	for ((i = 1; i <= n; i++)); do
		RB_FILTER=$filter rb_same "$filter$i" 0 "$(done_line "$filter")" "$@" -- "$P" 4 50
		expect_match "$(cat "$TMP/$filter$i.err")" "$(printf "$PARKS" "${filter%-timed}")" \
			"$filter, trial $i: the refusal is said"
	done
	counts_exact "$TMP/${filter}1.json"
}

# --- 1. launch mode ---------------------------------------------------------------------------
export LD_LIBRARY_PATH=$SIM:$SIMDRV
launch_trials gettid 5 --stacks launches
launch_trials futex-timed 3 --stacks launches
export LD_LIBRARY_PATH=$SIM
for i in 1 2 3; do
	RB_FILTER=gettid rb_same "rt$i" 0 "$(done_line gettid)" --stacks all -- "$P" 4 50
	expect_match "$(cat "$TMP/rt$i.err")" "$(printf "$PARKS" gettid)" "runtime alone, --stacks all, trial $i: the refusal is said"
done
counts_exact "$TMP/rt1.json"
export LD_LIBRARY_PATH=$SIM:$SIMDRV

# --- 2. attach mode ------------------------------------------------------------------------------
# attach_trial NAME FILTER STATUS [GPUTOP_OPTIONS...]: rb_seccomp under FILTER waits for its go
# file; gputop attaches, the program is let go, both end; gputop's exit status is STATUS.
attach_trial() {
	local name=$1 filter=$2 status=$3
	shift 3
	rm -f "$TMP/$name.go"
	spawn "$TMP/$name" env RB_FILTER="$filter" RB_GO_FILE="$TMP/$name.go" "$P" 4 50
	local prog=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 30 || bail "$name: rb_seccomp said ready"
	spawn "$TMP/$name.g" "$GPUTOP" -p "$prog" --json "$TMP/$name.json" "$@"
	local g=$SPAWNED_PID
	rb_wait_attached "$name.g"
	touch "$TMP/$name.go"
	wait_pid "$prog" 60
	expect_eq "$WAIT_STATUS" 0 "$name: the program finishes, status 0"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$(done_line "$filter")" "$name: its work and data are right"
	wait_pid "$g" 60
	expect_eq "$WAIT_STATUS" "$status" "$name: gputop ends with status $status"
}
if can_attach_to_others; then
	attach_trial attach gettid 0
	expect_match "$(cat "$TMP/attach.g.err")" "$(printf "$PARKS" gettid)" "attach: the refusal is said"
	counts_exact "$TMP/attach.json" 200	# the first pair came before the attach
else
	note "part 2 and 3's attach not run: this user may not attach to other processes"
fi

# --- 3. --gpu-time ---------------------------------------------------------------------------------
GPU='--gpu-time: not loading gputop.s library and CUPTI into [0-9]+: its seccomp filter 1 of 1 \(newest first, [0-9]+ BPF instructions, thread [0-9]+\) answers SECCOMP_RET_KILL_PROCESS to openat, a call of loading --gpu-time.s library and CUPTI: no GPU time for [0-9]+'
if [ -f "$ROOT/build/libgputop-gpu.so" ] && [ -x "$BIN/simcupti/libcupti.so.13" ] || [ -f "$BIN/simcupti/libcupti.so.13" ]; then
	export GPUTOP_CUPTI=$BIN/simcupti/libcupti.so.13
	RB_FILTER=openat rb_same gpu 0 "$(done_line openat)" --gpu-time -- "$P" 4 50
	expect_match "$(cat "$TMP/gpu.err")" "$GPU" "--gpu-time, launch: said why it is not loaded"
	counts_exact "$TMP/gpu.json"
	if can_attach_to_others; then
		attach_trial gpuattach openat 9 --gpu-time
		expect_match "$(cat "$TMP/gpuattach.g.err")" "$GPU" "--gpu-time, attach: said why it is not loaded"
	fi
else
	note "part 3 not run: no build/libgputop-gpu.so or simulated CUPTI"
fi
finish
