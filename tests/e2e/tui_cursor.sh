#!/usr/bin/env bash
# TUI at 80x24, the cursor (issue 26): every table has a selected row in reverse video, moved
# by the arrows, and Enter opens the selected row's stacks, not the top one's (SIMULATED
# runtime; gputop --stacks allocs,launches launches tui_loop: 48 MiB by cudaMalloc and 3 MiB by
# cudaMallocHost live, kernels zeta_step and alpha_init, zeta_step launched 10 times as often).
#  - Leaks: the cursor starts on the top row; Down, Enter: the stack of the cudaMallocHost row;
#    Up, Enter: the cudaMalloc row's;
#  - Kernels: Down selects alpha_init; r reverses the order and the cursor stays on alpha_init;
#    Enter: alpha_init's launch sites;
#  - Bandwidth, a view without stacks, has the cursor too;
#  - Left and Right scroll names cut at 60 columns (demo's kernels) sideways, and say so where
#    a view has no names (Leaks).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop demo sim/libcudart.so.13
need_gputop

tui_gputop 80 24 -- -d 0.5 --stacks allocs,launches -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop" \
	--info "$TMP/info"
tui_read_info "$TMP/info" || bail "tui_loop set up under gputop (its --info file)"

# --- Leaks ---
tui_keys l
expect_screen "$LIVE_ADDR +48\\.0 MiB" "Leaks: the 48 MiB allocation" || bail "the Leaks view shows"
expect_screen '3\.00 MiB +host' "Leaks: the 3 MiB pinned host buffer"
expect_cursor "^ *$LIVE_ADDR +48\\.0 MiB" "the cursor starts on the top row (48 MiB)"
tui_keys Down
expect_cursor '3\.00 MiB +host +cudaMallocHost' "Down: the cursor on the second row (cudaMallocHost)"
tui_keys Enter
expect_screen 'Call stack, innermost first' "Enter opens a call stack"
expect_screen '│ +cudaMallocHost \[libcudart\.so\.13\]' "... the selected row's: cudaMallocHost innermost"
expect_screen_gone '│ +cudaMalloc \[libcudart' "... not the top row's (cudaMalloc)"
tui_keys Escape
expect_screen_gone 'Call stack, innermost first' "Esc closes the pane"
tui_keys Up
expect_cursor "^ *$LIVE_ADDR +48\\.0 MiB" "Up: back on the top row"
tui_keys Enter
expect_screen '│ +cudaMalloc \[libcudart\.so\.13\]' "Enter: now the top row's stack (cudaMalloc)"
tui_keys Escape
expect_screen_gone 'Call stack, innermost first' "the pane closes"

# --- Kernels: the cursor stays on its row when the order changes ---
tui_keys k
expect_screen 'tui_demo::alpha_init' "Kernels: both kernels" || bail "the Kernels view shows"
expect_cursor 'tui_demo::zeta_step' "Kernels: the cursor on the top row (zeta_step, launched most)"
tui_keys Down
expect_cursor 'tui_demo::alpha_init' "Down: alpha_init"
tui_keys r
expect_screen 'LAUNCHES▲' "r: fewest launches first"
if tui_wait '^ tui_demo::alpha_init' && [ "$(grep -m1 -oE '^ tui_demo::(alpha|zeta)' <<<"$SCREEN")" == " tui_demo::alpha" ]; then
	ok "r: alpha_init is now the top row"
else
	not_ok "r: alpha_init is now the top row"
	tui_show_screen
fi
expect_cursor 'tui_demo::alpha_init' "the cursor stayed on alpha_init (now on top)"
tui_keys Enter
expect_screen 'Launch sites' "Enter opens the launch sites"
expect_screen '│ +tui_demo::alpha_init\(int\*\) +│' "... of alpha_init, the selected kernel"
expect_screen_gone '│ +tui_demo::zeta_step' "... not of zeta_step"
tui_keys Escape
expect_screen_gone 'Launch sites' "the pane closes"
tui_keys r

# --- Bandwidth: no stacks, a cursor all the same ---
tui_keys b
expect_screen 'H2D +1 +3\.00 MiB' "Bandwidth: the H2D copy"
expect_cursor '^ *H2D +1 +3\.00 MiB' "Bandwidth: the cursor on its one row"
tui_keys Enter
expect_screen 'no call stacks here' "Enter in Bandwidth says where stacks are"
touch "$TMP/stop"
expect_screen 'program exited with status 0' "tui_loop ends"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "q: gputop exits 0"

# --- Left and Right: demo's kernel names at 60 columns ---
NAME='ml::linear_backward(float*, float const*, int)'
tui_gputop 60 20 -- -d 0.5 -- "$BIN/demo" 120
tui_keys k
expect_screen 'ml::linear_backward\(float\*, float cons… +[0-9]' "60 columns: the name cut at the end" ||
	bail "demo's Kernels view at 60 columns"
tui_keys p
expect_screen 'PAUSED' "paused"
tui_keys Right
expect_screen '^ …[^ ]*backward\(float\*, float const\*, int\) +[0-9]' "Right: the name's end shows, … in front"
expect_screen_gone 'ml::linear_backward' "Right: its start is scrolled off"
tui_keys Right
expect_screen '^ …[^ ]*backward\(float\*, float const\*, int\) +[0-9]' "Right again: no further than the end"
tui_keys Left
expect_screen 'ml::linear_backward\(float\*, float cons… +[0-9]' "Left: back to the start"
tui_keys l
expect_screen 'ADDRESS +SIZE' "Leaks"
tui_keys Right
expect_screen 'no long names here to scroll sideways' "Right where there are no names says so"
tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k: demo is killed"
finish
