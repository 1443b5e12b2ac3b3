#!/usr/bin/env bash
# The command line's words (issue 36, part 6; SIMULATED runtime):
#  1. "no CUDA library in PID yet: waiting for one to load" only when it is news: not at the
#     launch of a program that loads CUDA in its first moments (basic); once, 2 s or more
#     after the start, for one that has loaded none by then (dlopen_late, until told to);
#  2. -p $(pgrep ...) with two matches (-p 123 456): "-p takes one list": exit 2, the list to
#     give, how pgrep writes one;
#  3. -o /dev/null is taken, as a shell's redirection takes it: the program's output goes there,
#     its exit status is gputop's, /dev/null stays what it is;
#  4. -q: errors and warnings only — nothing on stderr for a run that went well (no summary),
#     and still the error of one that did not (exit 7, no CUDA before --timeout).
source "$(dirname "$0")/../lib.sh"
need_bin basic dlopen_late no_cuda sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM

# --- 1. no CUDA yet: said when it is news ---------------------------------------------------
"$GPUTOP" -- "$BIN/basic" 1 >"$TMP/basic.out" 2>"$TMP/basic.err" </dev/null
expect_eq "$?" 0 "basic under gputop: exit status 0"
expect_match "$(cat "$TMP/basic.err")" 'probing [0-9]+ CUDA functions' "basic: gputop probed CUDA"
grep -q 'no CUDA library' "$TMP/basic.err" && not_ok "basic loads CUDA at once: no 'no CUDA library' line" ||
	ok "basic loads CUDA at once: no 'no CUDA library' line"

start=$(date +%s%N)
spawn "$TMP/late" "$GPUTOP" -- "$BIN/dlopen_late" --go "$TMP/go"
GPUTOP_PID=$SPAWNED_PID
if wait_for_line "$TMP/late.err" 'no CUDA library in [0-9]+ yet: waiting for one to load' 30; then
	said=$(date +%s%N)
	ok "dlopen_late, no CUDA yet: gputop says it waits"
	# A bound only a late word could break, never the machine's load: it comes 2 s at the
	# earliest after gputop started.
	[ $((said - start)) -ge 2000000000 ] && ok "... 2 s or more after the start ($(((said - start) / 1000000)) ms)" ||
		not_ok "... 2 s or more after the start (after $(((said - start) / 1000000)) ms)"
else
	not_ok "dlopen_late, no CUDA yet: gputop says it waits"
fi
touch "$TMP/go"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "dlopen_late under gputop: exit status 0"
expect_eq "$(grep -c 'no CUDA library' "$TMP/late.err")" 1 "dlopen_late: said once, in one wording"
expect_match "$(cat "$TMP/late.out")" 'dlopen_late: ok mallocs=3 frees=1 launches=4' "dlopen_late: its work done"

# --- 2. -p with two PIDs as two words ---------------------------------------------------------
expect_refused "-p 123 456" 2 '-p takes one list of PIDs, comma-separated: -p 123,456' -p 123 456
expect_match "$(cat "$TMP/err.err")" 'hint: pgrep -d, writes one: gputop -p \$\(pgrep -d, -f NAME\)' \
	"-p 123 456: how pgrep writes one list"
"$GPUTOP" -p 11,12 13 14 >/dev/null 2>"$TMP/p3.err" </dev/null
expect_eq "$?" 2 "-p 11,12 13 14: exit status 2"
expect_match "$(cat "$TMP/p3.err")" '-p 11,12,13,14$' "-p 11,12 13 14: the one list meant"
expect_refused "-p 123 with a program" 2 'give either -p PID or a program to run, not both' -p 123

# --- 3. -o /dev/null ----------------------------------------------------------------------------
"$GPUTOP" -q -o /dev/null -- sh -c 'echo to-stdout; echo to-stderr >&2; exit 3' >"$TMP/null.out" 2>"$TMP/null.err" </dev/null
expect_eq "$?" 3 "-o /dev/null: taken; gputop exits with the program's status 3"
expect_eq "$(cat "$TMP/null.out" "$TMP/null.err")" "" "-o /dev/null: the program's output went there, not to the terminal"
[ -c /dev/null ] && ok "-o /dev/null: /dev/null is still a character device" || not_ok "-o /dev/null: /dev/null is still a character device"
"$GPUTOP" -q -o /proc/version -- true >/dev/null 2>"$TMP/proc.err" </dev/null
expect_eq "$?" 6 "-o /proc/version: still refused (exit 6)"

# --- 4. -q: errors and warnings only --------------------------------------------------------------
"$GPUTOP" -q -- "$BIN/basic" 1 >"$TMP/q.out" 2>"$TMP/q.err" </dev/null
expect_eq "$?" 0 "-q, basic: exit status 0"
expect_eq "$(grep -v '^basic:' "$TMP/q.err")" "" "-q, basic: nothing of gputop's on stderr (no summary)"
"$GPUTOP" -- "$BIN/basic" 1 >/dev/null 2>"$TMP/noq.err" </dev/null
expect_match "$(cat "$TMP/noq.err")" 'gputop: summary' "without -q and without a terminal: the summary on stderr"
"$GPUTOP" -q --timeout 1 -- "$BIN/no_cuda" --seconds 30 >/dev/null 2>"$TMP/q7.err" </dev/null
expect_eq "$?" 7 "-q, no CUDA before --timeout: exit status 7"
expect_match "$(cat "$TMP/q7.err")" 'gputop: [0-9]+ never loaded a CUDA library' "-q: the error is said"
finish
