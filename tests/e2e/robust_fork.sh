#!/usr/bin/env bash
# Robustness, new processes (issues 5, 11): a child forked while gputop's breakpoints are in
# place gets the program's original bytes back in its copy of memory, then is followed (its own
# figures, under its own PID: processes[] of the JSON) or, with --no-follow, let go; either way
# it calls the CUDA API (the SIMULATED runtime) without dying of SIGTRAP and computes correctly; even when it was forked
# from inside a traced call (its copy of the stack holds the swapped return address) or while
# other threads were inside traced calls. exec: the new image is probed again and its calls are
# counted (dynamic and static cudart; exec from a thread while others call CUDA). vfork + exec
# and posix_spawn of a CUDA program. Output and exit status as without gputop, exactly.
# Program: tests/progs/rb_fork.c.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_fork basic static_basic sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
P=$BIN/rb_fork
OK='rb_fork: failures=0 mismatches=0'

# One process's figures in processes[]: the first (the program) or the other (its child).
proc_of() { # FILE first|child -> a JSON file with that process's object
	local sel='.processes[0]'
	[ "$2" = child ] && sel='.processes[1]'
	jq "$sel" "$1" >"$1.$2"
	echo "$1.$2"
}

# fork: the parent's 4 x work() (5 calls each) and the child's 3, each under its own PID.
rb_same fork 0 "rb_fork: child status=0\n$OK" -- "$P" fork 3
F=$TMP/fork.json
jq_eq "$F" '.processes | length' 2 "fork: two processes"
jq_check "$F" '.processes[1].ppid == .processes[0].pid and .processes[1].exit_status == 0' \
	"fork: the child is the program's, with its exit status"
expect_api "$(proc_of "$F" first)" cudaMalloc 4 0
expect_api "$(proc_of "$F" child)" cudaMalloc 3 0
expect_api "$F" cudaMalloc 7 0
# --no-follow: the child is let go, not counted.
rb_same fork-nofollow 0 "rb_fork: child status=0\n$OK" --no-follow -- "$P" fork 3
F=$TMP/fork-nofollow.json
jq_eq "$F" '.processes | length' 1 "fork --no-follow: one process"
expect_api "$F" cudaMalloc 4 0
F=$TMP/fork.json
F=$(proc_of "$F" first)
expect_api "$F" cudaMemcpy 8 0
expect_api "$F" cudaFree 4 0
expect_launch_api "$F" 4 cudaLaunchKernel cuLaunchKernel
expect_kernel "$F" fork_kernel 4 '[2,1,1]' '[64,1,1]'

# fork 20 times while 3 threads sit in cudaDeviceSynchronize calls (return addresses swapped).
export SIMCUDA_SYNC_US=300
rb_same fork-threads 0 "rb_fork: children=20 ok=20 sync_failures=0\n$OK" -- "$P" fork-threads
unset SIMCUDA_SYNC_US
expect_api "$(proc_of "$TMP/fork-threads.json" first)" cudaMalloc 20 0
expect_api "$(proc_of "$TMP/fork-threads.json" first)" cudaMemcpy 40 0
jq_check "$TMP/fork-threads.json" "$(api_row cudaDeviceSynchronize).calls > 0" \
	"fork-threads: the threads' synchronize calls were traced meanwhile"

# fork from inside cudaDeviceSynchronize (the simulated runtime's test hook calls the program).
export SIMCUDA_SYNC_HOOK=rb_fork_in_sync
rb_same fork-in-call 0 "rb_fork: child status=0\n$OK" -- "$P" fork-in-call
unset SIMCUDA_SYNC_HOOK
expect_api "$(proc_of "$TMP/fork-in-call.json" first)" cudaDeviceSynchronize 1 0
expect_api "$(proc_of "$TMP/fork-in-call.json" first)" cudaMalloc 2 0

# exec: 2 x work() in the old image, then basic 2 (workload.cpp: per iteration 3 cudaMalloc,
# 1 cudaMallocHost, 3 cudaMemcpy, 1 cudaMemcpyAsync, 1 cudaMemset, 15 launches,
# 1 cudaDeviceSynchronize, 2 cudaFree): both images counted.
check_exec_counts() {
	local F=$1 what=$2
	expect_api "$F" cudaMalloc 8 0
	expect_api "$F" cudaMemcpy 10 0
	expect_api "$F" cudaFree 6 0
	expect_api "$F" cudaMallocHost 2 0
	expect_api "$F" cudaMemset 2 0
	expect_api "$F" cudaDeviceSynchronize 2 0
	expect_launch_api "$F" 32 cudaLaunchKernel cuLaunchKernel
	expect_kernel "$F" 'scale(float*, int)' 20 '[4,2,1]' '[128,1,1]'
	jq_eq "$F" '.exit_status' 0 "$what: the new image's exit status"
}
rb_same exec 0 "$OK\nbasic: ok iterations=2" -- "$P" exec "$BIN/basic" 2
check_exec_counts "$TMP/exec.json" exec
# static_basic links NVIDIA's cudart statically (no GPU here: every call fails, and is counted).
E='(error 35 InsufficientDriver)'
rb_same exec-static 0 "$OK\nbasic: cudaMalloc failed 6 times $E\nbasic: cudaMallocHost failed 2 times $E
basic: cudaMemcpy failed 6 times $E\nbasic: cudaMemcpyAsync failed 2 times $E
basic: cudaMemset failed 2 times $E\nbasic: cudaLaunchKernel failed 30 times $E
basic: cudaDeviceSynchronize failed 2 times $E\nbasic: cudaFree failed 4 times $E
basic: FAILED iterations=2 failures=54 mismatches=0" -- "$P" exec "$BIN/static_basic" 2
F=$TMP/exec-static.json
expect_api "$F" cudaMalloc 8 6
expect_api "$F" cudaMallocHost 2 2
expect_api "$F" cudaMemcpy 10 6
expect_api "$F" cudaDeviceSynchronize 2 2
jq_eq "$F" '.exit_status' 0 "exec of static cudart: the new image's exit status"

# exec from a thread while 3 others loop on work(): the calls of the old image vary, the new
# image's are exact.
rb_same exec-thread 0 "$OK\nbasic: ok iterations=2" -- "$P" exec-thread "$BIN/basic" 2
F=$TMP/exec-thread.json
expect_api "$F" cudaMallocHost 2 0
expect_api "$F" cudaMemset 2 0
expect_api "$F" cudaDeviceSynchronize 2 0
expect_kernel "$F" 'scale(float*, int)' 20 '[4,2,1]' '[128,1,1]'
jq_check "$F" "$(api_row cudaMalloc).calls >= 8" "exec-thread: the old image's calls counted too"

# vfork + exec, posix_spawn: the parent's 2 x work() counted; the child runs basic 1 (a CUDA
# program: probed from its first instruction, exact), under its own PID; --no-follow: untraced.
for how in vfork spawn; do
	rb_same $how 0 "basic: ok iterations=1\nrb_fork: $how child status=0\n$OK" -- "$P" $how "$BIN/basic" 1
	expect_api "$(proc_of "$TMP/$how.json" first)" cudaMalloc 2 0
	jq_eq "$(proc_of "$TMP/$how.json" first)" "($(api_row cudaMallocHost).calls // 0)" 0 \
		"$how: the parent made no cudaMallocHost"
	C=$(proc_of "$TMP/$how.json" child)
	expect_api "$C" cudaMalloc 3 0
	expect_api "$C" cudaMallocHost 1 0
	expect_launch_api "$C" 15 cudaLaunchKernel cuLaunchKernel
	jq_check "$C" '.command | test("basic 1")' "$how: the child's command is what it ran"
	rb_same $how-nofollow 0 "basic: ok iterations=1\nrb_fork: $how child status=0\n$OK" --no-follow -- \
		"$P" $how "$BIN/basic" 1
	jq_eq "$TMP/$how-nofollow.json" "($(api_row cudaMallocHost).calls // 0)" 0 \
		"$how --no-follow: the child is not traced"
done

# attach mode: fork after the attach (the probes planted into a running program).
if can_attach_to_others; then
	rm -f "$TMP/go"
	rb_spawn fork-attach sh -c 'echo ready $$; while [ ! -e "$0" ]; do sleep 0.02; done; exec "$1" fork 3' \
		"$TMP/go" "$P"
	# (the shell execs rb_fork once the go file exists: gputop sees that exec and probes it)
	rb_gputop_bg fork-attach-g -p "$TARGET" --json "$TMP/fork-attach.json"
	rb_wait_attached fork-attach-g
	touch "$TMP/go"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "attach: exit status 0"
	grep -v '^ready' "$TMP/fork-attach.out" >"$TMP/fork-attach.lines"
	expect_file_eq "$TMP/fork-attach.lines" "$TMP/fork.plain" "attach: output as without gputop"
	wait_pid "$GPUTOP_PID" 20
	expect_eq "$WAIT_STATUS" 0 "attach: gputop ends with the program, status 0"
	expect_api "$TMP/fork-attach.json" cudaMalloc 4 0
else
	note "attach part not run: this user may not ptrace other processes"
fi
finish
