#!/usr/bin/env bash
# Issue 14, acceptance 3: slow and hostile clients of --listen neither crash gputop nor stop the
# traced program, and change none of its figures. rb_progress (2 threads, a launch per round, on
# the SIMULATED runtime: its calls and launches go through the stubs, no stop) keeps its own
# account of its rounds
# (a progress file written by a thread of its own every 100 ms, on its own clock). Against
# gputop's port, one after the other and then all at once (tests/e2e/metrics_attack.py):
# slowloris (200 connections sending headers a byte every 0.5 s), 10,000 connections at once,
# 200 connections of garbage (random bytes, a TLS hello, NULs, a bad HTTP version), a request
# with a 1 MiB header, slow readers (requests pipelined, answers never read). Checked:
#  - the program's own account shows rounds done during every attack; the rates are noted, not
#    judged (a loaded machine decides them);
#  - gputop runs throughout; the huge header gets an error answer (431) or a closed connection;
#    afterwards GET /metrics answers 200 with figures newer than before;
#  - at the end, gputop's summary has exactly the program's rounds: launches, cudaMalloc calls,
#    H2D copies (recorded, or counted as lost where a ring was full while gputop was busy); the
#    program saw no failure and no corrupted copy; both exit 0.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin rb_progress sim/libcudart.so.13
need_gputop
need_metrics_tools
export LD_LIBRARY_PATH=$SIM
ATTACK=$ROOT/tests/e2e/metrics_attack.py
PROGRESS=$TMP/progress

RB_LAUNCH=1 RB_STOP_FILE=$TMP/stop RB_PROGRESS_FILE=$PROGRESS \
	start_gputop_listening gputop -d 0.2 --json "$TMP/end.json" -o "$TMP/prog.out" -- \
	"$BIN/rb_progress" 2 0 || bail "gputop listens (stderr: $(head -c 400 "$TMP/gputop.err"))"
wait_for_line "$PROGRESS" '^progress [0-9.]+ [1-9]' 60 || bail "the program makes progress"
# It runs until the stop file exists: should this script end early, it is killed too (lib.sh).
SPAWNED+=("$(sed -nE 's/^ready ([0-9]+)$/\1/p' "$TMP/prog.out" | head -n 1)")

# The program's own account: "SECONDS ROUNDS" of its last progress line.
account() {
	awk '$1 == "progress" { t = $2; r = $3 } END { print t, r }' "$PROGRESS"
}

# answers_again: polls GET /metrics until it answers 200 (the connections an attack left are
# closed when idle for 10 s); 0 when it did within 60 s.
answers_again() {
	local deadline=$(($(date +%s) + 60))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		timeout 10 "$ATTACK" "$GPORT" get 2>/dev/null | grep -q '^get: 200 ' && return 0
		sleep 0.2
	done
	return 1
}

# attack NAME ARGS...: runs one attack (or several at once: ARGS "all"), then checks that the
# program made rounds meanwhile by its own account, that gputop still runs, and that it
# answers GET /metrics again once the attackers' connections are gone.
attack() {
	local name=$1 before after
	shift
	answers_again || not_ok "$name: GET /metrics answers before it"
	before=$(account)
	if [ "$1" == "all" ]; then
		local pids=()
		timeout 120 "$ATTACK" "$GPORT" slowloris 200 3 >"$TMP/all.1" 2>&1 & pids+=($!)
		timeout 120 "$ATTACK" "$GPORT" flood 10000 3 >"$TMP/all.2" 2>&1 & pids+=($!)
		timeout 120 "$ATTACK" "$GPORT" garbage 200 >"$TMP/all.3" 2>&1 & pids+=($!)
		timeout 120 "$ATTACK" "$GPORT" slowread 20 3 >"$TMP/all.4" 2>&1 & pids+=($!)
		wait "${pids[@]}"	# these only: gputop is a child of this shell too
		cat "$TMP"/all.[1-4] >"$TMP/$name.log"
	else
		timeout 120 "$ATTACK" "$GPORT" "$@" >"$TMP/$name.log" 2>&1
	fi
	sed 's/^/# /' "$TMP/$name.log"
	# the progress thread writes every 100 ms: wait for a line written after the attack
	local t0=${before% *} t1
	local deadline=$(($(date +%s) + 30))
	while after=$(account) && t1=${after% *} && [ "$(date +%s)" -lt "$deadline" ] &&
		awk -v a="$t1" -v b="$t0" 'BEGIN { exit !(a - b < 0.3) }'; do
		sleep 0.1
	done
	local r0=${before#* } r1=${after#* }
	awk -v a="$r1" -v b="$r0" 'BEGIN { exit !(a > b) }' &&
		ok "$name: the program went on ($((r1 - r0)) rounds in $(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.1f", a - b }') s of its own clock)" ||
		not_ok "$name: the program went on (rounds $r0 -> $r1)"
	expect_running "$GPUTOP_PID" "$name: gputop still runs"
	answers_again && ok "$name: GET /metrics answers 200 again afterwards" ||
		not_ok "$name: GET /metrics answers 200 again afterwards"
}

# A quiet window first, for the note on rates.
b=$(account); sleep 2; a=$(account)
note "without clients: $(awk -v t0="${b% *}" -v r0="${b#* }" -v t1="${a% *}" -v r1="${a#* }" 'BEGIN { printf "%.0f", (r1 - r0) / (t1 - t0) }') rounds/s"
launches_before=$(metric_value "$(scrape "$GPORT")" "gputop_launches_total{")

attack slowloris slowloris 200 3
attack flood flood 10000 3
attack garbage garbage 200
attack huge huge
expect_match "$(cat "$TMP/huge.log")" '^huge: (HTTP/1\.[01] 4[0-9][0-9]|closed|Connection)' \
	"huge: a 1 MiB header is refused (an error answer or a closed connection)"
attack slowread slowread 20 3
attack all all

if wait_for_metric "$GPORT" "gputop_process_info{" 1 30; then
	ok "GET /metrics still answers after the attacks"
else
	not_ok "GET /metrics still answers after the attacks"
fi
launches_after=$(metric_value "$SCRAPED" "gputop_launches_total{")
[ "${launches_after:-0}" -gt "${launches_before:-0}" ] &&
	ok "the figures served are fresh ($launches_before -> $launches_after launches)" ||
	not_ok "the figures served are fresh ($launches_before -> $launches_after launches)"

touch "$TMP/stop"
wait_pid "$GPUTOP_PID" 120
expect_eq "$WAIT_STATUS" 0 "gputop exits with the program's status 0"
expect_match "$(prog_lines "$TMP/prog.out" rb_progress)" 'failures=0 mismatches=0$' \
	"the program saw no failed call and no corrupted copy"
ROUNDS=$(awk '$1 == "total" { print $3 }' "$PROGRESS")
note "the program's own total: $ROUNDS rounds"
jq_eq "$TMP/end.json" '.launches' "$ROUNDS" "summary: a launch per round"
jq_eq "$TMP/end.json" "$(api_row cudaMalloc).calls" "$ROUNDS" "summary: a cudaMalloc per round"
LOST=$(jq '.cost.lost_records' "$TMP/end.json")
if [ "$LOST" == 0 ]; then
	expect_xfer "$TMP/end.json" H2D "$ROUNDS" $((ROUNDS * 4096))
else
	# A copy whose record a full ring dropped is counted as a call, its bytes unknown.
	note "records lost while gputop was busy (counted, allowed): $LOST"
	jq_eq "$TMP/end.json" "$(api_row cudaMemcpy).calls" "$((2 * ROUNDS))" "summary: two cudaMemcpy a round, recorded or lost"
fi
finish
