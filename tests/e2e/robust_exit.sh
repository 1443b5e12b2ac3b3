#!/usr/bin/env bash
# Robustness, the program ends while gputop is attached (issue 5): it exits (status 0 or not)
# or is killed with SIGKILL in the middle of a busy run. gputop reports it ("exited with
# status", "was killed by signal"), writes its JSON summary (exit_status, term_signal), and exits
# 0 in attach mode, with the program's status in launch mode. Program: tests/progs/rb_busy.c on
# the SIMULATED runtime (and sh for a plain exit status).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_busy sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
EXPECTED='rb_busy: threads=2 iterations=400 failures=0 mismatches=0'

# --- launch mode ------------------------------------------------------------------------------
rb_same exit0 0 "$EXPECTED" -- "$BIN/rb_busy" busy 2 200
F=$TMP/exit0.json
jq_eq "$F" '.exit_status' 0 "launch, exit 0: exit_status 0"
jq_eq "$F" '.term_signal' null "launch, exit 0: no term_signal"

rb_same exit42 42 '' -- sh -c 'exit 42'
jq_eq "$TMP/exit42.json" '.exit_status' 42 "launch, exit 42: exit_status 42 in the JSON"
expect_eq "$(cat "$TMP/exit42.err")" "" "launch, exit 42, -q: nothing on stderr (only errors and warnings)"
timeout -k 5 "$RB_LIMIT" "$GPUTOP" -- sh -c 'exit 42' >/dev/null 2>"$TMP/exit42-said.err" </dev/null
expect_eq "$?" 42 "launch, exit 42, without -q: exit status 42"
expect_match "$(cat "$TMP/exit42-said.err")" 'exited with status 42' "launch, exit 42, without -q: gputop reports it"

# SIGKILL of a launched, busy program: gputop exits 137 like a shell would report. (-b -d 0.1:
# the kill comes once gputop's tables show calls, which the JSON must then have; a fixed pause
# might see none on a loaded machine.)
export RB_STOP_FILE=$TMP/never
rb_gputop_bg kill-launch -b -d 0.1 --json "$TMP/kill-launch.json" -- "$BIN/rb_busy" busy 2 0
wait_for_line "$TMP/kill-launch.out" '^ready' 20
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/kill-launch.out")
wait_for_line "$TMP/kill-launch.out" '^cudaMalloc +[1-9]' 20 || note "no cudaMalloc in gputop's tables after 20 s"
kill -KILL "$PROG"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 137 "launch, SIGKILL: gputop exits with the program's 137"
jq_eq "$TMP/kill-launch.json" '.term_signal' 9 "launch, SIGKILL: term_signal 9 in the JSON"
jq_eq "$TMP/kill-launch.json" '.exit_status' 137 "launch, SIGKILL: exit_status 137 in the JSON"
expect_match "$(cat "$TMP/kill-launch.err")" 'killed by signal 9' "launch, SIGKILL: gputop reports it"
jq_check "$TMP/kill-launch.json" "$(api_row cudaMalloc).calls > 0" "launch, SIGKILL: the calls until then are counted"

# --- attach mode --------------------------------------------------------------------------------
if ! can_attach_to_others; then
	note "attach part not run: this user may not ptrace other processes"
	finish
fi

# It exits by itself.
export RB_GO_FILE=$TMP/go
rm -f "$TMP/go"
rb_spawn exit-attach "$BIN/rb_busy" busy 2 200
rb_gputop_bg exit-attach-g -p "$TARGET" --json "$TMP/exit-attach.json"
rb_wait_attached exit-attach-g
touch "$TMP/go"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "attach, exit: the program exits 0"
expect_eq "$(grep -v '^ready' "$TMP/exit-attach.out")" "$EXPECTED" "attach, exit: its output"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "attach, exit: gputop exits 0"
expect_match "$(cat "$TMP/exit-attach-g.err")" 'exited with status 0' "attach, exit: gputop reports it"
F=$TMP/exit-attach.json
jq_eq "$F" '.exit_status' 0 "attach, exit: exit_status 0 in the JSON"
expect_api "$F" cudaMalloc 400 0
expect_api "$F" cudaMemcpy 800 0
expect_api "$F" cudaFree 400 0
expect_launch_api "$F" 800 cudaLaunchKernel cuLaunchKernel
jq_eq "$F" '.memory.live_allocations' 0 "attach, exit: nothing left allocated"

# exit status 3 from a thread's exit() while others call CUDA
rm -f "$TMP/go"
rb_spawn exit3 sh -c 'echo ready $$; while [ ! -e "$0" ]; do sleep 0.02; done; "$1" busy 2 100 >/dev/null; exit 3' \
	"$TMP/go" "$BIN/rb_busy"
rb_gputop_bg exit3-g -p "$TARGET" --json "$TMP/exit3.json"
rb_wait_attached exit3-g
touch "$TMP/go"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 3 "attach, exit 3: the program's status"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "attach, exit 3: gputop still exits 0 (attach mode)"
jq_eq "$TMP/exit3.json" '.exit_status' 3 "attach, exit 3: exit_status 3 in the JSON"

# SIGKILL while attached and busy
export RB_STOP_FILE=$TMP/never
rm -f "$TMP/go"
rb_spawn kill-attach "$BIN/rb_busy" busy 4 0
rb_gputop_bg kill-attach-g -p "$TARGET" -b -d 0.1 --json "$TMP/kill-attach.json"
rb_wait_attached kill-attach-g
touch "$TMP/go"
wait_for_line "$TMP/kill-attach-g.out" '^cudaMalloc +[1-9]' 20 || note "no cudaMalloc in gputop's tables after 20 s"
kill -KILL "$TARGET"
wait_pid "$TARGET" 20
expect_eq "$WAIT_STATUS" 137 "attach, SIGKILL: the program is killed"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "attach, SIGKILL: gputop exits 0"
expect_match "$(cat "$TMP/kill-attach-g.err")" 'killed by signal 9' "attach, SIGKILL: gputop reports it"
F=$TMP/kill-attach.json
jq_eq "$F" '.term_signal' 9 "attach, SIGKILL: term_signal 9 in the JSON"
jq_eq "$F" '.exit_status' 137 "attach, SIGKILL: exit_status 137 in the JSON"
jq_check "$F" "$(api_row cudaMalloc).calls > 0" "attach, SIGKILL: the calls until then are counted"
finish
