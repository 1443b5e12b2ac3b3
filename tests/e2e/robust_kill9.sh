#!/usr/bin/env bash
# Robustness, gputop killed with SIGKILL while the program is busy (issue 17, part 8). With the
# launch ring and the call stub, CUDA calls no longer stop the program in steady state, so a
# `kill -9` of gputop, whenever it comes, must leave the program to finish exactly as it does
# without gputop: the same output (computed from a run without gputop), the same exit status,
# and no SIGTRAP ("Trace/breakpoint trap") anywhere.
#
# The matrix: gputop in attach mode (-p) and in launch mode (--), killed while the program is
# busy, for these workloads (the SIMULATED libraries, tests/sim):
#   (a)  calls that used to stop, from 2 threads: tests/progs/rb_busy.c `busy 2` on $SIM
#        (cudaMalloc, cudaMemcpy H2D, 2 x cudaLaunchKernel, cudaMemcpy D2H checked, cudaFree);
#   (a') the same calls without the launches: tests/progs/rb_progress.c on $SIM (cudaMalloc,
#        cudaMemcpy H2D, cudaMemcpy D2H checked, cudaFree), so that a failure of (a) can be told
#        from one of the call stub;
#   (b)  launches: tests/progs/ring_loop.c (driver only, $SIMDRV), cuLaunchKernel and
#        cuLaunchKernelEx from 2 threads, as fast as they go;
#   (c)  the call stub: ring_loop with RB_CALLS=1 (cuMemsetD8Async + cuStreamSynchronize too);
#   (d)  the runtime over the driver ($SIM:$SIMDRV): rb_busy `busy 2`;
#   (e)  4096 new kernels, each loaded by cuLibraryGetKernel (the call stub records it, no
#        stop) and named at its first launch (a park each, where gputop asks the driver's
#        cuKernelGetName), then allocations: tests/progs/rb_kernels.c on $SIM:$SIMDRV;
# (On $SIM alone there is no driver to count launches at: the runtime's cudaLaunchKernel goes
# through the launch ring instead, as the driver's does; in (d) the launches go through the
# driver's ring.) Every row is asserted. (e) and (a) were reported only while an int3 stayed in
# module loading and in the runtime's launches: (e) finished as without gputop in 15/18 trials
# attached and 8/18 launched (the others died of SIGTRAP, or of SIGSEGV at a return from the
# trampoline to 0x100000000), (a) in 7/20 killed while attaching.
# and killed while detaching: SIGTERM, then SIGKILL 0-10 ms later (every workload); and in
# attach mode killed while attaching: SIGKILL 0-40 ms after gputop -p started (its attach of
# these programs takes some 10-80 ms here). Right after an attach every kernel is new to gputop:
# the stub parks each one's first launch for gputop (arch_park), where it trapped before and a
# thread reaching that trap after gputop's death died of SIGTRAP (3 of 32 such trials).
#
# The kill moment is not lucky by design: each trial waits until gputop is attached (its
# "attached to" line, attach mode), the program has started its work (its "ready" line and a
# go file) and gputop's own tables (-b -d 0.1) show the workload's calls or launches counted
# (the probes are in and the program runs through them), then waits a random 0-400 ms before
# the kill (the delay is in the log). The programs with a fixed amount of work (ring_loop) are
# checked to be still running at the kill. After the kill, the programs that run until a stop
# file exists run on 300 ms more (past the 250 ms after which gputop's heartbeat is stale)
# before the stop file is made.
#
# In launch mode gputop is the program's parent: once gputop is killed, the program is
# reparented. tests/progs/rb_reap.c (a child subreaper) runs gputop, so that the program's
# exit status can still be read.
#
# Trials per row: KILL9_TRIALS (default 2, so that `make check` stays fast; `make
# check-robust` runs 20). KILL9_MODES picks the modes (default "attach attaching launch"),
# KILL9_ROWS the rows (default "a a2 b c d e").
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_busy rb_progress rb_kernels rb_reap ring_loop sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
TRIALS=${KILL9_TRIALS:-2}
MODES=" ${KILL9_MODES:-attach attaching launch} "
[[ $TRIALS =~ ^[1-9][0-9]*$ ]] || bail "KILL9_TRIALS is a positive number (it is '$TRIALS')"
note "trials per row: $TRIALS (KILL9_TRIALS)"
GO=$TMP/go
STOP=$TMP/stop

# Rounds of ring_loop, paced by a pause of PAUSE_US after each round: neither a launch nor a call
# waits for gputop's drain, so a loop runs as fast traced as untraced; paced, it lasts about 2 s
# either way (the kill comes 0-400 ms after gputop's tables show the workload).
LAUNCH_ROUNDS=20000
CALL_ROUNDS=20000
PAUSE_US=100
KERNEL_ALLOCS=200000

# row_def ROW: sets the workload of a row: ROW_DESC, ROW_LIB (LD_LIBRARY_PATH), ROW_CMD and its
# environment ROW_ENV (in launch mode given to rb_reap and gputop, which pass it on), ROW_STOP
# (1: runs until $STOP exists; 0: a fixed amount of work) and ROW_BUSY (a line of gputop -b's
# tables that shows the workload counted).
row_def() {
	case $1 in
	a)
		ROW_DESC="(a) rb_busy busy 2, \$SIM (malloc/memcpy/launch/free)"
		ROW_LIB=$SIM ROW_STOP=1 ROW_BUSY='^cudaMalloc +[1-9]'
		ROW_ENV=(RB_GO_FILE="$GO" RB_STOP_FILE="$STOP") ROW_CMD=("$BIN/rb_busy" busy 2 0)
		;;
	a2)
		ROW_DESC="(a') rb_progress 2, \$SIM (malloc/memcpy/free, no launch)"
		ROW_LIB=$SIM ROW_STOP=1 ROW_BUSY='^cudaMalloc +[1-9]'
		ROW_ENV=(RB_GO_FILE="$GO" RB_STOP_FILE="$STOP") ROW_CMD=("$BIN/rb_progress" 2 0)
		;;
	b)
		ROW_DESC="(b) ring_loop 2 $LAUNCH_ROUNDS, \$SIMDRV (launches)"
		ROW_LIB=$SIMDRV ROW_STOP=0 ROW_BUSY='^ring_a\(int\*\) +[1-9]'
		ROW_ENV=(RB_GO_FILE="$GO" RB_PAUSE_US="$PAUSE_US") ROW_CMD=("$BIN/ring_loop" 2 "$LAUNCH_ROUNDS")
		;;
	c)
		ROW_DESC="(c) RB_CALLS=1 ring_loop 2 $CALL_ROUNDS, \$SIMDRV (launches, call stub)"
		ROW_LIB=$SIMDRV ROW_STOP=0 ROW_BUSY='^cuMemsetD8Async +[1-9]'
		ROW_ENV=(RB_GO_FILE="$GO" RB_CALLS=1 RB_PAUSE_US="$PAUSE_US") ROW_CMD=("$BIN/ring_loop" 2 "$CALL_ROUNDS")
		;;
	d)
		ROW_DESC="(d) rb_busy busy 2, \$SIM:\$SIMDRV (runtime over driver)"
		ROW_LIB=$SIM:$SIMDRV ROW_STOP=1 ROW_BUSY='^cudaMalloc +[1-9]'
		ROW_ENV=(RB_GO_FILE="$GO" RB_STOP_FILE="$STOP") ROW_CMD=("$BIN/rb_busy" busy 2 0)
		;;
	e)
		ROW_DESC="(e) rb_kernels 4096 $KERNEL_ALLOCS, \$SIM:\$SIMDRV (4096 new kernels, then allocations)"
		ROW_LIB=$SIM:$SIMDRV ROW_STOP=1 ROW_BUSY='^rbk_[0-9a-f]+ +[1-9]'
		ROW_ENV=(RB_GO_FILE="$GO" RB_STOP_FILE="$STOP") ROW_CMD=("$BIN/rb_kernels" 4096 "$KERNEL_ALLOCS")
		;;
	esac
}

# expected ROW: runs the row's program without gputop (the go file there, the stop file made
# after 300 ms); its output without the "ready" line in $TMP/ROW.want, status in WANT_STATUS.
expected() {
	row_def "$1"
	touch "$GO"
	rm -f "$STOP"
	spawn "$TMP/$1.plain" env LD_LIBRARY_PATH="$ROW_LIB" "${ROW_ENV[@]}" "${ROW_CMD[@]}"
	if [ "$ROW_STOP" -eq 1 ]; then
		sleep 0.3
		touch "$STOP"
	fi
	wait_pid "$SPAWNED_PID" "$RB_LIMIT"
	WANT_STATUS=$WAIT_STATUS
	grep -v '^ready [0-9]*$' "$TMP/$1.plain.out" >"$TMP/$1.want"
	note "without gputop: $ROW_DESC -> status $WANT_STATUS, output: $(tr '\n' '|' <"$TMP/$1.want")"
	if [ "$WANT_STATUS" -eq 0 ] && grep -q 'failures=0' "$TMP/$1.want" && ! grep -q 'failed' "$TMP/$1.want"; then
		ok "$1: without gputop, the program works (status 0, no failure)"
	else
		not_ok "$1: without gputop, the program works (status 0, no failure)"
		sed 's/^/#   /' "$TMP/$1.plain.err" | head -n 5
	fi
	eval "WANT_STATUS_$1=$WANT_STATUS"
}

# delay_ms MIN MAX: a random whole number of milliseconds in [MIN, MAX] in DELAY, the same in
# seconds (for sleep) in DELAY_S.
delay_ms() {
	DELAY=$(($1 + RANDOM % ($2 - $1 + 1)))
	DELAY_S=$(printf '%d.%03d' $((DELAY / 1000)) $((DELAY % 1000)))
}

# the_kill HOW PID: SIGKILL now (HOW kill), or SIGTERM and SIGKILL 0-10 ms later (HOW detach:
# 0 is at once, other delays are a sleep, which itself takes a millisecond or two). The detach
# takes some 40 ms, the first milliseconds of it the most delicate. Sets KILL_WHAT (for the log).
the_kill() {
	if [ "$1" == detach ]; then
		delay_ms 0 10
		kill -TERM "$2" 2>/dev/null
		[ "$DELAY" -gt 0 ] && sleep "$DELAY_S"
		kill -KILL "$2" 2>/dev/null
		KILL_WHAT="SIGTERM, SIGKILL ${DELAY} ms later,"
	else
		kill -KILL "$2" 2>/dev/null
		KILL_WHAT=SIGKILL
	fi
}

# wait_pid_or_tell PID SECONDS: wait_pid, and where the process is still there then (a gputop
# that outlives its SIGKILL: seen once in ~100 trials, cause unknown), what each of its threads
# waits on, into the log, before it is ended.
wait_pid_or_tell() {
	local t
	if ! wait_for_exit "$1" "$2"; then
		for t in /proc/"$1"/task/*; do
			note "still there: thread ${t##*/} $(cat "$t/stat" 2>/dev/null | sed 's/.*) //' | cut -d' ' -f1)" \
				"wchan $(cat "$t/wchan" 2>/dev/null) $(tr '\n' ' ' <"$t/stack" 2>/dev/null)"
		done
	fi
	wait_pid "$1" 1
}

# wait_for_exit PID SECONDS: 0 once the process has ended (a zombie counts), 1 if not in time.
wait_for_exit() {
	local deadline=$(($(date +%s%N) + $2 * 1000000000))
	while running "$1"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

declare -A PASSED TRIED

# verdict KEY WHAT STATUS OUT_FILE LOG_FILES...: the trial's one check: STATUS and the output in
# OUT_FILE (without the "ready" line) as without gputop, no SIGTRAP in the LOG_FILES.
verdict() {
	local key=$1 what=$2 status=$3 out=$4 row=${1%%:*} bad=()
	shift 4
	local want_status
	want_status=$(eval "echo \$WANT_STATUS_$row")
	grep -v '^ready [0-9]*$' "$out" >"$out.got"
	TRIED[$key]=$((${TRIED[$key]:-0} + 1))
	[ "$status" == "$want_status" ] || bad+=("status $status, without gputop $want_status")
	cmp -s "$out.got" "$TMP/$row.want" || bad+=("output differs")
	if grep -Eiq 'trace/breakpoint trap|SIGTRAP|signal 5\b' "$@" 2>/dev/null || [ "$status" == 133 ]; then
		bad+=("a SIGTRAP")
	fi
	if [ ${#bad[@]} -eq 0 ]; then
		PASSED[$key]=$((${PASSED[$key]:-0} + 1))
		ok "$what: the program finishes as without gputop (status $status, the same output, no SIGTRAP)"
		return 0
	fi
	local why
	why=$(printf '%s; ' "${bad[@]}")
	not_ok "$what: the program finishes as without gputop (${why%; })"
	diff -u "$TMP/$row.want" "$out.got" | head -n 20 | sed 's/^/#   /'
	grep -h -Ei 'trace/breakpoint|SIGTRAP|signal 5\b|watchdog|crash|error' "$@" 2>/dev/null | head -n 10 | sed 's/^/#   log: /'
	return 1
}

# run_on_then_stop PID: a program that runs until the stop file exists runs on 300 ms after the
# kill (gputop's heartbeat is then stale: no stub waits for it), then is told to stop.
run_on_then_stop() {
	if [ "$ROW_STOP" -eq 1 ]; then
		sleep 0.3
		running "$1" || note "the program had ended before it was told to stop"
		touch "$STOP"
	fi
}

# attach_trial ROW HOW N: the program started (waiting for the go file), gputop -p attached,
# go, the workload seen in gputop's tables, a random delay, the kill.
attach_trial() {
	local row=$1 how=$2 n=$3 name="$1-attach-$2-$3" what
	row_def "$row"
	what="attach, $how, $ROW_DESC, trial $n"
	rm -f "$GO" "$STOP"
	spawn "$TMP/$name" env LD_LIBRARY_PATH="$ROW_LIB" "${ROW_ENV[@]}" "${ROW_CMD[@]}"
	local prog=$SPAWNED_PID
	if ! wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20; then
		not_ok "$what: the program said ready"
		return
	fi
	rb_gputop_bg "$name-g" -p "$prog" -b -d 0.1
	local gp=$GPUTOP_PID
	if ! wait_for_line "$TMP/$name-g.err" 'attached to' 20; then
		not_ok "$what: gputop attached"
		tail -n 5 "$TMP/$name-g.err" | sed 's/^/#   stderr: /'
		touch "$GO" "$STOP"
		return
	fi
	touch "$GO"
	if ! wait_for_line "$TMP/$name-g.out" "$ROW_BUSY" 20; then
		not_ok "$what: gputop's tables show the workload ($ROW_BUSY) within 20 s"
		touch "$STOP"
		return
	fi
	delay_ms 0 400
	sleep "$DELAY_S"
	local delay=$DELAY
	if ! running "$prog"; then
		not_ok "$what: the program is still busy at the kill (it ended first: more rounds needed)"
	fi
	the_kill "$how" "$gp"
	wait_pid_or_tell "$gp" 60
	local gstatus=$WAIT_STATUS
	note "$what: $KILL_WHAT ${delay} ms after the workload showed; gputop status $gstatus;" \
		"$(grep -c 'watchdog: gputop died' "$TMP/$name-g.err") watchdog line(s)"
	if [ "$how" == kill ] && [ "$gstatus" != 137 ]; then
		not_ok "$what: gputop died of SIGKILL (137, not $gstatus)"
	fi
	run_on_then_stop "$prog"
	wait_pid "$prog" "$RB_LIMIT"
	verdict "$row:attach:$how" "$what" "$WAIT_STATUS" "$TMP/$name.out" \
		"$TMP/$name.out" "$TMP/$name.err" "$TMP/$name-g.err"
}

# attaching_trial ROW N: the program busy (its go file made first), gputop -p started, and
# SIGKILL 0-40 ms later: while gputop seizes the threads, maps its page (the first mmap runs
# from a resuming gadget in the unused end of an executable segment), plants the probes. The
# log says whether its "attached to" line was out yet.
attaching_trial() {
	local row=$1 n=$2 name="$1-attaching-$2" what
	row_def "$row"
	what="attach, kill while attaching, $ROW_DESC, trial $n"
	rm -f "$STOP"
	touch "$GO"
	spawn "$TMP/$name" env LD_LIBRARY_PATH="$ROW_LIB" "${ROW_ENV[@]}" "${ROW_CMD[@]}"
	local prog=$SPAWNED_PID
	if ! wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20; then
		not_ok "$what: the program said ready"
		touch "$STOP"
		return
	fi
	rb_gputop_bg "$name-g" -p "$prog" -b -d 0.1
	local gp=$GPUTOP_PID phase=attaching
	delay_ms 0 40
	sleep "$DELAY_S"
	grep -q 'attached to' "$TMP/$name-g.err" && phase="after its attached line"
	kill -KILL "$gp" 2>/dev/null
	wait_pid "$gp" 20
	note "$what: SIGKILL ${DELAY} ms after gputop started ($phase); gputop status $WAIT_STATUS;" \
		"$(grep -c 'watchdog: gputop died' "$TMP/$name-g.err") watchdog line(s)"
	run_on_then_stop "$prog"
	wait_pid "$prog" "$RB_LIMIT"
	verdict "$row:attaching:kill" "$what" "$WAIT_STATUS" "$TMP/$name.out" \
		"$TMP/$name.out" "$TMP/$name.err" "$TMP/$name-g.err"
}

# launch_trial ROW HOW N: rb_reap STATUS gputop -b -d 0.1 -o OUT -- program; the program's
# ready line, the workload seen in gputop's tables, a random delay, the kill.
launch_trial() {
	local row=$1 how=$2 n=$3 name="$1-launch-$2-$3" what
	row_def "$row"
	what="launch, $how, $ROW_DESC, trial $n"
	touch "$GO"
	rm -f "$STOP"
	local st=$TMP/$name.status out=$TMP/$name.prog
	spawn "$TMP/$name-g" env LD_LIBRARY_PATH="$ROW_LIB" "${ROW_ENV[@]}" "$BIN/rb_reap" "$st" \
		"$GPUTOP" -b -d 0.1 -o "$out" -- "${ROW_CMD[@]}"
	local reaper=$SPAWNED_PID
	if ! wait_for_line "$st" '^child [0-9]+$' 20 || ! wait_for_line "$out" '^ready [0-9]+$' 20; then
		not_ok "$what: gputop started the program (its ready line)"
		tail -n 5 "$TMP/$name-g.err" | sed 's/^/#   stderr: /'
		touch "$STOP"
		wait_pid "$reaper" 20
		return
	fi
	local gp prog
	gp=$(awk '$1 == "child" { print $2; exit }' "$st")
	prog=$(awk '$1 == "ready" { print $2; exit }' "$out")
	SPAWNED+=("$prog")	# not our child: ended at exit if still there
	if ! wait_for_line "$TMP/$name-g.out" "$ROW_BUSY" 20; then
		not_ok "$what: gputop's tables show the workload ($ROW_BUSY) within 20 s"
		touch "$STOP"
		wait_pid "$reaper" 30
		return
	fi
	delay_ms 0 400
	sleep "$DELAY_S"
	local delay=$DELAY
	if ! running "$prog"; then
		not_ok "$what: the program is still busy at the kill (it ended first: more rounds needed)"
	fi
	the_kill "$how" "$gp"
	local deadline=$(($(date +%s) + 20))
	while ! grep -q "^$gp " "$st" && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.02
	done
	local gstatus
	gstatus=$(awk -v p="$gp" '$1 == p { print $2 }' "$st")
	note "$what: $KILL_WHAT ${delay} ms after the workload showed; gputop status ${gstatus:-(still running)};" \
		"$(grep -c 'watchdog: gputop died' "$TMP/$name-g.err") watchdog line(s)"
	if [ "$how" == kill ] && [ "$gstatus" != 137 ]; then
		not_ok "$what: gputop died of SIGKILL (137, not ${gstatus:-still running})"
	fi
	run_on_then_stop "$prog"
	# rb_reap ends once everything under it has: gputop, its watchdog, the program
	if ! wait_pid "$reaper" "$RB_LIMIT"; then
		note "$what: still running after $RB_LIMIT s; ended"
		kill -KILL "$prog" 2>/dev/null
	fi
	local pstatus
	pstatus=$(awk -v p="$prog" '$1 == p { print $2 }' "$st")
	verdict "$row:launch:$how" "$what" "${pstatus:-(not reaped)}" "$out" \
		"$out" "$TMP/$name-g.err"
}

read -r -a ROWS <<<"${KILL9_ROWS:-a a2 b c d e}"
DETACH_ROWS=("${ROWS[@]}")
for row in "${ROWS[@]}"; do
	expected "$row"
done

ATTACH=1
if ! can_attach_to_others; then
	ATTACH=0
	note "attach mode left out: this user may not ptrace other processes (Yama ptrace_scope)"
fi

for ((t = 1; t <= TRIALS; t++)); do
	for row in "${ROWS[@]}"; do
		[ "$ATTACH" -eq 1 ] && [[ $MODES == *" attach "* ]] && attach_trial "$row" kill "$t"
		[ "$ATTACH" -eq 1 ] && [[ $MODES == *" attaching "* ]] && attaching_trial "$row" "$t"
		[[ $MODES == *" launch "* ]] && launch_trial "$row" kill "$t"
	done
	for row in "${DETACH_ROWS[@]}"; do
		[ "$ATTACH" -eq 1 ] && [[ $MODES == *" attach "* ]] && attach_trial "$row" detach "$t"
		[[ $MODES == *" launch "* ]] && launch_trial "$row" detach "$t"
	done
done

# The matrix, one line per row: trials in which the program finished as without gputop.
for how in kill detach; do
	for mode in attach attaching launch; do
		for row in "${ROWS[@]}"; do
			key=$row:$mode:$how
			[ -n "${TRIED[$key]:-}" ] || continue
			row_def "$row"
			note "matrix: $mode, $how, $ROW_DESC: ${PASSED[$key]:-0}/${TRIED[$key]} as without gputop"
		done
	done
done
finish
