#!/usr/bin/env bash
# Robustness, gputop frozen (issue 17, part 8): gputop stopped with SIGSTOP for 2 s while it is
# attached to a busy program must not slow the program down. The program
# (tests/progs/rb_progress.c: 2 threads of cudaMalloc, cudaMemcpy H2D, [cudaLaunchKernel],
# cudaMemcpy D2H checked, cudaFree, as fast as they go, on the SIMULATED libraries) writes its
# progress every 100 ms of its own clock (CLOCK_MONOTONIC): "progress <seconds> <rounds>".
#
# The measure: rates (rounds a second, from the program's own time stamps) over windows of the
# same length, K = 15 intervals of 100 ms (1.5 s): the window that starts with the first
# progress line written after gputop was stopped, against the median of the 3 windows just
# before the stop, with gputop running (the median: one window that a loaded machine slowed
# down or sped up decides nothing). The freeze window's rate must be at least half of it (the
# issue's bar: "≥ 50% of the rate").
#
# Why half, and why it is not a bound luck decides: since issue 23 no stub ever waits for
# gputop — a call's record goes into the calls' ring, or is dropped and counted when the ring
# is full — and a first launch parks only while gputop's heartbeat is younger than 250 ms. So
# the freeze window holds no wait on gputop at all; what it measures is the program's own pace
# with a full ring, on a 2-CPU machine shared with the test itself. Measured: 0.73-0.95 of the
# running rate; the runtime-only case (rt) ran ~15% slower through the whole freeze in some
# runs, not explained yet: not the full ring's path (with gputop running and the ring always
# full the loop keeps its pace), and frozen by hand, outside this test, it ran faster.
# A stub that waited on a stopped gputop (or a call that stopped at an int3) stalls the
# program for the whole freeze: a rate near 0, far below half.
#
# After SIGCONT, gputop traces on; SIGTERM then detaches it cleanly (status 0, "detached
# from"), the program runs on and ends with exactly the output it has without gputop; gputop's
# JSON counts the calls made while it was attached, frozen or not (those the stub could not
# record are counted as lost: .api[].lost, .cost.lost_records, allowed and noted here).
#
# Two workloads:
#   rt-over-drv  RB_LAUNCH=1 on $SIM:$SIMDRV (the runtime over the driver): the runtime's call
#                stubs, the driver's call stubs (the runtime's copies and allocations call the
#                driver's), and the launch ring (runtime launches are counted at the driver);
#   rt           RB_LAUNCH=1 on $SIM alone (no libcuda): the runtime's call stubs, and its
#                launches through the launch ring as the driver's go where there is no libcuda
#                (they kept an int3 before, a stop per launch: a stopped gputop held the
#                program at the first one, 0 rounds/s for the whole freeze).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_progress sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"

K=15		# intervals of 100 ms in a window
FREEZE=2	# seconds gputop is stopped
WANT_OUT=$'rb_progress: running\nrb_progress: threads=2 rounds=many failures=0 mismatches=0'

# lines FILE: how many lines FILE has now.
lines() {
	wc -l <"$1" 2>/dev/null || echo 0
}

# rate FILE FROM TO: rounds a second between progress lines FROM and TO (1-based line numbers),
# by the program's own time stamps.
rate() {
	awk -v a="$2" -v b="$3" 'NR == a { t0 = $2; n0 = $3 } NR == b { t1 = $2; n1 = $3 }
		END { if (t1 > t0) printf "%.1f\n", (n1 - n0) / (t1 - t0); else print "nan" }' "$1"
}

# count FILE LINE: the rounds count on progress line LINE.
count_at() {
	awk -v a="$2" 'NR == a { print $3 }' "$1"
}

# wait_lines FILE N SECONDS: until FILE has N lines.
wait_lines() {
	local deadline=$(($(date +%s) + $3))
	while [ "$(lines "$1")" -lt "$2" ] && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.05
	done
	[ "$(lines "$1")" -ge "$2" ]
}

# frozen NAME LD_LIBRARY_PATH LAUNCH: the scenario.
frozen() {
	local name=$1 lib=$2 launch=$3 P=$TMP/$1.progress
	rm -f "$TMP/go" "$TMP/stop" "$P"
	local envs=(LD_LIBRARY_PATH="$lib" RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop"
		RB_PROGRESS_FILE="$P" RB_LAUNCH="$launch")

	# without gputop: the output to expect
	touch "$TMP/go"
	spawn "$TMP/$name-plain" env "${envs[@]}" "$BIN/rb_progress" 2 0
	sleep 0.3
	touch "$TMP/stop"
	wait_pid "$SPAWNED_PID" 30
	expect_eq "$WAIT_STATUS" 0 "$name: without gputop, status 0"
	expect_eq "$(grep -v '^ready' "$TMP/$name-plain.out")" "$WANT_OUT" "$name: without gputop, its output"
	rm -f "$TMP/go" "$TMP/stop" "$P"

	rb_spawn "$name" env "${envs[@]}" "$BIN/rb_progress" 2 0
	local prog=$TARGET
	rb_gputop_bg "$name-g" -p "$prog" --json "$TMP/$name.json"
	local gp=$GPUTOP_PID
	rb_wait_attached "$name-g"
	touch "$TMP/go"
	wait_for_line "$TMP/$name.out" '^rb_progress: running$' 20 || note "$name: the program did not say running"
	local first=$(($(lines "$P") + 1))	# the first progress line with gputop attached and the program running
	local c_first
	wait_lines "$P" "$first" 20
	c_first=$(count_at "$P" "$first")
	# 3 windows of K intervals with gputop running, and a line to spare on each side
	if ! wait_lines "$P" $((first + 3 * K + 2)) 60; then
		not_ok "$name: $((3 * K)) progress lines with gputop running"
		return
	fi

	kill -STOP "$gp"
	local a
	a=$(lines "$P")	# lines 1..a were there when gputop was stopped (line a maybe just after)
	local deadline=$(($(date +%s) + 5))
	while [ "$(proc_state "$gp")" != T ] && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.01
	done
	expect_eq "$(proc_state "$gp")" T "$name: gputop is stopped"
	sleep "$FREEZE"
	local b
	b=$(lines "$P")	# lines up to b were written while gputop was stopped
	kill -CONT "$gp"
	note "$name: gputop stopped for $FREEZE s; progress lines $((a + 1))..$b written meanwhile"

	# the windows
	local runs=() w from to r
	for w in 0 1 2; do
		to=$((a - 1 - w * K))
		from=$((to - K))
		r=$(rate "$P" "$from" "$to")
		runs+=("$r")
		note "$name: running window, lines $from..$to: $r rounds/s"
	done
	local median
	median=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p)
	if [ $((a + 1 + K)) -gt "$b" ]; then
		not_ok "$name: a window of $K intervals within the freeze (lines $((a + 1))..$b)"
	else
		local fr start
		fr=$(rate "$P" $((a + 1)) $((a + 1 + K)))
		# the first intervals of the freeze: the calls may wait while the heartbeat is fresh
		start=$(awk -v a="$((a - 1))" 'NR == a { n = $3 } NR > a && NR <= a + 6 { printf " %d", $3 - n; n = $3 }' "$P")
		note "$name: freeze window, lines $((a + 1))..$((a + 1 + K)): $fr rounds/s;" \
			"running median $median rounds/s; rounds per interval around the stop:$start"
		if awk -v f="$fr" -v m="$median" 'BEGIN { exit !(m > 0 && f >= 0.5 * m) }'; then
			ok "$name: while gputop is stopped the program goes on at least half its rate with gputop running ($fr vs $median rounds/s)"
		else
			not_ok "$name: while gputop is stopped the program goes on at least half its rate with gputop running ($fr vs $median rounds/s)"
			awk -v a="$((a - 5))" -v b="$((b + 2))" 'NR >= a && NR <= b' "$P" | sed 's/^/#   progress: /'
		fi
	fi

	# gputop traces on after SIGCONT, then detaches cleanly
	sleep 0.5
	expect_running "$gp" "$name: gputop runs on after SIGCONT"
	local c_last
	c_last=$(tail -n 1 "$P" | awk '{ print $3 }')	# rounds made, all while attached
	kill -TERM "$gp"
	wait_pid "$gp" 20
	expect_eq "$WAIT_STATUS" 0 "$name: SIGTERM after the freeze: gputop detaches and exits 0"
	expect_match "$(cat "$TMP/$name-g.err")" 'detached from' "$name: gputop says it detached"
	expect_running "$prog" "$name: the program runs on after the detach"
	sleep 0.2
	touch "$TMP/stop"
	wait_pid "$prog" 30
	expect_eq "$WAIT_STATUS" 0 "$name: the program exits 0"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$WANT_OUT" "$name: its output, as without gputop"
	rb_no_trap "$TMP/$name.err" "$name"
	rb_no_trap "$TMP/$name-g.err" "$name (gputop's stderr)"

	# the JSON: the calls made while attached, frozen or not, counted (recorded or lost)
	local F=$TMP/$name.json total
	total=$(awk '$1 == "total" { print $3 }' "$P")
	if ! jq -e 'type == "object"' "$F" >/dev/null 2>&1; then
		not_ok "$name: a JSON summary"
		return
	fi
	jq_check "$F" '.exit_status == null' "$name: the JSON says the program outlived the session"
	local least=$((c_last - c_first)) fn
	note "$name: rounds while attached: at least $least (progress $c_first..$c_last), at most $total (all)"
	for fn in cudaMalloc cudaFree; do
		jq_check "$F" "($(api_row $fn).calls // 0) as \$c | \$c >= $least and \$c <= $total" \
			"$name: $fn: every call made while attached counted, recorded or lost ($least to $total)" \
			"$(api_row $fn) | {calls, lost}"
	done
	jq_check "$F" "($(api_row cudaMemcpy).calls // 0) as \$c | \$c >= 2 * $least and \$c <= 2 * $total" \
		"$name: cudaMemcpy: every call made while attached counted (2 a round)" "$(api_row cudaMemcpy) | {calls, lost}"
	if [ "$launch" -eq 1 ]; then
		jq_check "$F" "(($(api_row cudaLaunchKernel).calls // 0) + ($(api_row cuLaunchKernel).calls // 0)) as \$c | \$c >= $least and \$c <= $total" \
			"$name: launches: every launch made while attached counted once (cudaLaunchKernel + cuLaunchKernel)" \
			'[.api[] | select(.name | test("LaunchKernel")) | {name, calls, lost}]'
		# A driver call made inside a runtime call whose record was dropped cannot be told
		# apart from the program's own (README, lost events): reported, not asserted.
		note "$name: driver calls counted on their own while records were dropped:" \
			"$(jq -c '[.api[] | select(.layer == "driver" and (.name | test("Mem"))) | {name, calls, lost}]' "$F")"
	fi
	note "$name: lost records (allowed): .cost.lost_records = $(jq '.cost.lost_records' "$F");" \
		"per API: $(jq -c '[.api[] | select(.lost > 0) | {(.name): .lost}] | add' "$F")"
}

frozen rt-over-drv "$SIM:$SIMDRV" 1
frozen rt "$SIM" 1
finish
