#!/usr/bin/env bash
# TUI colors and character sets (SIMULATED runtime, gputop launching tui_loop in tmux):
#  - by default (TERM=screen has colors) the screen has colors;
#  - --no-color and NO_COLOR=1: no color at all, only plain attributes (bold, reverse), the
#    selected row of the table in reverse video;
#  - TERM=dumb cannot move the cursor: gputop says so and prints plain batch tables instead
#    (no escape sequence at all), then ends with the program;
#  - in a non-UTF-8 locale (LANG=C) everything stays ASCII: sparklines of " .:-=+*#", "x" for
#    the grid x block sign, no Unicode block, dash or arrow.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop sim/libcudart.so.13
need_gputop

# The SGR parameters of the screen that set a color (30-38, 40-48, 90-97, 100-107; 39 and 49
# only reset to the default), one per line.
color_params() {
	tui_capture -e
	grep -oE $'\e\\[[0-9;]*m' <<<"$SCREEN" | tr -d $'\e[m' | tr ';' '\n' |
		grep -E '^(3[0-8]|4[0-8]|9[0-7]|10[0-7])$' | sort -u | tr '\n' ' '
}

# run_case NAME [ENV... --] ARGS: starts gputop, waits for the Kernels view; 1 if it did not show.
run_case() {
	local name=$1
	shift
	[[ " $* " == *" -- "* ]] || set -- -- "$@"
	tui_gputop 100 30 "$@" -- "$BIN/tui_loop" --seconds 120 --info "$TMP/$name.info"
	tui_keys k
	if ! expect_screen 'tui_demo::zeta_step' "$name: the Kernels view shows"; then
		return 1
	fi
	tui_keys '?'
	tui_wait 'gputop keys' >/dev/null	# the help box too: its frame must be plain as well
}

end_case() {
	tui_keys Escape q k
	tui_wait_status
	expect_eq "$TUI_STATUS" 137 "$1: q k ends it"
}

if run_case colors -d 0.5; then
	params=$(color_params)
	[ -n "$params" ] && ok "colors: the screen has colors (SGR $params)" ||
		not_ok "colors: the screen has colors"
fi
end_case colors

for c in "no-color|--no-color" "NO_COLOR|NO_COLOR=1 --"; do
	IFS='|' read -r name args <<<"$c"
	# shellcheck disable=SC2086 # two words on purpose
	if run_case "$name" $args -d 0.5; then
		params=$(color_params)
		[ -z "$params" ] && ok "$name: no color on the screen" || not_ok "$name: no color (SGR $params)"
		tui_capture -e
		grep -qE $'\e\\[[0-9;]*[17]m' <<<"$SCREEN" && ok "$name: plain attributes (bold/reverse) remain" ||
			not_ok "$name: plain attributes remain"
		tui_keys Escape
		tui_wait_gone 'gputop keys' >/dev/null
		tui_capture -e
		# the cursor: the kernel row in reverse video (the titles are too, without colors)
		grep -E $'\e\\[([0-9]*;)*7(;[0-9]*)*m' <<<"$SCREEN" | grep -q 'tui_demo::' &&
			ok "$name: the selected row shows in reverse video" ||
			{ not_ok "$name: the selected row shows in reverse video"; tui_show_screen; }
	fi
	end_case "$name"
done

# --- TERM=dumb: plain tables ---
tui_gputop 100 60 TERM=dumb -- -d 5 -- "$BIN/tui_loop" --seconds 2
# Plain output scrolls: the warning may have left the screen by the time the summary is out.
TUI_HISTORY=1 expect_screen 'cannot show the TUI: plain tables instead' "TERM=dumb: says it prints plain tables"
TUI_HISTORY=1 expect_screen 'KERNEL +LAUNCHES' "TERM=dumb: batch tables (the summary)"
tui_wait_status
expect_eq "$TUI_STATUS" 0 "TERM=dumb: ends with the program, its status 0"
tui_capture -e
if grep -q $'\e' <<<"$SCREEN"; then
	not_ok "TERM=dumb: no escape sequence on the screen"
	tui_show_screen
else
	ok "TERM=dumb: no escape sequence on the screen"
fi

# --- ASCII in a non-UTF-8 locale ---
if run_case ascii LANG=C -- -d 0.5; then
	tui_keys Escape
	expect_screen 'zeta_step.* 16 x 128 ' "ascii: grid x block with an x"
	expect_screen 'LAUNCHESv' "ascii: the sort mark is a v"
	tui_keys o
	expect_screen 'Launches/s .*launches +[ .:=+*#-]*[.:=+*#-]' "ascii: an ASCII sparkline"
	tui_capture
	if LC_ALL=C grep -q $'[\x80-\xff]' <<<"$SCREEN"; then
		not_ok "ascii: nothing but ASCII on the screen"
		tui_show_screen
	else
		ok "ascii: nothing but ASCII on the screen"
	fi
fi
end_case ascii
finish
