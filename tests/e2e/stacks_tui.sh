#!/usr/bin/env bash
# Issue 12, views: gputop --stacks allocs,launches runs tests/progs/stacks.c (SIMULATED runtime) in a tmux
# terminal and
# stays at its final screen. Leaks: Enter on the top row shows the leak's whole stack (leak_b,
# leak_a, main with their lines); g groups the live allocations by site (the SITE column names
# leak_b's line), g again ungroups. Kernels: Enter shows the kernel's launch site. API: Enter on
# cudaMalloc shows the failing call's site. The help lists Enter and g.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin stacks sim/libcudart.so.13
need_gputop
SRC=$ROOT/tests/progs/stacks.c
line_of() {
	grep -n "@site $1\$\|@site $1 " "$SRC" | head -n1 | cut -d: -f1
}
L_B=$(line_of leak_b) L_A=$(line_of leak_a) L_FAIL=$(line_of fail_site) L_LAUNCH=$(line_of launch_site)

tui_gputop 120 32 -- --stacks allocs,launches -- "$BIN/stacks"
expect_screen 'program exited with status 0' "the program ran to its end under the TUI"

# --- Leaks: Enter shows the stack -----------------------------------------------------------
tui_keys l
expect_screen 'ADDRESS +SIZE' "l shows the Leaks view"
tui_keys Enter
expect_screen 'Call stack, innermost first' "Enter opens the allocation's call stack"
expect_screen "leak_b at $SRC:$L_B \\[stacks\\]" "the stack: leak_b at its line"
expect_screen "leak_a at $SRC:$L_A \\[stacks\\]" "the stack: leak_a at its line"
expect_screen 'cudaMalloc \[libcudart\.so\.13\]' "the stack: cudaMalloc, innermost"
tui_keys Escape
expect_screen_gone 'Call stack, innermost first' "any key closes the pane"

# --- Leaks by site: g --------------------------------------------------------------------------
tui_keys g
expect_screen 'LIVE.* +ALLOCS +OLDEST +ALLOCATED +SITE' "g groups the Leaks view by site"
expect_screen "3\\.00 MiB +1 +[0-9.]+s +3\\.00 MiB leak_b at stacks\\.c:$L_B \\[stacks\\]" "one site: 3 MiB live, 1 allocation, leak_b's line"
tui_keys Enter
expect_screen "leak_a at $SRC:$L_A" "Enter on a site shows its stack"
tui_keys Escape
expect_screen_gone 'Call stack, innermost first' "the pane closes"
tui_keys g
expect_screen 'ADDRESS +SIZE' "g again: every allocation"

# --- Kernels: launch sites; API: error sites ---------------------------------------------------
tui_keys k
expect_screen 'stacks_kernel +2' "k: the kernel, 2 launches"
tui_keys Enter
expect_screen 'Launch sites' "Enter opens the kernel's launch sites"
expect_screen "launch_site at $SRC:$L_LAUNCH \\[stacks\\]" "the launch site's line"
tui_keys Escape
expect_screen_gone 'Launch sites' "the pane closes"
tui_keys a
expect_screen 'FUNCTION +CALLS' "a: the API view"
expect_screen '^ cudaMalloc +3 ' "cudaMalloc on top (3 calls)"
tui_keys Enter
expect_screen 'Error sites' "Enter opens cudaMalloc's error sites"
expect_screen 'error 2 cudaErrorMemoryAllocation, 1 time, from here:' "the error and its count"
expect_screen "fail_site at $SRC:$L_FAIL \\[stacks\\]" "the failing call's line"
tui_keys Escape
expect_screen_gone 'Error sites' "the pane closes"

# --- the help says so --------------------------------------------------------------------------
tui_keys '?'
expect_screen "Enter +the row's call stacks \(Leaks, Memory, Kernels, API, Job\)" "help lists Enter"
expect_screen 'g +group Leaks by allocation site, Memory by line' "help lists g"
tui_keys x
expect_screen_gone 'gputop keys' "any key closes the help"
tui_keys q
tui_wait_status 10
expect_eq "$TUI_STATUS" 0 "gputop exits 0 after q"
finish
