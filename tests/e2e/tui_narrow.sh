#!/usr/bin/env bash
# TUI at 80x24 (issue 26): where the width is short, each view leaves out its least important
# columns, and first those with nothing in them (SIMULATED runtime, gputop in tmux).
#  - API of tui_loop (no error): LAST ERROR, all dashes, goes; TIME and AVG stay;
#  - API of stacks (cudaMalloc failed once): LAST ERROR goes all the same, TIME and AVG stay;
#  - Leaks: AGE stays (THREAD goes);
#  - Kernels of demo: the names (up to 46 characters) show whole, GRID x BLOCK goes;
#  - at 120 columns every column is there;
#  - the help at 80x24 shows every key of ui/keys.c at once, no line cut ("…"); at 60x14 it
#    scrolls (Down, PgDn) and every key shows on one page or another, no line cut.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin tui_loop demo stacks sim/libcudart.so.13
need_gputop

# expect_title REGEX WHAT: the table's title line comes to match REGEX.
expect_title() {
	expect_screen "$1" "$2"
}

# The names of every key of the table, as the help writes them ("q/F10", "Up Down PgUp ...").
mapfile -t KEY_NAMES < <(sed -nE 's/^\s*\{ \{[^}]*\}, "([^"]+)".*/\1/p' "$ROOT/ui/keys.c")
[ "${#KEY_NAMES[@]}" -ge 15 ] || bail "the key names read from ui/keys.c (${#KEY_NAMES[@]})"

# help_box: the help overlay on the screen now, its borders and what is between them (not
# what shows of the view beside it), in BOX.
help_box() {
	tui_capture
	BOX=$(sed -n '/┌─ gputop keys/,/└/p' <<<"$SCREEN" | grep -oE '[│┌└].*[│┐┘]')
}

# --- tui_loop at 80x24: API and Leaks ---
tui_gputop 80 24 -- -d 0.5 -- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop" --info "$TMP/info"
tui_read_info "$TMP/info" || bail "tui_loop set up under gputop (its --info file)"
tui_keys a
expect_screen 'cudaLaunchKernel +[0-9]' "80x24: the API view" || bail "the API view shows"
expect_title 'FUNCTION +CALLS▼ .* TIME +AVG$' "80x24 API: TIME and AVG stay, the last columns"
expect_screen_gone 'LAST ERROR' "80x24 API: LAST ERROR, with no error, goes"
expect_screen 'cudaMalloc +1 .* [0-9.]+ [nµm]?s +[0-9.]+ [nµm]?s$' "80x24 API: cudaMalloc's time and average"
tui_keys l
expect_title 'ADDRESS +SIZE▼ .* AGE$' "80x24 Leaks: AGE stays"
expect_screen "$LIVE_ADDR +48\\.0 MiB .* [0-9.]+s$" "80x24 Leaks: the live allocation's age"
expect_screen_gone 'THREAD' "80x24 Leaks: THREAD goes instead"

# --- the help at 80x24: all of it, nothing cut ---
tui_keys '?'
expect_screen 'gputop keys' "80x24: the help" || bail "the help shows"
help_box
expect_eq "$(grep -c '│' <<<"$BOX")" "$(($(wc -l <<<"$BOX") - 2))" "80x24 help: the whole box, both borders"
if grep -q '…' <<<"$BOX"; then
	not_ok "80x24 help: no line cut"
	printf '%s\n' "$BOX" | sed 's/^/#   | /'
else
	ok "80x24 help: no line cut"
fi
grep -q 'scroll ─' <<<"$BOX" && not_ok "80x24 help: no need to scroll" || ok "80x24 help: no need to scroll"
missing=
for names in "${KEY_NAMES[@]}"; do
	grep -qF -- "│ $names " <<<"$BOX" || missing="$missing [$names]"
done
expect_eq "${missing:-none}" none "80x24 help: every key of ui/keys.c on the screen at once"
tui_keys Escape
expect_screen_gone 'gputop keys' "the help closes"

tui_tmux resize-window -x 120 -y 30
expect_title 'ADDRESS +SIZE▼ +KIND +API +DEV +THREAD +AGE' "120x30 Leaks: every column"
tui_keys a
expect_title 'FUNCTION +CALLS▼ +PER SEC +ERRORS +LAST ERROR +TIME +AVG' "120x30 API: every column"

# --- the help at 60x14, the smallest size: it scrolls ---
tui_tmux resize-window -x 60 -y 14
tui_keys '?'
expect_screen 'gputop keys' "60x14: the help"
expect_screen ' 1-[0-9]+/[0-9]+, Up Down PgUp PgDn scroll ' "60x14 help: the lines shown, and how to see the rest"
seen= cut=
for _ in $(seq 8); do	# 8 pages of 10 lines are more than the help has
	help_box
	seen="$seen$BOX"$'\n'
	grep -q '…' <<<"$BOX" && cut="$cut$BOX"
	grep -qE ' ([0-9]+)-([0-9]+)/\2, ' <<<"$BOX" && break
	tui_keys NPage
	sleep 0.3
done
expect_screen ' [0-9]+-([0-9]+)/\1, Up Down PgUp PgDn scroll ' "60x14 help: PgDn reaches the last line"
[ -z "$cut" ] && ok "60x14 help: no line cut" || { not_ok "60x14 help: no line cut"; printf '%s\n' "$cut" | sed 's/^/#   | /'; }
missing=
for names in "${KEY_NAMES[@]}"; do
	grep -qF -- "│ $names " <<<"$seen" || missing="$missing [$names]"
done
expect_eq "${missing:-none}" none "60x14 help: every key of ui/keys.c on one page or another"
tui_keys Up
expect_screen_gone ' [0-9]+-([0-9]+)/\1, Up' "Up scrolls the help back"
expect_screen 'gputop keys' "... and keeps it open"
tui_keys x
expect_screen_gone 'gputop keys' "any other key closes it"

touch "$TMP/stop"
expect_screen 'program exited with status 0' "tui_loop ends"
tui_keys q
tui_wait_status

# --- stacks at 80x24: an error, LAST ERROR still the first to go ---
tui_gputop 80 24 -- -- "$BIN/stacks"
expect_screen 'program exited with status 0' "stacks ran to its end" || bail "stacks ran under gputop"
tui_keys a
expect_screen 'cudaMalloc +3 +[^ ]+ +1 ' "80x24 API: cudaMalloc, 1 error"
expect_title 'FUNCTION +CALLS▼ .* ERRORS +TIME +AVG$' "80x24 API with an error: ERRORS, TIME and AVG stay"
expect_screen_gone 'LAST ERROR|cudaErrorMemoryAllocation' "80x24 API: LAST ERROR goes first"
tui_tmux resize-window -x 120 -y 30
expect_screen 'cudaMalloc .* cudaErrorMemoryAllocation ' "120x30: the last error's name is back"
tui_keys q
tui_wait_status

# --- demo at 80x24: kernel names whole ---
tui_gputop 80 24 -- -d 0.5 -- "$BIN/demo" 120
tui_keys k
expect_screen 'ml::linear_backward\(float\*, float const\*, int\) +[0-9]' \
	"80x24 Kernels: a name of 46 characters shows whole" || bail "demo's Kernels view"
for name in 'ml::linear_forward(float*, float const*, int)' 'ml::adam_step(float*, float*, float, int)' \
	'ml::relu(float*, int)' 'ml::softmax_xent(float*, int)'; do
	expect_screen "$(sed 's/[][()*.]/\\&/g' <<<"$name") +[0-9]" "80x24 Kernels: $name whole"
done
if grep -q '…' <<<"$(sed -n '/KERNEL/,$p' <<<"$SCREEN" | head -8)"; then
	not_ok "80x24 Kernels: no name cut"
	tui_show_screen
else
	ok "80x24 Kernels: no name cut"
fi
expect_title 'KERNEL +LAUNCHES▼ +PER SEC +SHARE$' "80x24 Kernels: GRID x BLOCK goes for the names"
tui_tmux resize-window -x 120 -y 30
expect_title 'KERNEL +LAUNCHES▼ +PER SEC +GRID x BLOCK +SHARE' "120x30 Kernels: GRID x BLOCK is back"
tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k: demo is killed"
finish
