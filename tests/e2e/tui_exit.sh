#!/usr/bin/env bash
# TUI, the end of a session (SIMULATED runtime, gputop launching tui_loop in tmux):
#  1. The program exits by itself: the TUI keeps the final state with "program exited with
#     status 0 — press q to quit", views still switch, and q leaves with the program's status;
#     --json is already written before q.
#  2. The program is killed by a signal: "program killed by signal 15"; q leaves with 143.
#  3. -n 3: the TUI detaches by itself after 3 refreshes (exit 0) and the program runs on.
#  4. A program that loads CUDA late (dlopen_late, its output sent to a file with -o): the
#     status line says "no CUDA library ... yet: waiting for one to load" until it does, then
#     its kernel shows.
#  5. q pressed while the program runs opens the kill-or-detach question; the program ends
#     before an answer: gputop leaves with its status, no second q (a q in the instant between
#     the program's end and the session's met the question, which then closed and waited).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop dlopen_late sim/libcudart.so.13
need_gputop

# --- 1. exits by itself ---
tui_gputop 100 30 -- -d 0.5 --json "$TMP/exit.json" -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop1" --info "$TMP/info1"
tui_read_info "$TMP/info1" || bail "tui_loop set up under gputop"
tui_keys k
expect_screen 'tui_demo::zeta_step\(float\*, int\) +[0-9]' "exit: the kernel shows"
touch "$TMP/stop1"
expect_screen 'program exited with status 0 — press q to quit' "exit: the note in the status line"
# --json is written when the program ends, not when the TUI is left (the main thread writes it
# while the TUI shows the final figures): whole, with the exit status, before q.
wait_for_line "$TMP/exit.json" '^}$' 30 || note "exit: no --json before q"
jq_eq "$TMP/exit.json" '.exit_status' 0 "exit: --json written whole before q, with the exit status"
expect_screen 'tui_demo::zeta_step\(float\*, int\) +[0-9]' "exit: the final figures stay"
tui_keys a
expect_screen 'cudaFree +1 ' "exit: the API view has the final calls (cudaFree at the end)"
tui_keys '?'
expect_screen 'gputop keys' "exit: help still works"
tui_keys Escape
expect_screen_gone 'gputop keys' "exit: help closes"
[ -f "$TMP/tui.status" ] && not_ok "exit: gputop waits for q" || ok "exit: gputop waits for q"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "exit: q leaves with the program's exit status (0)"

# --- 2. killed by a signal ---
tui_gputop 100 30 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --info "$TMP/info2"
tui_read_info "$TMP/info2" || bail "tui_loop set up under gputop"
expect_screen "PID $TARGET_PID" "signal: running"
kill -TERM "$TARGET_PID"
expect_screen 'program killed by signal 15 — press q to quit' "signal: the note says which signal"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 143 "signal: gputop exits with 128+15"

# --- 3. -n 3 ---
tui_gputop 100 30 -- -d 0.3 -n 3 -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop3" --info "$TMP/info3"
tui_read_info "$TMP/info3" || bail "tui_loop set up under gputop"
tui_wait_status
expect_eq "$TUI_STATUS" 0 "-n 3: gputop leaves by itself and exits 0"
kill -0 "$TARGET_PID" 2>/dev/null && ok "-n 3: the program runs on" || not_ok "-n 3: the program runs on"
touch "$TMP/stop3"
expect_screen '^tui_loop: ok launches=[0-9]+' "-n 3: the program finishes normally"

# --- 4. CUDA loaded late ---
tui_gputop 100 30 -- -d 0.5 -o "$TMP/late.out" -- "$BIN/dlopen_late" --go "$TMP/go4"
expect_screen 'no CUDA library in [0-9]+ yet: waiting for one to load' "late: the status line says it waits"
expect_screen 'no CUDA library yet' "late: so does the Overview"
wait_for_line "$TMP/late.out" '^ready [0-9]+$' "$TUI_WAIT" && ok "late: -o: the program's output went to the file" ||
	not_ok "late: -o: the program's output went to the file"
touch "$TMP/go4"
tui_keys k
expect_screen 'late_kernel.* 4 ' "late: its kernel shows once CUDA is loaded"
expect_screen 'program exited with status 0' "late: the program ends"
expect_screen_gone 'waiting for one to load' "late: no more waiting notice"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "late: exit status 0"
wait_for_line "$TMP/late.out" '^dlopen_late: ok' 30 && ok "late: the program's last line in the -o file" ||
	not_ok "late: the program's last line in the -o file"

# --- 5. the program ends while the quit question is open ---
tui_gputop 100 30 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop5" --info "$TMP/info5"
tui_read_info "$TMP/info5" || bail "tui_loop set up under gputop"
expect_screen "PID $TARGET_PID" "question: running"
tui_keys q
expect_screen 'k: kill the program, d: detach' "question: q asks kill or detach"
touch "$TMP/stop5"
tui_wait_status
expect_eq "$TUI_STATUS" 0 "question: the program ended: gputop leaves with its status, no second q"
finish
