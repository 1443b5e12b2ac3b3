#!/usr/bin/env bash
# The whole job (issue 11), on the SIMULATED runtime: gputop follows every descendant of the
# program it launches, and each traced process keeps its own exact figures under its own PID.
#  - a launcher (bash) that never touches CUDA fork+execs CUDA workers in parallel: each worker's
#    calls, launches and leaks are exact and its own; the launcher has none; gputop exits with the
#    launcher's status; the workers' output is as without gputop;
#  - a Python multiprocessing pool (fork, no exec) whose parent loaded the runtime: every worker's
#    calls are counted under its PID, and the totals are exact;
#  - attach mode: -p PID,PID attaches two processes at once, each with its own figures.
source "$(dirname "$0")/../lib.sh"
need_bin basic sim/libcudart.so.13 wait_then_work
need_gputop
export LD_LIBRARY_PATH=$SIM
MiB=1048576

# One process of processes[] whose command matches a regex, as its own JSON file.
proc_json() { # FILE REGEX -> path
	local out=$1.$(printf '%s' "$2" | tr -c 'a-z0-9' _)
	jq --arg re "$2" '[.processes[] | select(.command | test($re))][0]' "$1" >"$out"
	echo "$out"
}

# --- a launcher that fork+execs two workers --------------------------------------------------
LAUNCH='"$0" 2 >"$1/w2.out" & "$0" 3 --no-leak >"$1/w3.out" & wait; wait; exit 5'
rm -f "$TMP/w2.out" "$TMP/w3.out"
bash -c "$LAUNCH" "$BIN/basic" "$TMP"
PLAIN=$?
cat "$TMP/w2.out" "$TMP/w3.out" >"$TMP/plain.lines"
run_gputop_json "$TMP/l.json" -- -q -- bash -c "$LAUNCH" "$BIN/basic" "$TMP"
expect_eq "$PLAIN" 5 "the launcher exits with 5 without gputop"
expect_eq "$GPUTOP_STATUS" 5 "gputop exits with the launcher's status"
cat "$TMP/w2.out" "$TMP/w3.out" >"$TMP/traced.lines"
expect_file_eq "$TMP/traced.lines" "$TMP/plain.lines" "the workers' output is as without gputop"
F=$TMP/l.json
jq_eq "$F" '.processes | length' 3 "three processes: the launcher and two workers"
L=$(jq '.processes[0]' "$F" >"$F.launcher"; echo "$F.launcher")
jq_eq "$L" '[.api[].calls] | add // 0' 0 "the launcher made no CUDA call"
W2=$(proc_json "$F" 'basic 2$')
W3=$(proc_json "$F" 'basic 3 --no-leak$')
jq_check "$W2" '.ppid > 0 and .exit_status == 0' "worker 'basic 2': its parent and exit status"
# workload.cpp, per iteration: 3 cudaMalloc, 1 cudaMallocHost, 3 cudaMemcpy, 15 launches, 2 cudaFree
expect_api "$W2" cudaMalloc 6 0
expect_api "$W2" cudaFree 4 0
expect_api "$W2" cudaMemcpy 6 0
expect_launch_api "$W2" 30 cudaLaunchKernel cuLaunchKernel
jq_eq "$W2" '.memory.live_bytes' $((2 * 3 * MiB)) "worker 'basic 2' leaks its 2 x 3 MiB"
expect_api "$W3" cudaMalloc 9 0
expect_api "$W3" cudaFree 7 0
expect_launch_api "$W3" 45 cudaLaunchKernel cuLaunchKernel
jq_eq "$W3" '.memory.live_bytes' $((2 * 3 * MiB)) "worker 'basic 3 --no-leak' frees one of its 3 leaks"
jq_check "$W2" '[.memory.leaks[].bytes] | length > 0' "the worker's leaks are listed in its own object"
expect_api "$F" cudaMalloc 15 0
jq_eq "$F" '.memory.live_bytes' $((4 * 3 * MiB)) "top-level totals: every worker's live bytes"

# --no-follow: only the launcher, which makes no call.
run_gputop_json "$TMP/nf.json" -- -q --no-follow -- bash -c "$LAUNCH" "$BIN/basic" "$TMP"
expect_eq "$GPUTOP_STATUS" 5 "--no-follow: gputop exits with the launcher's status"
jq_eq "$TMP/nf.json" '.processes | length' 1 "--no-follow: one process"
jq_eq "$TMP/nf.json" '[.api[].calls] | add // 0' 0 "--no-follow: no worker counted"

# --- a Python multiprocessing pool (fork without exec) ----------------------------------------
if command -v python3 >/dev/null; then
	W=3 T=4
	PY=$(python3 -c 'import sys; print(sys.executable)')	# not a shim script (pyenv)
	run_plain "$TMP/mp" "$PY" "$ROOT/tests/progs/mp_pool.py" $W $T
	expect_match "$(cat "$TMP/mp.out")" '^mp_pool: ok' "the pool works without gputop"
	run_gputop_json "$TMP/mp.json" -- -q -- "$PY" "$ROOT/tests/progs/mp_pool.py" $W $T
	expect_eq "$GPUTOP_STATUS" 0 "pool: gputop exits with the program's status"
	expect_match "$(cat "$GPUTOP_OUT")" '^mp_pool: ok' "pool: every task checked its bytes under gputop"
	jq '{processes: [.processes[] | select(.command | test("mp_pool"))]} + (. | del(.processes))' \
		"$TMP/mp.json" >"$TMP/mp.pool.json"
	F=$TMP/mp.pool.json
	jq_eq "$F" '.processes | length' $((W + 1)) "pool: the parent and its $W workers"
	jq_eq "$F" '.processes[0] | [.api[] | select(.name == "cudaMalloc") | .calls] | add' 1 \
		"pool: the parent's one cudaMalloc is its own"
	jq_eq "$F" '[.processes[1:][] | .api[] | select(.name == "cudaMalloc") | .calls] | add' $((W * T)) \
		"pool: every task's cudaMalloc, in the workers"
	jq_eq "$F" '[.processes[1:][] | .api[] | select(.name == "cudaMemcpy") | .calls] | add' $((2 * W * T)) \
		"pool: every task's two copies, in the workers"
	jq_check "$F" '(.processes[0].pid) as $p | [.processes[1:][] | .ppid == $p] | all' \
		"pool: the workers are the parent's children"
	expect_api "$F" cudaMalloc $((W * T + 1)) 0
else
	note "python3 missing: the pool part is not run"
fi

# --- attach mode: two processes with -p PID,PID -----------------------------------------------
if can_attach_to_others; then
	spawn "$TMP/a1" "$BIN/wait_then_work" --go "$TMP/go1" --iters 2
	A1=$SPAWNED_PID
	spawn "$TMP/a2" "$BIN/wait_then_work" --go "$TMP/go2" --iters 3
	A2=$SPAWNED_PID
	wait_for_line "$TMP/a1.out" '^ready' 30
	wait_for_line "$TMP/a2.out" '^ready' 30
	spawn "$TMP/two" "$GPUTOP" --json "$TMP/two.json" -p "$A1,$A2" --timeout 60
	G=$SPAWNED_PID
	wait_for_line "$TMP/two.err" "attached to $A2" 60 || note "gputop did not say it attached to $A2"
	touch "$TMP/go1" "$TMP/go2"
	wait_pid "$A1" 30
	wait_pid "$A2" 30
	wait_pid "$G" 60
	expect_eq "$WAIT_STATUS" 0 "-p A,B: gputop ends when both have ended"
	jq_eq "$TMP/two.json" '[.processes[].pid]' "[$A1,$A2]" "-p A,B: both processes, in order"
	jq_eq "$TMP/two.json" '.processes[0] | [.api[] | select(.name == "cudaMalloc") | .calls] | add' 6 \
		"-p A,B: the first one's calls (wait_then_work 2)"
	jq_eq "$TMP/two.json" '.processes[1] | [.api[] | select(.name == "cudaMalloc") | .calls] | add' 9 \
		"-p A,B: the second one's calls (wait_then_work 3)"
else
	note "attach part not run: this user may not ptrace other processes"
fi
finish
