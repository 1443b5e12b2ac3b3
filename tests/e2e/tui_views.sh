#!/usr/bin/env bash
# TUI acceptance 1: each view shows the expected rows. gputop launches tui_loop (SIMULATED
# runtime) in a tmux terminal of 120x30: a named kernel launched in a loop (50/s), one 48 MiB
# allocation kept live, one 3 MiB H2D copy.
#  Overview: the PID, live GPU memory, launches/s, H2D bytes, sparklines.
#  Kernels (k): the demangled names, a launch count that grows between two captures, grid x block.
#  Leaks (l): the live allocation's size and address (the address the program printed).
#  Memory (m): no PyTorch here, it says so.
#  Bandwidth (b): the H2D copy's bytes.  API (a): cudaLaunchKernel and cudaMalloc rows.
#  Tab / Shift-Tab cycle through the views (Comm, c, then Job, j, last).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop sim/libcudart.so.13
need_gputop

tui_gputop 120 30 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --info "$TMP/info"
tui_read_info "$TMP/info" || bail "tui_loop set up under gputop (its --info file)"
note "program pid $TARGET_PID, live allocation at $LIVE_ADDR"

# --- Overview (the first view) ---
expect_screen "PID $TARGET_PID" "overview: the target's PID"
expect_screen 'Overview +Leaks +Memory +Kernels +Bandwidth +API' "the view tabs"
expect_screen 'GPU memory +48\.0 MiB +peak 48\.0 MiB' "overview: live GPU memory 48.0 MiB and its peak"
expect_screen 'H2D .*3\.00 MiB' "overview: H2D bytes 3.00 MiB"
expect_screen 'Launches/s +[1-9]' "overview: launches per second"
expect_screen 'API calls/s +[1-9]' "overview: calls per second"
expect_screen 'Launches/s .*launches +[▁▂▃▄▅▆▇█]+' "overview: a sparkline of launches (Unicode blocks)"
expect_screen 'q Quit .*Help' "the function bar"

# --- Kernels ---
tui_keys k
expect_screen 'KERNEL +LAUNCHES' "kernels: k shows the Kernels view"
expect_screen 'tui_demo::zeta_step\(float\*, int\) +[0-9]' "kernels: demangled name of the loop's kernel"
expect_screen 'tui_demo::alpha_init\(int\*\) +[0-9]' "kernels: the second kernel"
expect_screen 'zeta_step.* 16 × 128 ' "kernels: last grid x block of zeta_step"
expect_screen 'alpha_init.* \(2,3,1\) × \(64,2,1\) ' "kernels: last grid x block of alpha_init"
first=$(tui_kernel_launches 'tui_demo::zeta_step(float*, int)')
note "zeta_step launches at the first capture: ${first:-?}"
deadline=$(($(date +%s) + TUI_WAIT))
second=$first
while [ "$(date +%s)" -lt "$deadline" ]; do
	sleep 0.3
	tui_capture
	second=$(tui_kernel_launches 'tui_demo::zeta_step(float*, int)')
	[ -n "$first" ] && [ -n "$second" ] && [ "$second" -gt "$first" ] && break
done
if [ -n "$first" ] && [ -n "$second" ] && [ "$second" -gt "$first" ]; then
	ok "kernels: the launch count grows between two captures ($first -> $second)"
else
	not_ok "kernels: the launch count grows between two captures (${first:-?} -> ${second:-?})"
	tui_show_screen
fi
expect_screen 'zeta_step.*[0-9.]+%' "kernels: share of launches"

# --- Leaks ---
tui_keys l
expect_screen 'ADDRESS +SIZE' "leaks: l shows the Leaks view"
expect_screen "$LIVE_ADDR +48\\.0 MiB +device +cudaMalloc " "leaks: the live allocation's address and size"
expect_screen 'Live: 2 allocations; 48\.0 MiB device' "leaks: totals on top"
expect_screen 'cudaMallocHost' "leaks: the pinned host buffer"

# --- Memory (no PyTorch here) ---
tui_keys m
expect_screen 'PyTorch: no CUDA caching allocator here' "memory: m shows the Memory view, which says there is no PyTorch"

# --- Bandwidth ---
tui_keys b
expect_screen 'COPY.? +CALLS +BYTES' "bandwidth: b shows the Bandwidth view"
expect_screen 'H2D +1 +3\.00 MiB ' "bandwidth: one H2D copy of 3.00 MiB"

# --- API ---
tui_keys a
expect_screen 'FUNCTION +CALLS' "api: a shows the API view"
expect_screen 'cudaLaunchKernel +[0-9]' "api: cudaLaunchKernel row"
expect_screen 'cudaMalloc +1 ' "api: cudaMalloc called once"

# --- Tab / Shift-Tab ---
tui_keys Tab
expect_screen 'no NCCL call yet' "Tab after API: the Comm view (no NCCL here)"
tui_keys Tab
expect_screen 'RANK.* +NOW +.*ODD ONE OUT' "Tab after Comm: the Job view"
expect_screen "^ +— +$TARGET_PID " "Job: the traced process's row, no rank"
tui_keys Tab
expect_screen 'Target +PID' "Tab after Job comes back to the Overview"
tui_keys BTab BTab BTab
expect_screen 'FUNCTION +CALLS' "Shift-Tab three times goes back to API"
tui_keys Tab Tab Tab Tab
expect_screen 'ADDRESS +SIZE' "Tab four times: Leaks"
tui_keys o
expect_screen 'Target +PID' "o: Overview"

tui_keys q
expect_screen 'k: kill the program, d: detach and let it run, Esc: cancel' "q asks what to do with the program"
tui_keys k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k kills the program: gputop exits with 128+SIGKILL"

# --- The README's command that shows the TUI without a GPU, as written there (gputop and the
# demo's output file are this test's) ---
readme=$(grep -m1 -E '^    LD_LIBRARY_PATH=tests/bin/sim \./gputop .*-- tests/bin/demo' "$ROOT/README.md")
if [ -z "$readme" ] || [ ! -x "$BIN/demo" ]; then
	not_ok "README: a command that shows the TUI without a GPU, and tests/bin/demo built"
else
	cmd=${readme#    }
	cmd=${cmd/.\/gputop/$GPUTOP}
	cmd=${cmd//\/tmp\/demo.out/$TMP/demo.out}
	tui_start 120 30 env LANG=C.UTF-8 bash -c "$cmd"
	expect_screen 'Overview +Leaks +Memory +Kernels' "README's command: the TUI"
	tui_keys k
	expect_screen 'ml::linear_forward' "README's command: the demo's kernels in the Kernels view"
	tui_keys q k
	tui_wait_status
	expect_eq "$TUI_STATUS" 137 "README's command: q k ends the demo"
fi
finish
