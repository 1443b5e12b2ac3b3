#!/usr/bin/env bash
# TUI acceptance 2: each documented key does what it says (the SIMULATED runtime; gputop
# launches tui_loop, whose kernel zeta_step is launched 10 times as often as alpha_init).
#  gputop's own messages go from the status line after a few seconds;
#  s sorts by the next column, r reverses, F6 and > as s, < the column before; the answer on
#  the status line goes after a few seconds; / filters by name (Enter applies, Esc clears);
#  p pauses the display (counts stay) and resumes it; ? and h show the help, which lists every
#  key of the function bar, and any key closes it; z resets the counters and the header says
#  since when; q and F10 ask in launch mode, Esc cancels, q d detaches: the program runs on and
#  finishes normally. Then Up, Down, PgUp, PgDn, Home and End move the cursor through a long
#  table, which scrolls to show it (demo's API view in 60x14, paused), and q k kills demo.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop demo sim/libcudart.so.13
need_gputop

ZETA='tui_demo::zeta_step(float*, int)'
ALPHA='tui_demo::alpha_init(int*)'

# The kernel rows in the order they are on the screen: "zeta alpha" or "alpha zeta".
kernel_order() {
	grep -oE 'tui_demo::(zeta|alpha)' <<<"$SCREEN" | sed 's/tui_demo:://' | tr '\n' ' ' | sed 's/ $//'
}

# expect_order "zeta alpha" WHAT: the screen comes to show the kernels in that order.
expect_order() {
	local deadline=$(($(date +%s) + TUI_WAIT))
	while :; do
		tui_capture
		[ "$(kernel_order)" == "$1" ] && break
		[ "$(date +%s)" -ge "$deadline" ] && break
		sleep 0.1
	done
	expect_eq "$(kernel_order)" "$1" "$2"
}

tui_gputop 120 30 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop" --info "$TMP/info"
tui_read_info "$TMP/info" || bail "tui_loop set up under gputop (its --info file)"
tui_keys k
expect_screen 'tui_demo::alpha_init' "kernels view with both kernels" || bail "the Kernels view shows"
# gputop's own messages (a library probed, no NVML) go from the status line after a few
# seconds (5); 12 s from when one is seen leaves room for a slow machine.
MSG='probing [0-9]+ CUDA functions|no GPU meters'
if tui_wait "$MSG" 5; then
	expect_screen_gone "$MSG" "gputop's message goes from the status line after a few seconds" 12
else
	note "no message of gputop's seen on the status line at the start (a slow start): not checked"
fi

# --- sort and reverse ---
expect_screen 'LAUNCHES▼' "kernels sorted by launches at first (the mark on LAUNCHES)"
expect_order "zeta alpha" "by launches: zeta_step (more launches) first"
tui_keys s
expect_screen 'PER SEC▼' "s: sorted by PER SEC"
tui_keys s s
expect_screen 'KERNEL▲' "s s: sorted by name, A to Z"
expect_order "alpha zeta" "by name: alpha_init first"
tui_keys r
expect_screen 'KERNEL▼' "r: the mark turns"
expect_order "zeta alpha" "r: reversed, zeta_step first"
tui_keys r s
expect_screen 'LAUNCHES▼' "s cycles back to LAUNCHES"
tui_keys r
expect_order "alpha zeta" "r on launches: fewest first"
tui_keys r
expect_screen 'LAUNCHES▼' "r again: most first"
tui_keys F6
expect_screen 'PER SEC▼' "F6: sorted by the next column, as s"
tui_keys '<'
expect_screen 'LAUNCHES▼' "<: sorted by the column before"
tui_keys '<'
expect_screen 'KERNEL▲' "< again: the column before, round to the name"
tui_keys '>'
expect_screen 'LAUNCHES▼' ">: the next column"
# The answer to a key goes from the status line after a few seconds (3): the screen is looked
# at every 0.1 s, so 10 s leaves room for a slow machine and still fails a message that stays.
expect_screen 'sorted by LAUNCHES' "the status line answers: sorted by LAUNCHES"
expect_screen_gone 'sorted by LAUNCHES' "the answer goes from the status line after a few seconds" 10

# --- filter ---
tui_keys /
expect_screen 'Filter Kernels: _' "/ opens the filter prompt in the status line"
tui_keys a l p h a
expect_screen 'Filter Kernels: alpha_' "the typed text shows"
tui_keys Enter
expect_screen_gone 'zeta_step' "Enter applies the filter: zeta_step is gone"
expect_screen 'tui_demo::alpha_init' "alpha_init stays"
expect_screen 'filter:alpha' "the status line shows the filter"
tui_keys / Escape
expect_screen 'tui_demo::zeta_step' "/ then Esc clears the filter"
expect_screen_gone 'filter:alpha' "no filter in the status line"
tui_keys / Z E T A Enter
expect_screen_gone 'alpha_init' "the filter ignores case (ZETA)"
tui_keys / Escape

# --- pause ---
tui_keys p
expect_screen 'PAUSED' "p: PAUSED shows"
tui_capture
before=$(tui_kernel_launches "$ZETA")
sleep 2
tui_capture
after=$(tui_kernel_launches "$ZETA")
expect_eq "$after" "$before" "paused: the launch count stays the same for 2 s"
tui_keys p
expect_screen_gone 'PAUSED' "p again: resumed"
deadline=$(($(date +%s) + TUI_WAIT))
while [ "$(date +%s)" -lt "$deadline" ]; do
	tui_capture
	now=$(tui_kernel_launches "$ZETA")
	[ -n "$now" ] && [ -n "$before" ] && [ "$now" -gt "$before" ] && break
	sleep 0.2
done
if [ -n "$now" ] && [ -n "$before" ] && [ "$now" -gt "$before" ]; then
	ok "resumed: the count grows again, tracing went on ($before -> $now)"
else
	not_ok "resumed: the count grows again (${before:-?} -> ${now:-?})"
	tui_show_screen
fi

# --- help ---
tui_keys '?'
expect_screen 'gputop keys' "?: the help overlay"
# Every key the function bar shows (by its first name) is explained in the help, with its
# other names (they come from one table).
bar=$(tail -n 1 <<<"$SCREEN")
for key in q '?' 's' 'r' '/' 'p' 'z' 'o l m k b a c' 'P'; do
	if grep -qF -- "$key " <<<"$bar" &&
		grep -qE -- "│ $(sed 's/[?/]/[&]/g' <<<"$key")(/[^ ]+)?( [<>])? +[a-z]" <<<"$SCREEN"; then
		ok "help explains the bar's key '$key'"
	else
		not_ok "help explains the bar's key '$key'"
		tui_show_screen
	fi
done
expect_screen '│ Up Down PgUp PgDn Home End +│' "help lists the cursor keys (on a line of their own)"
expect_screen '│ +move the cursor: a row, a page' "... and what they do on the next"
expect_screen '│ Left Right +scroll long names sideways' "help lists Left and Right"
expect_screen '│ q/F10 +quit' "help: F10 quits as q does"
expect_screen '│ s/>/F6 < +sort by the next column; < by the one before' "help: > and F6 sort as s does, < by the column before"
expect_screen 'S-Tab +previous view' "help lists Shift-Tab"
tui_keys x
expect_screen_gone 'gputop keys' "any key closes the help"
tui_keys h
expect_screen 'gputop keys' "h: the help overlay too"
tui_keys Escape
expect_screen_gone 'gputop keys' "Esc closes it"

# --- reset ---
tui_capture
before=$(tui_kernel_launches "$ZETA")
expect_screen_gone 'figures since' "before z the header says no 'figures since'"
pressed=$(date +%s)
tui_keys z
expect_screen 'counters reset' "z: says the counters were reset"
expect_screen '^gputop .*, figures since [0-9]{2}:[0-9]{2}:[0-9]{2} ' "z: the header says since when"
# HH:MM:SS is the time z was pressed (local time, as date says it; a day's wrap allowed). Both
# are whole seconds, each truncated, and gputop's comes from its monotonic clock through an
# offset taken at its start: it may read a second before date's (seen: 14:42:38 for 14:42:39).
since=$(grep -oE 'figures since [0-9:]{8}' <<<"$SCREEN" | awk '{ print $3 }')
now_hms=$(date -d "@$pressed" +%T)
diff=$(( ( $(date -d "$since" +%s) - $(date -d "$now_hms" +%s) + 86400 + 2 ) % 86400 ))
if [ "$diff" -le 62 ]; then
	ok "z: the header's time ($since) is when z was pressed ($now_hms)"
else
	not_ok "z: the header's time ($since) is when z was pressed ($now_hms)"
fi
# Kernels with no launch since the reset are not listed: wait for zeta_step to come back.
deadline=$(($(date +%s) + TUI_WAIT))
while :; do
	tui_capture
	after=$(tui_kernel_launches "$ZETA")
	[ -n "$after" ] && break
	[ "$(date +%s)" -ge "$deadline" ] && break
	sleep 0.1
done
if [ -n "$before" ] && [ -n "$after" ] && [ "$after" -lt "$before" ]; then
	ok "z: the launch count starts again from zero ($before -> $after)"
else
	not_ok "z: the launch count starts again from zero (${before:-?} -> ${after:-?})"
	tui_show_screen
fi
tui_keys l
expect_screen 'Live: 2 allocations' "z: live allocations stay"

# --- quit in launch mode: ask, cancel, detach ---
tui_keys F10
expect_screen 'k: kill the program, d: detach and let it run, Esc: cancel' "F10 asks, as q does"
tui_keys Escape
expect_screen_gone 'k: kill the program' "Esc cancels"
tui_keys q
expect_screen 'k: kill the program, d: detach and let it run, Esc: cancel' "q asks: kill or detach"
tui_keys Escape
expect_screen_gone 'k: kill the program' "Esc cancels"
kill -0 "$TARGET_PID" 2>/dev/null && ok "the program still runs" || not_ok "the program still runs"
tui_keys q
expect_screen 'k: kill the program' "q asks again"
tui_keys d
tui_wait_status
expect_eq "$TUI_STATUS" 0 "q d: gputop detaches and exits 0"
kill -0 "$TARGET_PID" 2>/dev/null && ok "q d: the program runs on" || not_ok "q d: the program runs on"
touch "$TMP/stop"
expect_screen '^tui_loop: ok launches=[0-9]+' "q d: the program finishes normally after the detach"
deadline=$(($(date +%s) + TUI_WAIT))
while kill -0 "$TARGET_PID" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
kill -0 "$TARGET_PID" 2>/dev/null && not_ok "the program exits" || ok "the program exits"

# --- the cursor: demo's API view (about 10 functions) in a 60x14 terminal, paused so that the
# order of rows with equal counts stays put ---
tui_gputop 60 14 -- -d 0.5 -- "$BIN/demo" 120
tui_keys a
expect_screen 'cudaMemcpy' "demo's API view" || bail "demo runs under gputop"
# (on a busy machine demo may have called only a few functions yet: wait for the long table)
expect_screen ' 1-[0-9]+/[0-9]+' "a long table: the status line says which rows show" ||
	bail "the API view of demo does not fit in 60x14"
tui_keys p
expect_screen 'PAUSED' "paused for the cursor checks"
expect_screen ' 1-[0-9]+/[0-9]+' "paused, still the long table"
page=$(grep -oE ' 1-[0-9]+/[0-9]+' <<<"$SCREEN" | head -1)
rows=${page#*/}
last=${page#* 1-}
last=${last%/*}
note "rows 1-$last of $rows"
# The functions in the order shown, from the top of the table.
mapfile -t names < <(awk '/FUNCTION/ { on = 1; next } on && NF { print $1 } on && !NF { exit }' <<<"$SCREEN")
note "shown: ${names[*]}"
expect_cursor "^ *${names[0]} " "the cursor starts on the top row (${names[0]})"
tui_keys Down
expect_cursor "^ *${names[1]} " "Down: the cursor on the second row (${names[1]})"
expect_screen " 1-$last/$rows" "Down: the rows stay where they are"
tui_keys Up Up
expect_cursor "^ *${names[0]} " "Up (twice): back on the top row, and no further"
for _ in $(seq "$last"); do tui_keys Down; done
expect_screen " 2-$((last + 1))/$rows" "Down from the last row shown: the rows scroll one to keep it shown"
tui_capture
mapfile -t names2 < <(awk '/FUNCTION/ { on = 1; next } on && NF { print $1 } on && !NF { exit }' <<<"$SCREEN")
expect_cursor "^ *${names2[$((last - 1))]} " "... the cursor on the bottom row (${names2[$((last - 1))]})"
tui_keys End
expect_screen " $((rows - last + 1))-$rows/$rows" "End shows the last rows"
tui_capture
mapfile -t names2 < <(awk '/FUNCTION/ { on = 1; next } on && NF { print $1 } on && !NF { exit }' <<<"$SCREEN")
expect_cursor "^ *${names2[$((last - 1))]} " "End: the cursor on the last row (${names2[$((last - 1))]})"
tui_keys Home
expect_screen " 1-$last/$rows" "Home shows the first rows"
expect_cursor "^ *${names[0]} " "Home: the cursor on the first row"
tui_keys NPage
expect_screen " [2-9][0-9]*-$rows/$rows| $((last + 1))-" "PgDn scrolls a page"
tui_keys PPage
expect_screen " 1-$last/$rows" "PgUp scrolls back"
expect_cursor "^ *${names[0]} " "PgUp: the cursor on the first row again"
tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k: the program is killed"
finish
