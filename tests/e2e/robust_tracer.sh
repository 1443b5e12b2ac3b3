#!/usr/bin/env bash
# Another tracer on gputop (issue 25 part 2): a process of the traced program that traces gputop
# (`strace -p $PPID` in a program gputop launched) stops gputop, and gputop, stopped, never
# resumes it: both would stay stopped for good (SIGTERM did nothing; only SIGKILL freed them).
# gputop's guard (src/probe/rescue_cycle.c), a process no one traces, sees the loop within
# 0.1 s, the watchdogs put the programs' code back, and the guard says why and ends gputop
# (SIGKILL: status 137); the program runs on and ends as without gputop.
# Programs: tests/progs/rb_ptracer.c (a child of the program PTRACE_SEIZEs gputop and runs it
# from system call to system call, as strace does, while 2 threads do CUDA work) on the
# SIMULATED runtime over the SIMULATED driver (no int3 of gputop's met in steady state: a thread
# stopped at one when gputop is killed would resume inside the instruction it displaced); and
# strace itself where installed. Everything runs under tests/bin/rb_reap (a subreaper), so that
# the program's status is known after gputop is gone, and under a timeout: nothing may hang.
#  1. launch mode, 5 trials: gputop ends (137) saying why; the program's output and status 0
#     as without gputop;
#  2. strace -p $PPID started by a shell gputop launched, then CUDA work (rb_busy): the same;
#  3. attach mode with --children: the program's child traces gputop once gputop has attached:
#     the same, and the program, the test's own child, ends with status 0.
#  4. the guard killed (SIGKILL) first, then the loop at once (issue 33, part 4: it hung until
#     SIGKILL, 0 of 2): every watchdog looks for the loop too, so gputop is ended within 5 s
#     all the same, GUARD_TRIALS times (10: a trial takes about a second);
#  5. the guard stopped (SIGSTOP), then the loop (it hung while the guard was stopped): the
#     same, 3 trials;
#  6. the guard killed, and gputop starts another at its tick (within 1 s); the watchdogs
#     stopped, then the loop: the new guard alone ends gputop within 5 s (the watchdogs, let go
#     then, put the program back).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_ptracer rb_reap rb_busy sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
export LD_LIBRARY_PATH=$SIM:$SIMDRV
[ "$(id -u)" -eq 0 ] || can_attach_to_others || skip "this user may not trace its parent (ptrace_scope)"
DONE='rb_ptracer: threads=2 iterations=100 failures=0 mismatches=0'
LOOP='gputop: gputop \([0-9]+\) is traced by [0-9]+ \((rb_ptracer|strace)\), a process gputop traces itself: each would wait for the other for good\. The traced programs. code is put back and gputop is ended \(SIGKILL\); they run on without it'

# status_of FILE PID: the status rb_reap wrote for PID.
status_of() {
	awk -v p="$2" '$1 == p { print $2 }' "$1"
}

# --- without gputop ----------------------------------------------------------------------------
timeout -k 5 60 "$BIN/rb_reap" "$TMP/plain.st" "$BIN/rb_ptracer" 2 50 >"$TMP/plain.out" 2>"$TMP/plain.err" </dev/null
expect_eq "$?" 0 "without gputop: status 0"
expect_eq "$(grep -v '^ready' "$TMP/plain.out")" "$DONE" "without gputop: its work and data are right"
note "$(grep tracer: "$TMP/plain.err")"

# --- 1. launch mode ------------------------------------------------------------------------------
for i in 1 2 3 4 5; do
	start=$(date +%s%N)
	timeout -k 5 60 "$BIN/rb_reap" "$TMP/l$i.st" "$GPUTOP" -q --json "$TMP/l$i.json" -- "$BIN/rb_ptracer" 2 50 \
		>"$TMP/l$i.out" 2>"$TMP/l$i.err" </dev/null
	status=$?
	note "trial $i: $((($(date +%s%N) - start) / 1000000)) ms; $(grep tracer: "$TMP/l$i.err")"
	expect_eq "$status" 137 "launch, trial $i: gputop is ended (SIGKILL), not left stopped (124 would be a hang)"
	expect_match "$(cat "$TMP/l$i.err")" "$LOOP" "launch, trial $i: it says why"
	prog=$(awk '/^ready/ { print $2; exit }' "$TMP/l$i.out")
	expect_eq "$(status_of "$TMP/l$i.st" "$prog")" 0 "launch, trial $i: the program ends with status 0"
	expect_eq "$(grep -v '^ready' "$TMP/l$i.out")" "$DONE" "launch, trial $i: its work and data are right"
	rb_no_trap "$TMP/l$i.err" "launch, trial $i"
done

# --- 2. strace itself ------------------------------------------------------------------------------
if command -v strace >/dev/null; then
	# rb_busy works until $TMP/stop exists, made once gputop has ended: the program must outlive
	# gputop for its status to reach rb_reap (a program that ended first was gputop's to reap).
	# strace comes once it is at work: a thread loading a library at the instant gputop is killed
	# could meet the dynamic linker's int3 (README, "What still carries a risk").
	SH="(sleep 0.5; exec timeout 10 strace -qq -o /dev/null -p \$PPID) & exec env RB_STOP_FILE=$TMP/stop $BIN/rb_busy busy 2 0"
	rm -f "$TMP/stop"
	(sleep 1; touch "$TMP/stop") &
	timeout -k 5 60 "$BIN/rb_reap" "$TMP/sp.st" sh -c "$SH" >"$TMP/sp.out" 2>"$TMP/sp.err" </dev/null
	expect_eq "$?" 0 "strace, without gputop: status 0"
	rm -f "$TMP/stop"
	spawn "$TMP/s" "$BIN/rb_reap" "$TMP/s.st" "$GPUTOP" -q -- sh -c "$SH"
	S=$SPAWNED_PID
	deadline=$(($(date +%s) + 30))
	while ! grep -q "^$(awk '$1 == "child" { print $2; exit }' "$TMP/s.st" 2>/dev/null) " "$TMP/s.st" 2>/dev/null &&
		[ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.05	# until gputop has ended
	done
	touch "$TMP/stop"
	wait_pid "$S" 60
	gstatus=$(awk '$1 == "child" { g = $2 } g && $1 == g { print $2; exit }' "$TMP/s.st")
	expect_eq "$gstatus" 137 "strace -p \$PPID: gputop is ended, not left stopped"
	expect_match "$(cat "$TMP/s.err")" "$LOOP" "strace -p \$PPID: it says why"
	prog=$(awk '/^ready/ { print $2; exit }' "$TMP/s.out")
	expect_eq "$(status_of "$TMP/s.st" "$prog")" 0 "strace -p \$PPID: the program ends with status 0"
	expect_match "$(grep -v '^ready' "$TMP/s.out")" 'failures=0 mismatches=0' \
		"strace -p \$PPID: the program's work as without gputop ($(grep -v '^ready' "$TMP/sp.out"))"
else
	note "part 2 not run: no strace (scripts/install-deps installs it)"
fi

# --- 3. attach mode, --children ------------------------------------------------------------------------
rm -f "$TMP/gputop.pid"
spawn "$TMP/a" env RB_TRACE_PID_FILE="$TMP/gputop.pid" "$BIN/rb_ptracer" 2 50
PROG=$SPAWNED_PID
wait_for_line "$TMP/a.out" '^ready [0-9]+$' 30 || bail "rb_ptracer said ready"
spawn "$TMP/ag" "$GPUTOP" -p "$PROG" --children --json "$TMP/a.json"
G=$SPAWNED_PID
rb_wait_attached ag
echo "$G" >"$TMP/gputop.pid.tmp" && mv "$TMP/gputop.pid.tmp" "$TMP/gputop.pid"
wait_pid "$G" 30
expect_eq "$WAIT_STATUS" 137 "attach, --children: gputop is ended, not left stopped"
expect_match "$(cat "$TMP/ag.err")" "$LOOP" "attach, --children: it says why"
wait_pid "$PROG" 60
expect_eq "$WAIT_STATUS" 0 "attach, --children: the program ends with status 0"
expect_eq "$(grep -v '^ready' "$TMP/a.out")" "$DONE" "attach, --children: its work and data are right"
# --- 4-6. the guard killed or stopped ------------------------------------------------------------------
GUARD_TRIALS=${GUARD_TRIALS:-10}

# children_named PID NAME: the children of PID whose command name is NAME.
children_named() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = "$2" ] && echo "$c"
	done
}

# guard_trial NAME WHAT: attach (--children) to rb_ptracer, do WHAT to gputop's guard and
# watchdogs (kill, stop, replaced), then let the program's child trace gputop: gputop must end
# (137) within 5 s, saying why, and the program end with status 0, its work right.
guard_trial() {
	local name=$1 what=$2 guard dogs=()
	rm -f "$TMP/$name.pid"
	spawn "$TMP/$name" env RB_TRACE_PID_FILE="$TMP/$name.pid" "$BIN/rb_ptracer" 2 50
	local prog=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 30 || { not_ok "$name: rb_ptracer said ready"; return; }
	spawn "$TMP/$name-g" "$GPUTOP" -p "$prog" --children --json "$TMP/$name.json"
	local g=$SPAWNED_PID
	wait_for_line "$TMP/$name-g.err" 'attached to' 20 || { not_ok "$name: gputop attached"; return; }
	guard=$(children_named "$g" gputop-guard)
	mapfile -t dogs < <(children_named "$g" gputop)	# its watchdogs, one a traced process
	if [ -z "$guard" ] || [ ${#dogs[@]} -eq 0 ]; then
		not_ok "$name: gputop's guard and watchdogs found (guard '$guard', watchdogs ${dogs[*]})"
		return
	fi
	case $what in
	kill) kill -KILL "$guard" ;;
	stop) kill -STOP "$guard" ;;
	replaced)
		kill -KILL "$guard"
		local new='' deadline=$(($(date +%s%N) + 1000000000))
		while [ -z "$new" ] && [ "$(date +%s%N)" -lt "$deadline" ]; do
			sleep 0.05
			new=$(children_named "$g" gputop-guard)
		done
		if [ -n "$new" ] && [ "$new" != "$guard" ]; then
			ok "$name: the guard killed ($guard), gputop started another within 1 s ($new)"
		else
			not_ok "$name: the guard killed ($guard), gputop started another within 1 s ('$new')"
		fi
		kill -STOP "${dogs[@]}"	# the new guard alone looks now
		;;
	esac
	local start=$(date +%s%N)
	echo "$g" >"$TMP/$name.pid.tmp" && mv "$TMP/$name.pid.tmp" "$TMP/$name.pid"
	wait_pid "$g" 5
	local status=$WAIT_STATUS ms=$((($(date +%s%N) - start) / 1000000))
	[ "$what" = stop ] && kill -CONT "$guard"
	[ "$what" = replaced ] && kill -CONT "${dogs[@]}"
	note "$name: gputop ended $ms ms after the loop was made, status $status"
	expect_eq "$status" 137 "$name: gputop is ended within 5 s, not left stopped (124 would be a hang)"
	expect_match "$(cat "$TMP/$name-g.err")" "$LOOP" "$name: it says why"
	[ "$(grep -c 'is traced by' "$TMP/$name-g.err")" -eq 1 ] || not_ok "$name: said once ($(grep -c 'is traced by' "$TMP/$name-g.err"))"
	wait_pid "$prog" 60
	expect_eq "$WAIT_STATUS" 0 "$name: the program ends with status 0"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$DONE" "$name: its work and data are right"
	rb_no_trap "$TMP/$name.err" "$name"
}

for ((i = 1; i <= GUARD_TRIALS; i++)); do
	guard_trial "guard-killed-$i" kill
done
for i in 1 2 3; do
	guard_trial "guard-stopped-$i" stop
done
guard_trial guard-replaced replaced
finish
