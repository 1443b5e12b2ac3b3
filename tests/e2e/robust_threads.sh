#!/usr/bin/env bash
# Robustness, threads (issue 5): threads starting and exiting by the thousand while calling
# CUDA; threads that leave a traced call without returning from it (its return address is
# swapped for gputop's trampoline, which is then never reached): pthread_exit from inside the
# call (as from a host callback; the SIMULATED runtime's test hook SIMCUDA_SYNC_HOOK makes
# cudaStreamSynchronize call the program), the main thread doing so while another goes on,
# siglongjmp out of the call. Output and exit status as without gputop, exactly.
# Programs: tests/progs/rb_threads.c (C: glibc's setjmp-based pthread_cleanup_push) and
# rb_unwind.cpp (C++ destructors and exceptions, which need the unwinder).
# Known limitations, logged as "KNOWN ISSUE" and not failed (see the notes at the end):
# the C++ unwinder stops at the trampoline address.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_threads rb_unwind sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
P=$BIN/rb_threads

# --- thousands of short-lived threads -------------------------------------------------------------
start=$(date +%s.%N)
rb_same churn 0 'rb_threads: churn threads=3000 ok=3000' -- "$P" churn 3000 16
F=$TMP/churn.json
expect_api "$F" cudaMalloc 3000 0
expect_api "$F" cudaFree 3000 0
expect_launch_api "$F" 3000 cudaLaunchKernel cuLaunchKernel
expect_kernel "$F" churn_kernel 3000 '[1,1,1]' '[32,1,1]'
note "3000 threads under gputop in $(jq '.duration_s' "$F") s"

# --- calls that never return -------------------------------------------------------------------
export SIMCUDA_SYNC_HOOK=rb_threads_hook
rb_same exit-in-call 0 'rb_threads: exit-in-call threads=20 retval=20 cleanups=20 after=0' -- "$P" exit-in-call 20
F=$TMP/exit-in-call.json
expect_api "$F" cudaMalloc 1 0
expect_api "$F" cudaFree 1 0
# A call is counted when it returns: the 20 that never did are not (the last one did).
jq_check "$F" "$(api_row cudaStreamSynchronize).calls >= 1" "exit-in-call: the synchronize that returned is counted"

rb_same main-exit 0 'rb_threads: main-exit worker failures=0' -- "$P" main-exit
expect_api "$TMP/main-exit.json" cudaMalloc 10 0
jq_eq "$TMP/main-exit.json" '.exit_status' 0 "main-exit: the process's exit status in the JSON"

rb_same longjmp 0 'rb_threads: longjmp jumps=10\nrb_threads: longjmp after=0' -- "$P" longjmp 10
# After a call left by longjmp, the thread's later calls are still counted: the left frames
# are dropped once their return slot no longer holds the trampoline.
expect_api "$TMP/longjmp.json" cudaMalloc 5 0

# The same in attach mode: detach with frames left by longjmp and by exited threads.
if can_attach_to_others; then
	rm -f "$TMP/go" "$TMP/stop"
	rb_spawn jmp-attach env RB_STOP_FILE="$TMP/stop" sh -c \
		'echo ready $$; while [ ! -e "$0" ]; do sleep 0.02; done; exec "$1" longjmp 200' "$TMP/go" "$P"
	rb_gputop_bg jmp-attach-g -p "$TARGET"
	rb_wait_attached jmp-attach-g
	touch "$TMP/go"
	wait_for_line "$TMP/jmp-attach.out" 'jumps=' 20
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "longjmp, attach and detach: gputop status 0"
	touch "$TMP/stop"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "longjmp, attach and detach: status 0"
	printf 'rb_threads: longjmp jumps=200\nrb_threads: longjmp after=0\n' >"$TMP/jmp.expected"
	grep -v '^ready' "$TMP/jmp-attach.out" >"$TMP/jmp-attach.lines"
	expect_file_eq "$TMP/jmp-attach.lines" "$TMP/jmp.expected" \
		"longjmp, attach and detach: output (calls after the detach work)"
fi

# --- a thread's end while gputop is frozen: its joiner does not wait for gputop -------------------
# A thread that stopped at its exit (PTRACE_EVENT_EXIT) waited there for a SIGSTOPped gputop,
# and pthread_join with it: only the group leader stops at its exit now (engine/exit_watch.c).
# The worker ends while gputop is frozen; the main thread must join it and go on meanwhile
# (20 s: the program needs milliseconds; a held one never gets there while gputop is frozen).
if can_attach_to_others; then
	unset SIMCUDA_SYNC_HOOK
	rm -f "$TMP/go" "$TMP/stop"
	rb_spawn join-late env RB_STOP_FILE="$TMP/stop" RB_GO_FILE="$TMP/go" "$P" join-late
	rb_gputop_bg join-late-g -p "$TARGET" -b --json "$TMP/join-late.json"
	rb_wait_attached join-late-g
	kill -STOP "$GPUTOP_PID"
	touch "$TMP/stop"
	wait_for_line "$TMP/join-late.out" 'joined$' 20
	expect_eq "$?" 0 "join-late: with gputop frozen, the main thread joined the worker that ended"
	kill -CONT "$GPUTOP_PID"
	touch "$TMP/go"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "join-late: status 0"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "join-late: gputop ends with the program, status 0"
	expect_eq "$(grep -v '^ready' "$TMP/join-late.out")" $'rb_threads: join-late joined\nrb_threads: join-late after=0' \
		"join-late: output as without gputop"
	expect_api "$TMP/join-late.json" cudaMalloc 1 0
	export SIMCUDA_SYNC_HOOK=rb_threads_hook
fi

# --- 12 calls in flight at once: the call stub's table read past its first 8 records --------------
# gputop reads the records ever used and 8 more (launchring_take_calls); 12 threads held inside
# cudaStreamSynchronize at once must each show their call in --dump's picture.
if can_attach_to_others; then
	rm -f "$TMP/if-go" "$TMP/if-stop"
	rb_spawn in-flight env RB_STOP_FILE="$TMP/if-stop" RB_GO_FILE="$TMP/if-go" "$P" in-flight 12
	rb_gputop_bg in-flight-g --dump --timeout 60 --json "$TMP/in-flight.json" -p "$TARGET"
	rb_wait_attached in-flight-g
	touch "$TMP/if-stop"
	wait_for_line "$TMP/in-flight.out" '^rb_threads: in-flight inside=12' 30 || not_ok "in-flight: 12 threads inside"
	sleep 0.3	# a drain or more with every call in flight
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "in-flight: gputop --dump status 0"
	touch "$TMP/if-go"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "in-flight: the program exits 0"
	jq_eq "$TMP/in-flight.json" '[.job.processes[0].threads[] | select(.call.name == "cudaStreamSynchronize" and .call.source == "call stub")] | length' 12 \
		"in-flight: each of the 12 threads' cudaStreamSynchronize in flight, from the call stub's table"
fi

# --- C++: forced unwinding and exceptions through a call in flight ----------------------------------
export SIMCUDA_SYNC_HOOK=rb_unwind_hook
rb_plain destructor "$BIN/rb_unwind" destructor 5
expect_eq "$(cat "$TMP/destructor.plain")" 'rb_unwind: destructor threads=5 retval=5 destructors=5' \
	"destructor: without gputop, pthread_exit runs the destructors"
rb_traced destructor -- "$BIN/rb_unwind" destructor 5
expect_eq "$TRACED_STATUS" 0 "destructor: under gputop, status 0"
expect_match "$(cat "$TMP/destructor.traced")" '^rb_unwind: destructor threads=5 retval=5 ' \
	"destructor: under gputop, the threads exit with their value"
cmp -s "$TMP/destructor.traced" "$TMP/destructor.plain"
known_issue $? "destructor: C++ destructors above a call in flight run on pthread_exit" \
	"$(cat "$TMP/destructor.traced") (the unwinder finds no unwind info at the trampoline address and stops there)"

rb_plain throw "$BIN/rb_unwind" throw 5
expect_eq "$(cat "$TMP/throw.plain")" 'rb_unwind: throw thrown=5 caught=5 destructors=5' \
	"throw: without gputop, the exception crosses the runtime's frames"
rb_traced throw -- "$BIN/rb_unwind" throw 5
[ "$TRACED_STATUS" -eq 0 ] && cmp -s "$TMP/throw.traced" "$TMP/throw.plain"
known_issue $? "throw: a C++ exception thrown from inside a traced call reaches its catch" \
	"status $TRACED_STATUS (std::terminate: no unwind info at the trampoline address)"
finish
