#!/usr/bin/env bash
# Issue 36, item 5: a run without a driver. The demo (tests/bin/demo) linked against the toolkit's
# REAL libcudart.so.13, no simulated driver, no GPU: every call fails with
# cudaErrorInsufficientDriver (35), about a million a second. gputop counts every call and every
# error exactly, per function, as the program itself counts its failures (the stubs' tallies, not
# the records a full ring keeps: these once gave half the errors), shows no "(not recorded ...)"
# row, and says once, plainly, "every CUDA call failed: cudaErrorInsufficientDriver — is there a
# driver?": in -b's first table and its summary, on stderr, and in the TUI's status line.
source "$(dirname "$0")/../lib.sh"
need_bin demo
need_gputop
[ -e "$REAL/libcudart.so.13" ] || skip "no real libcudart.so.13 in $REAL"
export LD_LIBRARY_PATH=$REAL
run_plain "$TMP/plain" "$BIN/demo" 0.2
grep -q '^demo: cudaSetDevice failed 1 time (error 35 InsufficientDriver)' "$TMP/plain.out" ||
	skip "the real runtime works here (a GPU?): this test is for the no-driver path"
SAY='every CUDA call failed: cudaErrorInsufficientDriver — is there a driver\?'

run_gputop_json "$TMP/s.json" -- -b -d 0.5 -- "$BIN/demo" 2 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the demo's status"
# The demo's own count of each function's failures: "demo: F failed N times (error 35 ...)".
sed -nE 's/^demo: ([A-Za-z]+) failed ([0-9]+) times? \(error 35 InsufficientDriver\)$/\1 \2/p' "$GPUTOP_OUT" >"$TMP/failed"
[ "$(wc -l <"$TMP/failed")" -ge 10 ] && ok "the demo counted its failures ($(wc -l <"$TMP/failed") functions)" ||
	bail "the demo counted its failures"
total=0
while read -r f n; do
	jq_eq "$TMP/s.json" "$(api_row "$f") | [.calls, .errors, .last_error]" "[$n,$n,\"cudaErrorInsufficientDriver\"]" "$f: every call and every error counted"
	total=$((total + n))
done <"$TMP/failed"
jq_eq "$TMP/s.json" '[.api[].errors] | add' "$total" "errors in all: the demo's failures, exactly"
note "$total failed calls, $(jq '[.api[].lost // 0] | add' "$TMP/s.json") of them without a record (the ring was full)"
jq_eq "$TMP/s.json" '.kernels | length' 0 "no kernel row (no launch succeeded)"
grep -q 'not recorded' "$GPUTOP_OUT" && not_ok "no '(not recorded ...)' row" || ok "no '(not recorded ...)' row"
# Said once in the tables (the first), once in the summary, once on stderr.
expect_eq "$(grep -cE "^$SAY\$" "$GPUTOP_OUT")" 2 "said in the first table and in the summary"
first_table=$(awk '/^gputop — PID/ { n++ } n == 1' "$GPUTOP_OUT")
expect_match "$first_table" "^$SAY\$" "said in the first table"
expect_eq "$(grep -cE "^gputop: warning: $SAY\$" "$GPUTOP_ERR")" 1 "said once on stderr"

# Without -b, no terminal: the summary on stderr says it.
"$GPUTOP" -- "$BIN/demo" 0.5 >"$TMP/sum.out" 2>"$TMP/sum.err" </dev/null
expect_eq "$(grep -cE "^$SAY\$" "$TMP/sum.err")" 1 "the summary without -b says it once, on stderr"

# The TUI's status line.
if command -v tmux >/dev/null; then
	source "$(dirname "$0")/tui_lib.bash"
	tui_gputop 120 30 LD_LIBRARY_PATH="$REAL" -- -d 0.3 -- "$BIN/demo" 60
	expect_screen 'every CUDA call failed: cudaErrorInsufficientDriver — is there a driver\?' "the TUI's status line says it"
	tui_keys q
	expect_screen 'k: kill the program' "q asks kill or detach"
	tui_keys k
	tui_wait_status
else
	note "no tmux: the TUI is not tried"
fi

# With a program whose calls succeed (the simulated runtime), nothing of it is said.
LD_LIBRARY_PATH=$SIM run_gputop_json "$TMP/sim.json" -- -b -d 0.5 -- "$BIN/demo" 0.6 || bail "a summary to check"
grep -q 'every CUDA call failed' "$GPUTOP_OUT" "$GPUTOP_ERR" && not_ok "the simulated runtime: not said" ||
	ok "the simulated runtime: not said"
finish
