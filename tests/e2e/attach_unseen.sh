#!/usr/bin/env bash
# Issue 36, item 3: attached without NVML to a program that allocated before the attach, the
# memory gputop cannot see is said, not left out: "live since the attach; what was allocated
# before it is not seen (how much: not known, ...)" in -b, in the TUI's Leaks and Overview, and in
# --json (memory.process.unseen, memory.counted_since "attach"); "Since start" reads "Since the
# attach". Launched, or attached before the program loaded CUDA, nothing is missed: none of it.
# On the SIMULATED runtime; hold_memory allocates BEFORE bytes, then AFTER bytes once told.
source "$(dirname "$0")/../lib.sh"
need_bin hold_memory no_cuda sim/libcudart.so.13
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIM GPUTOP_NVML=0	# no NVML: how much was allocated before is not known
BEFORE=16777216 AFTER=1048576
UNSEEN='GPU memory: live since the attach; what was allocated before it is not seen \(how much: not known'

spawn "$TMP/held" "$BIN/hold_memory" --before $BEFORE --after $AFTER --go "$TMP/go" --stop "$TMP/stop"
prog=$SPAWNED_PID
wait_for_line "$TMP/held.out" '^ready' 30 || bail "hold_memory is ready"

# -b and --json.
"$GPUTOP" -p "$prog" -b -n 2 -d 0.3 --json "$TMP/b.json" >"$TMP/b.out" 2>"$TMP/b.err" </dev/null
expect_eq "$?" 0 "-b -n 2: gputop detaches, status 0"
expect_eq "$(grep -cE "^$UNSEEN" "$TMP/b.out")" 3 "-b: said under each table's memory line and the summary's"
expect_match "$(cat "$TMP/b.out")" '^Memory \(since the attach\): 0 B live on device' "-b: the memory line says since when"
jq_eq "$TMP/b.json" '.memory.counted_since' '"attach"' "json: counted since the attach"
jq_eq "$TMP/b.json" '.memory.process | [.unseen, .unseen_bytes, .why]' \
	'["allocated before gputop attached: not seen, and how much is not known",null,"GPUTOP_NVML=0"]' \
	"json: what is not seen is named, how much is null, and why"

# The TUI: Leaks and Overview.
if command -v tmux >/dev/null; then
	source "$(dirname "$0")/tui_lib.bash"
	tui_gputop 160 30 GPUTOP_NVML=0 -- -d 0.3 -p "$prog"
	expect_screen 'live since the attach; what was allocated before it is not seen' "TUI Overview: said under GPU memory"
	tui_keys l
	expect_screen 'Since the attach: 0 allocations, 0 frees' "TUI Leaks: 'Since the attach', not 'Since start'"
	expect_screen 'Live since the attach: 0 allocations' "TUI Leaks: the live line says since when"
	expect_screen 'live since the attach; what was allocated before it is not seen' "TUI Leaks: said under the totals"
	touch "$TMP/go"
	wait_for_line "$TMP/held.out" '^allocated$' 30 || bail "hold_memory allocated after the attach"
	expect_screen 'Since the attach: 1 allocations, 0 frees' "TUI Leaks: the allocation after the attach is seen"
	tui_keys q	# attached: q detaches
	tui_wait_status
	expect_eq "$TUI_STATUS" 0 "the TUI detaches, status 0"
else
	note "no tmux: the TUI is not tried"
	touch "$TMP/go"
fi
touch "$TMP/stop"
wait_pid "$prog" 30
expect_eq "$WAIT_STATUS" 0 "hold_memory ends normally"
expect_match "$(cat "$TMP/held.out")" '^hold_memory: ok$' "hold_memory's results are unchanged"

# Launched: seen from the start, nothing of it said.
rm -f "$TMP/go2" "$TMP/stop2"
( sleep 0.5; touch "$TMP/go2" "$TMP/stop2" ) &
run_gputop_json "$TMP/l.json" -- -b -d 0.3 -- "$BIN/hold_memory" --before $BEFORE --after $AFTER --go "$TMP/go2" --stop "$TMP/stop2" ||
	bail "a summary to check"
grep -qE "$UNSEEN|since the attach" "$GPUTOP_OUT" && not_ok "launched: nothing said of an attach" || ok "launched: nothing said of an attach"
jq_eq "$TMP/l.json" '.memory | [.counted_since, .process.unseen]' '["start",null]' "json, launched: counted since the start, nothing unseen"

# Attached before the program loaded CUDA: nothing was missed, nothing said.
spawn "$TMP/nocuda" "$BIN/no_cuda" --seconds 100 --stop "$TMP/stop-nocuda"
wait_for_line "$TMP/nocuda.out" '^ready [0-9]+$' 30 || bail "no_cuda said ready"
"$GPUTOP" -p "$SPAWNED_PID" -b -n 1 -d 0.2 --json "$TMP/n.json" >"$TMP/n.out" 2>"$TMP/n.err" </dev/null
grep -qE "$UNSEEN" "$TMP/n.out" && not_ok "attached before CUDA: nothing said unseen" || ok "attached before CUDA: nothing said unseen"
jq_eq "$TMP/n.json" '.memory.process.unseen' null "json, attached before CUDA: nothing unseen"
touch "$TMP/stop-nocuda"
finish
