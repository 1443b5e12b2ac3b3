#!/usr/bin/env bash
# --listen under hostile clients (issue 25 part 5): half-open and idle connections must not
# keep a scraper out. gputop traces rb_progress (2 threads, on the SIMULATED runtime) and
# serves its figures; tests/e2e/metrics_attack.py `hold` opens the connections, waits until
# every one is established, and while they are held makes 6 scrapes, 0.5 s apart:
#  1. slowloris: 40 connections sending a request's headers one byte every 0.5 s;
#  2. 3,000 idle connections (nothing sent);
# each time 6 of 6 scrapes are answered (200, a body) within 1 s. (Before: 0/6 and 0/4, until
# the connections went.) Then gputop still runs, answers, and the program ends as without
# gputop: its output, its status 0, and gputop's figures of its rounds. gputop raises its own
# limit of open files for the connections; a program it starts gets the limit gputop had.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin rb_progress sim/libcudart.so.13
need_gputop
need_metrics_tools
export LD_LIBRARY_PATH=$SIM
ATTACK=$ROOT/tests/e2e/metrics_attack.py
# 3,000 connections and their other ends: this shell's limit, which gputop must not need
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
note "open files: $(ulimit -n) (soft), $(ulimit -Hn) (hard)"

RB_STOP_FILE=$TMP/stop RB_PROGRESS_FILE=$TMP/progress \
	start_gputop_listening gputop -d 0.2 --json "$TMP/end.json" -o "$TMP/prog.out" -- \
	"$BIN/rb_progress" 2 0 || bail "gputop listens (stderr: $(head -c 400 "$TMP/gputop.err"))"
wait_for_line "$TMP/progress" '^progress [0-9.]+ [1-9]' 60 || bail "the program makes progress"
SPAWNED+=("$(sed -nE 's/^ready ([0-9]+)$/\1/p' "$TMP/prog.out" | head -n 1)")
wait_for_metric "$GPORT" "gputop_process_info{" 1 30 || bail "gputop serves the program's figures"

# hold_scrapes NAME KIND N: the attack; 6/6 scrapes within 1 s.
hold_scrapes() {
	local name=$1
	timeout 120 "$ATTACK" "$GPORT" hold "$2" "$3" 6 >"$TMP/$name.log" 2>&1
	sed 's/^/# /' "$TMP/$name.log"
	expect_match "$(cat "$TMP/$name.log")" "^hold $2: $3 of $3 connections established" \
		"$name: all $3 connections established"
	expect_match "$(cat "$TMP/$name.log")" '6/6 scrapes answered within 1 s' \
		"$name: 6/6 scrapes answered within 1 s"
	expect_running "$GPUTOP_PID" "$name: gputop still runs"
}

hold_scrapes slowloris slowloris 40
hold_scrapes idle idle 3000
wait_for_metric "$GPORT" "gputop_process_info{" 1 30 && ok "GET /metrics answers afterwards" ||
	not_ok "GET /metrics answers afterwards"

touch "$TMP/stop"
# The program's limit of open files is the one it would have had (gputop raised its own).
( ulimit -Sn 1024 && "$GPUTOP" -q --listen 0 -- sh -c 'echo "soft=$(ulimit -Sn) hard=$(ulimit -Hn)"' \
	>"$TMP/limit.out" 2>/dev/null </dev/null )
expect_eq "$(cat "$TMP/limit.out")" "soft=1024 hard=$(ulimit -Hn)" "a program gputop --listen starts has the limit of open files gputop had"
wait_pid "$GPUTOP_PID" 120
expect_eq "$WAIT_STATUS" 0 "gputop exits with the program's status 0"
expect_match "$(prog_lines "$TMP/prog.out" rb_progress)" 'rb_progress: threads=2 rounds=many failures=0 mismatches=0$' \
	"the program's own output: no failed call, no corrupted copy"
ROUNDS=$(awk '$1 == "total" { print $3 }' "$TMP/progress")
jq_eq "$TMP/end.json" "$(api_row cudaMalloc).calls" "$ROUNDS" "summary: a cudaMalloc per round ($ROUNDS)"
finish
