#!/usr/bin/env bash
# TUI acceptance 3: resizing. gputop (launching tui_loop, SIMULATED runtime) in tmux, resized to
# 80x24, 200x60, 40x10 and back: each time one header, one tab bar, one function bar, nothing
# wider than the terminal and no leftover of the size before; 40x10 shows only the short
# "terminal too small" message; gputop never crashes and q k still works at the end.
# Also: what a launched program writes to the terminal (no -o) is painted over at the next
# refresh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop sim/libcudart.so.13
need_gputop

# layout_faults W H VIEW-REGEX: what is wrong with the screen now as one clean layout of W x H,
# in BAD ("" when nothing).
layout_faults() {
	local w=$1 h=$2 view=$3 lines width
	BAD=""
	tui_capture
	lines=$(printf '%s\n' "$SCREEN" | wc -l)
	width=$(printf '%s\n' "$SCREEN" | LC_ALL=C.UTF-8 wc -L)	# columns, not bytes
	[ "$lines" -le "$h" ] || BAD="$BAD; $lines lines"
	[ "$width" -le "$w" ] || BAD="$BAD; a line of $width columns"
	[ "$(grep -c '^gputop ' <<<"$SCREEN")" -eq 1 ] || BAD="$BAD; not one header"
	[ "$(grep -cE '^ +Overview +Leaks +Memory +Kernels' <<<"$SCREEN")" -eq 1 ] || BAD="$BAD; not one tab bar"
	[ "$(grep -c '^q Quit' <<<"$SCREEN")" -eq 1 ] || BAD="$BAD; not one function bar"
	sed -n '1p' <<<"$SCREEN" | grep -q '^gputop ' || BAD="$BAD; the header is not on line 1"
	sed -n "${h}p" <<<"$SCREEN" | grep -q '^q Quit' || BAD="$BAD; the bar is not on line $h"
	grep -q 'too small' <<<"$SCREEN" && BAD="$BAD; the too-small message"
	grep -Eq -- "$view" <<<"$SCREEN" || BAD="$BAD; no /$view/"
}

# check_layout W H VIEW-REGEX WHAT: the screen comes to be one clean layout of W x H. Polled
# until it is (TUI_WAIT seconds at most), not looked at once after a fixed pause: right after
# the resize tmux shows the old screen cut to the new size until gputop has redrawn, and on a
# loaded machine that redraw can come late. A layout that never comes out clean still fails.
check_layout() {
	local w=$1 h=$2 view=$3 what=$4 bad="" deadline
	tui_tmux resize-window -x "$w" -y "$h"
	if ! tui_wait "^ +Overview +Leaks" || ! tui_wait "$view"; then
		not_ok "$what: the layout shows at ${w}x$h"
		tui_show_screen
		return
	fi
	deadline=$(($(date +%s) + TUI_WAIT))
	while :; do
		layout_faults "$w" "$h" "$view"
		bad=$BAD
		[ -z "$bad" ] && break
		[ "$(date +%s)" -ge "$deadline" ] && break
		sleep 0.1
	done
	if [ -z "$bad" ]; then
		ok "$what: clean layout at ${w}x$h"
	else
		not_ok "$what: clean layout at ${w}x$h${bad}"
		tui_show_screen
	fi
	kill -0 "$GPUTOP_PID" 2>/dev/null && ok "$what: gputop still runs" || not_ok "$what: gputop still runs"
}

tui_gputop 100 30 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --info "$TMP/info"
tui_read_info "$TMP/info" || bail "tui_loop set up under gputop"
GPUTOP_PID=$(awk '{ print $4 }' "/proc/$TARGET_PID/stat")
note "gputop is pid $GPUTOP_PID"
tui_keys k
expect_screen 'tui_demo::zeta_step' "the Kernels view"

check_layout 80 24 'tui_demo::zeta_step\(float\*, int\)' "80x24 kernels"
check_layout 200 60 'tui_demo::zeta_step\(float\*, int\)' "200x60 kernels"
tui_keys l
check_layout 80 24 'ADDRESS +SIZE' "200x60 -> 80x24 leaks"

tui_tmux resize-window -x 40 -y 10
if tui_wait 'terminal too small' && tui_wait_gone 'Overview|ADDRESS|q Quit'; then
	ok "40x10: only the too-small message"
else
	not_ok "40x10: only the too-small message"
	tui_show_screen
fi
tui_capture
expect_eq "$(grep -c . <<<"$SCREEN")" 1 "40x10: one line on the screen"
msg=$(grep . <<<"$SCREEN")
[ "$(printf '%s' "$msg" | LC_ALL=C.UTF-8 wc -L)" -le 40 ] && ok "40x10: the message fits in 40 columns" || not_ok "40x10: the message fits ($msg)"
kill -0 "$GPUTOP_PID" 2>/dev/null && ok "40x10: gputop still runs" || not_ok "40x10: gputop still runs"

check_layout 200 60 'ADDRESS +SIZE' "40x10 -> 200x60 leaks"
tui_keys o
check_layout 80 24 'GPU memory' "80x24 overview"
check_layout 60 14 'Target' "60x14 (the smallest layout) overview"

tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k still works after the resizes"

# --- the program's own output over the TUI ---
tui_gputop 80 24 -- -d 2 -- bash -c 'for i in 1 2 3 4 5 6 7 8; do echo SCRIB""BLE-$i; sleep 0.2; done; sleep 60'
if tui_wait 'SCRIBBLE-[0-9]' 10; then
	note "the program's lines on the screen:"
	tui_show_screen
else
	note "the program's lines were never caught on the screen"
fi
expect_screen_gone 'SCRIBBLE-[0-9]' "scribble: the program's lines are painted over"
expect_screen '^q Quit' "scribble: the layout is whole again"
tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "scribble: q k ends it"
finish
