#!/usr/bin/env bash
# The TUI's words and room (issue 36, part 6; SIMULATED runtime, gputop in tmux):
#  1. Enter on a Leaks row without --stacks says why there is no stack, and what shows one
#     ("run with --stacks allocs"), not "no row to open";
#  2. at 200 columns the Kernels and API views keep the figures beside the names (the names'
#     column as wide as the longest name, not ~115 blank columns after it);
#  3. the Overview names its two columns ("now (last 0.5 s)", "since the launch") and a
#     bandwidth is one thing in both: for one steady copy (tui_loop --copy 1: 1 MiB every
#     ~20 ms, at SIMCUDA_GBPS=4) "now" is the copies' rate, as since the launch, not the bytes
#     over the whole interval (40 times less: 1 MiB in 0.26 ms, then 20 ms of sleep);
#  4. at 80 columns the Leaks totals and the Bandwidth summary are whole, on two lines.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop demo sim/libcudart.so.13
need_gputop

# A rate as the TUI writes it ("3.98 GB/s", "554 MB/s") in bytes per second; nothing for a dash.
rate_bps() {
	awk -v v="$1" -v u="$2" 'BEGIN {
		m["B/s"] = 1; m["kB/s"] = 1e3; m["MB/s"] = 1e6; m["GB/s"] = 1e9; m["TB/s"] = 1e12
		if (u in m) printf "%.0f\n", v * m[u]
	}'
}

# --- tui_loop, one steady copy, 80 columns then 200 -----------------------------------------
tui_gputop 80 24 SIMCUDA_GBPS=4 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop" \
	--info "$TMP/info" --copy 1
tui_read_info "$TMP/info" || bail "tui_loop set up under gputop (its --info file)"

# 3. the Overview
expect_screen 'now \(last 0\.5 s\) +since the launch +last minute' \
	"Overview: the columns say what they are (the last interval, since the launch)"
# The rates on one screen (one snapshot): "now" within 4x of "since the launch". The bytes over
# the interval would be ~40 times below; the copies' rate of the last 0.5 s differs from the
# session's only as much as the machine's load changes between them (polled: one such screen).
same_rate=
deadline=$(($(date +%s) + TUI_WAIT))
while [ "$(date +%s)" -lt "$deadline" ]; do
	tui_capture
	line=$(tui_line ' H2D ')
	read -r now_v now_u total_v total_u < <(sed -E \
		's/^ *H2D +([0-9.]+) ([kMGT]?B\/s) +[0-9.]+ [KMG]?i?B at ([0-9.]+) ([kMGT]?B\/s).*/\1 \2 \3 \4/;t;s/.*/- - - -/' <<<"$line")
	now=$(rate_bps "$now_v" "$now_u") total=$(rate_bps "$total_v" "$total_u")
	if [ -n "$now" ] && [ -n "$total" ] && [ "$total" -gt 0 ] &&
		[ $((now * 4)) -ge "$total" ] && [ "$now" -le $((total * 4)) ]; then
		same_rate="$line"
		break
	fi
	sleep 0.3
done
if [ -n "$same_rate" ]; then
	ok "Overview, one steady copy: now ($now_v $now_u) is the copies' rate, as since the launch ($total_v $total_u)"
else
	not_ok "Overview, one steady copy: now is the copies' rate, as since the launch"
	tui_show_screen
fi

# 4. 80 columns: the totals whole
tui_keys l
expect_screen '^ Live: [0-9]+ allocations; 48\.0 MiB device, .*\(peak [^)]*\),$' "80x24 Leaks: the totals' first line ends at a comma"
expect_screen '^ [0-9.]+ [KMG]?i?B pinned host$' "80x24 Leaks: ... the pinned host memory on the next line, whole"
expect_screen '^ Since start: [0-9]+ allocations, [0-9]+ frees' "80x24 Leaks: the allocations and frees under them"
expect_screen 'ADDRESS +SIZE▼' "80x24 Leaks: then the table"
tui_capture
grep -q '…' <<<"$(sed -n '3,6p' <<<"$SCREEN")" && { not_ok "80x24 Leaks: no line of the totals cut"; tui_show_screen; } ||
	ok "80x24 Leaks: no line of the totals cut"

# 1. Enter without --stacks
tui_keys Enter
expect_screen 'no call stack: run with --stacks allocs to see where allocations are made' \
	"Enter on a Leaks row without --stacks: says why, and what shows the stack"
expect_screen_gone 'no row to open' "... not 'no row to open'" 1

tui_keys b
expect_screen '^ Copies: [0-9]+ call\(s\), [0-9.]+ [KMG]?i?B at [0-9.]+ [kMG]?B/s;$' \
	"80x24 Bandwidth: the copies on the first line"
expect_screen '^ synchronize: [0-9]+ call\(s\), [0-9.]+ [nµm]?s blocked$' "80x24 Bandwidth: ... synchronize whole on the next"
expect_screen 'COPY▲ +CALLS' "80x24 Bandwidth: then the table"

# 2. 200 columns: API
tui_tmux resize-window -x 200 -y 30
tui_keys a
expect_screen '^ cudaLaunchKernel +[0-9]' "200x30 API"
tui_capture
title=$(tui_line 'FUNCTION')
gap=$(awk '{ i = index($0, "CALLS"); print i - length("FUNCTION") - index($0, "FUNCTION") }' <<<"$title")
# tui_loop's longest function name is cudaLaunchKernel (16 columns); CALLS is right-aligned in
# 8 after it: its title ends 17 columns after FUNCTION's.
[ "$gap" -le 20 ] && ok "200x30 API: CALLS $gap columns after FUNCTION (the names' width, not the line's)" ||
	{ not_ok "200x30 API: CALLS close to the names (gap $gap)"; tui_show_screen; }

touch "$TMP/stop"
expect_screen 'program exited with status 0' "tui_loop ends"
tui_keys q
tui_wait_status

# --- demo: Kernels at 200 columns ---------------------------------------------------------------
tui_gputop 200 30 -- -d 0.5 -- "$BIN/demo" 120
tui_keys k
expect_screen 'ml::linear_backward\(float\*, float const\*, int\) +[0-9]' "200x30 Kernels: demo's kernels" ||
	bail "demo's Kernels view"
tui_capture
row=$(tui_line 'ml::linear_backward(float*, float const*, int)')
# The longest name (46 characters) ends 1 blank before LAUNCHES' 8 right-aligned columns: its
# figure ends at most 9 columns after the name.
blank=$(sed -E 's/.*ml::linear_backward\(float\*, float const\*, int\)( +)[0-9].*/\1/' <<<"$row")
[ "${#blank}" -le 8 ] && ok "200x30 Kernels: the longest name's launches ${#blank} blanks after it" ||
	{ not_ok "200x30 Kernels: the launches beside the longest name (${#blank} blanks)"; tui_show_screen; }
expect_screen 'KERNEL +LAUNCHES▼ +PER SEC +GRID x BLOCK +SHARE' "200x30 Kernels: every column"
tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k: demo is killed"
finish
