# tests/e2e/tui_lib.bash — helpers for the TUI tests (tests/e2e/tui_*.sh): run gputop in a
# private tmux server, send keys, and poll the screen until what is expected shows up (never a
# fixed sleep: the tests must pass on a loaded 2-core machine). Source it after lib.sh; it is not
# a test itself (tests/run only runs *.sh).
command -v tmux >/dev/null || skip "tmux is not installed"

# One tmux server per tui_start (a server being killed may still accept a new session).
TUI_SOCK=gputop-test-$$-0
TUI_SOCKS=()
TUI_WAIT=${TUI_WAIT:-30}	# seconds to wait for something to appear on the screen
SCREEN=

tui_tmux() {
	tmux -L "$TUI_SOCK" "$@"
}

# lib.sh's cleanup keeps the script's exit status in $?: kill our tmux servers first.
tui_cleanup() {
	local status=$? sock
	for sock in "${TUI_SOCKS[@]}"; do
		tmux -L "$sock" kill-server 2>/dev/null
	done
	(exit "$status")
	cleanup
}
trap tui_cleanup EXIT

# tui_start W H COMMAND...: runs COMMAND (in $ROOT) in a new tmux session of W x H columns;
# when it ends its exit status goes to $TMP/tui.status and the pane stays open.
tui_start() {
	local w=$1 h=$2
	shift 2
	tui_tmux kill-server 2>/dev/null
	TUI_SOCK=gputop-test-$$-$((${#TUI_SOCKS[@]} + 1))
	TUI_SOCKS+=("$TUI_SOCK")
	rm -f "$TMP/tui.status"
	{
		printf 'cd %q || exit 1\n' "$ROOT"
		printf '%q ' "$@"
		printf '\necho $? >%q.tmp && mv %q.tmp %q\nexec sleep 3600\n' \
			"$TMP/tui.status" "$TMP/tui.status" "$TMP/tui.status"
	} >"$TMP/tui.run"
	note "tmux ${w}x$h: $*"
	tui_tmux -f /dev/null new-session -d -x "$w" -y "$h" "bash $TMP/tui.run"
}

# tui_gputop W H [ENV=VALUE...] -- GPUTOP_ARGS...: gputop in tmux, in a UTF-8 locale on the
# simulated runtime unless the ENV assignments say otherwise.
tui_gputop() {
	local w=$1 h=$2
	local -a envs=(LANG=C.UTF-8 LC_ALL= LC_CTYPE= LD_LIBRARY_PATH="$SIM")
	shift 2
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	tui_start "$w" "$h" env "${envs[@]}" "$GPUTOP" "$@"
}

# TUI_HISTORY=1: the scrollback too (for plain output that scrolls, not for the TUI's screen),
# with lines the terminal wrapped joined again (-J): where a line of plain output starts, and so
# where it wraps, depends on what other threads printed before it, and when.
tui_capture() {
	if [ -n "${TUI_HISTORY:-}" ]; then
		set -- -S - -J "$@"
	fi
	SCREEN=$(tui_tmux capture-pane -p "$@" 2>/dev/null)
}

tui_keys() {
	tui_tmux send-keys "$@"
}

# tui_wait REGEX [SECONDS]: 0 once the screen matches (SCREEN holds it), 1 on timeout.
tui_wait() {
	local regex=$1 deadline
	deadline=$(($(date +%s%N) + ${2:-$TUI_WAIT} * 1000000000))
	while :; do
		tui_capture
		grep -Eq -- "$regex" <<<"$SCREEN" && return 0
		[ "$(date +%s%N)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# tui_wait_gone REGEX [SECONDS]: 0 once the screen no longer matches.
tui_wait_gone() {
	local regex=$1 deadline
	deadline=$(($(date +%s%N) + ${2:-$TUI_WAIT} * 1000000000))
	while :; do
		tui_capture
		grep -Eq -- "$regex" <<<"$SCREEN" || return 0
		[ "$(date +%s%N)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

tui_show_screen() {
	printf '%s\n' "$SCREEN" | sed 's/^/#   | /'
}

# expect_screen REGEX WHAT [SECONDS]: the screen comes to match REGEX.
expect_screen() {
	if tui_wait "$1" "${3:-$TUI_WAIT}"; then
		ok "$2"
		return 0
	fi
	not_ok "$2"
	echo "#   expected on the screen: $1"
	tui_show_screen
	return 1
}

# expect_screen_gone REGEX WHAT [SECONDS]: the screen comes to not match REGEX.
expect_screen_gone() {
	if tui_wait_gone "$1" "${3:-$TUI_WAIT}"; then
		ok "$2"
		return 0
	fi
	not_ok "$2"
	echo "#   expected to disappear from the screen: $1"
	tui_show_screen
	return 1
}

# tui_wait_status [SECONDS]: waits for the command in tmux to end; its status in TUI_STATUS
# (124 on timeout).
tui_wait_status() {
	local deadline
	deadline=$(($(date +%s%N) + ${1:-$TUI_WAIT} * 1000000000))
	while [ ! -f "$TMP/tui.status" ]; do
		if [ "$(date +%s%N)" -ge "$deadline" ]; then
			TUI_STATUS=124
			return 1
		fi
		sleep 0.1
	done
	TUI_STATUS=$(cat "$TMP/tui.status")
}

# The line of the screen that contains TEXT (fixed string), or nothing.
tui_line() {
	grep -F -m1 -- "$1" <<<"$SCREEN"
}

# A count as the TUI writes it ("197", "1.02k", "~3.40M") as a plain number.
tui_number() {
	awk -v v="${1#\~}" 'BEGIN {
		m = 1
		if (v ~ /k$/) m = 1e3; else if (v ~ /M$/) m = 1e6; else if (v ~ /G$/) m = 1e9
		sub(/[kMG]$/, "", v)
		printf "%d\n", v * m
	}'
}

# The launches of kernel NAME (fixed string) in the Kernels view on the screen now.
tui_kernel_launches() {
	local line
	line=$(tui_line "$1")
	[ -n "$line" ] || return 1
	line=${line#*"$1"}
	tui_number "$(awk '{ print $1 }' <<<"$line")"
}

# tui_read_info FILE: waits until tui_loop has set up (its --info FILE), which gives TARGET_PID
# and LIVE_ADDR; on a timeout shows the screen.
tui_read_info() {
	local info=$1
	if ! wait_for_line "$info" '^ready$' "$TUI_WAIT"; then
		note "no 'ready' in $info after ${TUI_WAIT}s; the screen:"
		tui_capture
		tui_show_screen
		return 1
	fi
	TARGET_PID=$(awk '$1 == "pid" { print $2 }' "$info")
	LIVE_ADDR=$(awk '$1 == "live" { print $2 }' "$info")
}

# tui_cursor_row: the text of the table's selected row, the one line drawn in reverse video
# (SGR 7), in CURSOR_ROW ("" when none). Colors must be on: without them the column titles are
# in reverse video too.
tui_cursor_row() {
	local screen
	screen=$(tui_tmux capture-pane -p -e 2>/dev/null)
	CURSOR_ROW=$(grep -E $'\e\\[([0-9]*;)*7(;[0-9]*)*m' <<<"$screen" | head -n 1 |
		sed -E $'s/\e\\[[0-9;]*m//g')
}

# expect_cursor REGEX WHAT [SECONDS]: the selected row comes to match REGEX.
expect_cursor() {
	local deadline
	deadline=$(($(date +%s%N) + ${3:-$TUI_WAIT} * 1000000000))
	while :; do
		tui_cursor_row
		grep -Eq -- "$1" <<<"$CURSOR_ROW" && break
		if [ "$(date +%s%N)" -ge "$deadline" ]; then
			not_ok "$2"
			echo "#   expected on the selected row: $1"
			echo "#   the selected row: ${CURSOR_ROW:-(none)}"
			tui_capture
			tui_show_screen
			return 1
		fi
		sleep 0.1
	done
	ok "$2"
}
