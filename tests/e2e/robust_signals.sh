#!/usr/bin/env bash
# Robustness, signals: every signal of the program passes through gputop unchanged and none of
# gputop's SIGTRAPs leaks (issue 5). Each case runs the program without gputop first and
# compares output and exit status exactly. Programs: tests/progs/rb_signals.c, signals.c, on the
# SIMULATED runtime.
#  1. a SIGUSR1 handler runs for every SIGUSR1 (raised, and sent by another thread; and sent from
#     outside by kill(1)); 2. SIGTRAP raised by the program, and an int3 of its own, reach its
#     handler (exact counts, SI_KERNEL for the int3); 3. a SIGSEGV in the program: status 139;
#  4. kill -STOP / -CONT and SIGTSTP: it stops (state T, or t while traced: a group-stop of a
#     traced process shows as "tracing stop") and goes on; detaching while it is stopped leaves
#     it stopped; 5. SIGINT to a launched program ends it with 130 and gputop exits 130;
#  6. ^C from a terminal (tmux) to gputop and the program together: gputop exits 130 too;
#  7. nohup: an inherited SIG_IGN for SIGHUP stays SIG_IGN for gputop and for the program.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_signals signals sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
P=$BIN/rb_signals

# --- 1, 2, 3: signals the program sends itself -----------------------------------------------------
rb_same usr1 0 'rb_signals: usr1 sent=40 received=40 failures=0 mismatches=0' -- "$P" usr1 20
expect_api "$TMP/usr1.json" cudaMalloc 20 0
expect_api "$TMP/usr1.json" cudaMemcpy 40 0
expect_api "$TMP/usr1.json" cudaFree 20 0

rb_same trap 0 'rb_signals: trap sent=40 received=40 kernel=20 failures=0' -- "$P" trap 20
expect_api "$TMP/trap.json" cudaMalloc 20 0
expect_api "$TMP/trap.json" cudaFree 20 0

# A handler that calls CUDA while the main thread is inside a traced call (1.2 s of
# cudaDeviceSynchronize): the handler runs, its calls succeed, and they are counted: a call
# made from outside the CUDA libraries is the program's own, whatever is in flight.
export SIMCUDA_SYNC_US=1200000
rb_same handler 0 'rb_signals: handler calls=5 failures=0' -- "$P" handler 5
unset SIMCUDA_SYNC_US
expect_api "$TMP/handler.json" cudaDeviceSynchronize 1 0
expect_api "$TMP/handler.json" cudaMalloc 5 0

ulimit -c 0	# no core files; the status is 139 with or without one
rb_same segv 139 'rb_signals: about to crash' -- "$P" segv 5
jq_eq "$TMP/segv.json" '.term_signal' 11 "segv: the JSON says it was killed by signal 11"
jq_eq "$TMP/segv.json" '.exit_status' 139 "segv: exit_status 139 in the JSON"
expect_api "$TMP/segv.json" cudaMalloc 5 0

# SIGUSR1 from outside, 8 times, 100 ms apart, while the program sleeps between CUDA calls.
# (--wait-usr1 8: it waits for the 8th before it ends, should the sender be slowed down past the
# end of its loops on a loaded machine; a signal lost leaves it at 7 after its 30 s of waiting.)
send_usr1() {
	wait_for_line "$1" '^ready [0-9]+$' 20 || return 1
	local pid i
	pid=$(awk '/^ready/ { print $2; exit }' "$1")
	for i in 1 2 3 4 5 6 7 8; do
		sleep 0.1
		kill -USR1 "$pid"
	done
}
spawn "$TMP/ext-plain" "$BIN/signals" --loops 30 --sleep-ms 50 --wait-usr1 8
send_usr1 "$TMP/ext-plain.out"
wait_pid "$SPAWNED_PID" 60
expect_eq "$WAIT_STATUS" 0 "external SIGUSR1, without gputop: status 0"
expect_eq "$(grep '^signals:' "$TMP/ext-plain.out")" "signals: loops=30 sigusr1=8 failures=0" \
	"external SIGUSR1, without gputop: 8 received"
rb_gputop_bg ext -q --json "$TMP/ext.json" -- "$BIN/signals" --loops 30 --sleep-ms 50 --wait-usr1 8
send_usr1 "$TMP/ext.out"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "external SIGUSR1, under gputop: status 0"
expect_eq "$(grep '^signals:' "$TMP/ext.out")" "signals: loops=30 sigusr1=8 failures=0" \
	"external SIGUSR1, under gputop: all 8 received by the handler"
expect_api "$TMP/ext.json" cudaMalloc 30 0

# --- 4. STOP / CONT / TSTP ---------------------------------------------------------------------
# loop_count: how many loops the program has made (it writes the count to a file each loop).
loop_count() {
	cat "$TMP/count" 2>/dev/null || echo 0
}

# wait_stopped PID: waits (20 s at most) until PID's state is T or t; the state in STATE.
wait_stopped() {
	local deadline=$(($(date +%s) + 20))
	while :; do
		STATE=$(proc_state "$1")
		[[ $STATE == [Tt] ]] && return 0
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.02
	done
}

# check_stops NAME PID: STOP, then TSTP, each followed by CONT; the program must stand still
# while stopped and go on after. Under gputop, state t is also what a thread stopped at one of
# gputop's breakpoints shows for a moment, and the SIGSTOP goes through gputop before it takes
# effect: on a loaded machine a loop may still end after t is first seen. So "no loop runs" is
# looked for in 0.4 s windows for up to 10 s, and holds once a whole window passes without a
# loop, in state T/t at both ends: a program that keeps running makes a loop every few ms
# (2 ms of sleep and 3 calls) and never gets such a window.
check_stops() {
	local name=$1 pid=$2 sig state c1 c2 c3 deadline still
	for sig in STOP TSTP; do
		kill -"$sig" "$pid"
		wait_stopped "$pid"
		state=$STATE
		expect_match "$state" '^[Tt]$' "$name: SIG$sig stops it (state $state)"
		deadline=$(($(date +%s) + 10))
		still=no
		while :; do
			c1=$(loop_count)
			sleep 0.4
			c2=$(loop_count)
			state=$(proc_state "$pid")
			[ "$c2" == "$c1" ] && [[ $state == [Tt] ]] && still=yes && break
			[ "$(date +%s)" -ge "$deadline" ] && break
		done
		if [ "$still" == yes ]; then
			ok "$name: SIG$sig: no loop runs while it is stopped (0.4 s at $c2 loops)"
		else
			not_ok "$name: SIG$sig: no loop runs while it is stopped ($c1 -> $c2 loops in 0.4 s, state $state, for 10 s)"
		fi
		kill -CONT "$pid"
		deadline=$(($(date +%s) + 20))
		while :; do
			c3=$(loop_count)
			[ "$c3" -gt "$c2" ] && break
			[ "$(date +%s)" -ge "$deadline" ] && break
			sleep 0.02
		done
		if [ "$c3" -gt "$c2" ]; then
			ok "$name: SIGCONT after SIG$sig: it runs again ($c2 -> $c3 loops)"
		else
			not_ok "$name: SIGCONT after SIG$sig: it runs again (still $c3 loops, state $(proc_state "$pid"))"
		fi
	done
}

export RB_STOP_FILE=$TMP/stop RB_COUNT_FILE=$TMP/count
rm -f "$TMP/stop" "$TMP/count"
printf 'rb_signals: loop done failures=0\n' >"$TMP/loop.expected"

# without gputop
spawn "$TMP/stop-plain" "$P" loop
PLAIN_PID=$SPAWNED_PID
wait_for_line "$TMP/stop-plain.out" '^ready' 20 || bail "rb_signals loop said ready"
wait_for_line "$TMP/count" '^[1-9]' 20
check_stops without-gputop "$PLAIN_PID"
touch "$TMP/stop"
wait_pid "$PLAIN_PID" 30
expect_eq "$WAIT_STATUS" 0 "without gputop: the loop ends with status 0"
grep -v '^ready' "$TMP/stop-plain.out" >"$TMP/stop-plain.lines"
expect_file_eq "$TMP/stop-plain.lines" "$TMP/loop.expected" "without gputop: output"

# launch mode
rm -f "$TMP/stop" "$TMP/count"
rb_gputop_bg stop-launch -q --json "$TMP/stop-launch.json" -- "$P" loop
wait_for_line "$TMP/stop-launch.out" '^ready' 20 || bail "rb_signals loop under gputop said ready"
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/stop-launch.out")
wait_for_line "$TMP/count" '^[1-9]' 20
check_stops launch "$PROG"
touch "$TMP/stop"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "launch: gputop exits with the program's status 0"
grep -v '^ready' "$TMP/stop-launch.out" >"$TMP/stop-launch.lines"
expect_file_eq "$TMP/stop-launch.lines" "$TMP/loop.expected" "launch: output as without gputop"
jq_eq "$TMP/stop-launch.json" '.exit_status' 0 "launch: exit_status 0 in the JSON"
jq_check "$TMP/stop-launch.json" "$(api_row cudaMalloc).calls == $(api_row cudaFree).calls and $(api_row cudaMalloc).calls > 0" \
	"launch: every cudaMalloc and cudaFree counted"
rb_no_trap "$TMP/stop-launch.err" launch

# attach mode, and detach while the program is stopped: it stays stopped, then goes on.
if can_attach_to_others; then
	rm -f "$TMP/stop" "$TMP/count"
	rb_spawn stop-attach "$P" loop
	wait_for_line "$TMP/count" '^[1-9]' 20
	rb_gputop_bg stop-attach-g -p "$TARGET" --json "$TMP/stop-attach.json"
	rb_wait_attached stop-attach-g
	check_stops attach "$TARGET"
	kill -STOP "$TARGET"
	wait_stopped "$TARGET"	# (not a fixed pause: it is stopped, or on its way through gputop)
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 20
	expect_eq "$WAIT_STATUS" 0 "attach: gputop detaches from a stopped program, status 0"
	expect_eq "$(proc_state "$TARGET")" T "attach: after the detach the program is still stopped (T)"
	c1=$(loop_count)
	sleep 0.3
	expect_eq "$(loop_count)" "$c1" "attach: ... and does not run"
	kill -CONT "$TARGET"
	touch "$TMP/stop"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "attach: after SIGCONT it finishes, status 0"
	grep -v '^ready' "$TMP/stop-attach.out" >"$TMP/stop-attach.lines"
	expect_file_eq "$TMP/stop-attach.lines" "$TMP/loop.expected" "attach: output as without gputop"

	# attaching to a program that is stopped already: refused with the reason; it stays stopped
	rm -f "$TMP/stop" "$TMP/count"
	rb_spawn stopped "$P" loop
	wait_for_line "$TMP/count" '^[1-9]' 20
	kill -STOP "$TARGET"
	wait_stopped "$TARGET"	# stopped already when gputop comes (a loaded machine may be slow to)
	timeout -k 5 20 "$GPUTOP" -p "$TARGET" --timeout 2 >"$TMP/stopped-g.out" 2>"$TMP/stopped-g.err" </dev/null
	expect_eq "$?" 1 "attach to a stopped program: refused, status 1"
	expect_match "$(cat "$TMP/stopped-g.err")" 'stopped by a signal: continue it' "... saying why and what to do"
	expect_eq "$(proc_state "$TARGET")" T "... and the program is still stopped"
	kill -CONT "$TARGET"
	touch "$TMP/stop"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "... then runs on and exits 0"

	# signals sent while gputop attaches and detaches, again and again: none lost
	spawn "$TMP/usr1-cycles" "$P" usr1 2000
	TARGET=$SPAWNED_PID
	cycles=0
	while running "$TARGET" && [ "$cycles" -lt 200 ]; do
		timeout -k 5 20 "$GPUTOP" -q -p "$TARGET" --timeout 0.05 >/dev/null 2>&1 </dev/null
		cycles=$((cycles + 1))
	done
	wait_pid "$TARGET" 30
	note "$cycles attach/detach cycles while the program signalled itself"
	expect_eq "$WAIT_STATUS" 0 "usr1 across attach/detach cycles: status 0"
	expect_eq "$(grep -v '^ready' "$TMP/usr1-cycles.out")" 'rb_signals: usr1 sent=4000 received=4000 failures=0 mismatches=0' \
		"usr1 across attach/detach cycles: every signal received"
else
	note "attach part not run: this user may not ptrace other processes"
fi

# --- 5. SIGINT to a launched program: 130, like without gputop --------------------------------
rm -f "$TMP/stop"
spawn "$TMP/int-plain" env --default-signal=INT "$P" loop
wait_for_line "$TMP/int-plain.out" '^ready' 20
kill -INT "$(awk '/^ready/ { print $2; exit }' "$TMP/int-plain.out")"
wait_pid "$SPAWNED_PID" 20
expect_eq "$WAIT_STATUS" 130 "SIGINT without gputop: status 130"
rb_gputop_bg int --json "$TMP/int.json" -- "$P" loop	# no -q: its words are checked
wait_for_line "$TMP/int.out" '^ready' 20
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/int.out")
wait_for_line "$TMP/count" '^[1-9]' 20
kill -INT "$PROG"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 130 "SIGINT to the launched program: gputop exits 130"
jq_eq "$TMP/int.json" '.term_signal' 2 "SIGINT: term_signal 2 in the JSON"
expect_match "$(cat "$TMP/int.err")" 'killed by signal 2' "SIGINT: gputop says the program was killed by signal 2"

# --- 6. ^C from a terminal: to gputop and the program at once ------------------------------------
if command -v tmux >/dev/null; then
	sock=gputop-rb-$$
	rm -f "$TMP/stop" "$TMP/tmux.status"
	tmux -L "$sock" new-session -d -x 100 -y 30 \
		"env LD_LIBRARY_PATH=$SIM RB_STOP_FILE=$TMP/stop RB_COUNT_FILE=$TMP/count $GPUTOP -b -d 30 --json $TMP/tty.json -- $P loop >$TMP/tty.out 2>$TMP/tty.err; echo \$? >$TMP/tmux.status"
	wait_for_line "$TMP/tty.out" '^ready' 20
	wait_for_line "$TMP/tty.err" 'probing' 20
	tmux -L "$sock" send-keys C-c
	if ! wait_for_line "$TMP/tmux.status" '^[0-9]+$' 30; then
		note "gputop had not ended 30 s after the ^C; its stderr then:"
		tail -n 15 "$TMP/tty.err" | sed 's/^/#   stderr: /'
	fi
	tmux -L "$sock" kill-server 2>/dev/null
	expect_eq "$(cat "$TMP/tmux.status" 2>/dev/null)" 130 "^C in a terminal: gputop exits with the program's 130" ||
		tail -n 15 "$TMP/tty.err" | sed 's/^/#   stderr: /'
	jq_eq "$TMP/tty.json" '.term_signal' 2 "^C in a terminal: the JSON says signal 2"
else
	note "^C part not run: no tmux"
fi

# --- 7. nohup: SIGHUP stays ignored for both ---------------------------------------------------
rm -f "$TMP/stop" "$TMP/count"
spawn "$TMP/hup" env --ignore-signal=HUP "$GPUTOP" -q --json "$TMP/hup.json" -- "$P" loop
GPUTOP_PID=$SPAWNED_PID
wait_for_line "$TMP/hup.out" '^ready' 20
PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/hup.out")
wait_for_line "$TMP/count" '^[1-9]' 20
kill -HUP "$PROG" "$GPUTOP_PID"
sleep 0.3
expect_running "$GPUTOP_PID" "nohup: gputop ignores SIGHUP as it was started to"
expect_running "$PROG" "nohup: the program still ignores SIGHUP under gputop"
touch "$TMP/stop"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "nohup: the program ends normally, status 0"
expect_eq "$(grep -c '^rb_signals: loop done failures=0$' "$TMP/hup.out")" 1 "nohup: its output"
finish
