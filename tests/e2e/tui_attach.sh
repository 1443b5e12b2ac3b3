#!/usr/bin/env bash
# TUI in attach mode (SIMULATED runtime): gputop -p attaches to a running tui_loop.
#  1. The Kernels view shows its kernel; q detaches at once (no question): gputop exits 0, the
#     program runs on, finishes normally (exit 0, its usual output: no breakpoint left behind).
#  2. When the program exits while attached, the TUI keeps the final figures with
#     "program exited with status 0 — press q to quit"; q then leaves, status 0.
#  3. The terminal goes away under a gputop that gets no SIGHUP (setsid): gputop sees its reads
#     fail, detaches and ends; the program runs on and finishes normally.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop sim/libcudart.so.13
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIM

# start_target NAME ARGS...: tui_loop in the background, set up; pid in TARGET.
start_target() {
	local name=$1
	shift
	spawn "$TMP/$name" "$BIN/tui_loop" --info "$TMP/$name.info" "$@"
	TARGET=$SPAWNED_PID
	wait_for_line "$TMP/$name.info" '^ready$' "$TUI_WAIT" || bail "$name: tui_loop set up"
}

# --- 1. q detaches; the program runs on ---
start_target detach --seconds 120 --stop "$TMP/stop"
tui_gputop 100 30 -- -d 0.5 -p "$TARGET"
expect_screen "PID $TARGET" "detach: the TUI shows the attached PID"
expect_screen 'attached for' "detach: says it is attached"
tui_keys k
expect_screen 'tui_demo::zeta_step\(float\*, int\) +[0-9]' "detach: the kernel shows"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "detach: q detaches, gputop exits 0"
if kill -0 "$TARGET" 2>/dev/null; then
	ok "detach: the program still runs"
else
	not_ok "detach: the program still runs"
fi
expect_screen 'detached from' "detach: gputop says it detached"
sleep 0.5	# a little more work after the detach: a breakpoint left behind would kill it
touch "$TMP/stop"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "detach: the program exits with status 0"
expect_match "$(cat "$TMP/detach.out")" '^tui_loop: ok launches=[0-9]+$' \
	"detach: the program's output is as without gputop"

# --- 2. the program exits while attached ---
start_target ends --seconds 120 --stop "$TMP/stop2"
tui_gputop 100 30 -- -d 0.5 -p "$TARGET"
tui_keys k
expect_screen 'tui_demo::zeta_step' "ends: the kernel shows"
touch "$TMP/stop2"
expect_screen 'program exited with status 0 — press q to quit' "ends: the note when the program exits"
expect_screen 'tui_demo::zeta_step\(float\*, int\) +[0-9]' "ends: the final figures stay"
tui_keys l
expect_screen 'Live since the attach: 0 allocations' "ends: views still switch (everything was freed at the end)"
if [ -f "$TMP/tui.status" ]; then
	not_ok "ends: gputop waits for q"
else
	ok "ends: gputop waits for q"
fi
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "ends: q leaves, status 0"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "ends: the program's exit status 0"

# --- 3. the terminal goes away ---
command -v setsid >/dev/null || skip "setsid is not installed"
start_target lost --seconds 120 --stop "$TMP/stop3"
tui_start 100 30 env LANG=C.UTF-8 setsid "$GPUTOP" -d 0.5 -p "$TARGET"
expect_screen "PID $TARGET" "lost: the TUI is up"
tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$TARGET/status")
note "gputop is pid $tracer"
tui_tmux kill-server
deadline=$(($(date +%s) + TUI_WAIT))
while [ "$tracer" != 0 ] && kill -0 "$tracer" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
	[ "$(awk '{ print $3 }' "/proc/$tracer/stat" 2>/dev/null)" == Z ] && break
	sleep 0.1
done
if [ "$tracer" != 0 ] && ! kill -0 "$tracer" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$tracer/stat" 2>/dev/null)" == Z ]; then
	ok "lost: gputop ends when its terminal is gone"
else
	not_ok "lost: gputop ends when its terminal is gone (pid $tracer)"
fi
expect_eq "$(awk '/^TracerPid:/ { print $2 }' "/proc/$TARGET/status")" 0 "lost: the program is no longer traced"
touch "$TMP/stop3"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "lost: the program exits with status 0"
expect_match "$(cat "$TMP/lost.out")" '^tui_loop: ok launches=[0-9]+$' "lost: the program's output is as usual"
finish
