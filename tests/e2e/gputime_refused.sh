#!/usr/bin/env bash
# --gpu-time where CUPTI refuses to subscribe (issue 33, part A): a driver older than the CUPTI,
# profiling allowed to administrators only (NVreg_RestrictProfilingToAdminUsers), or CUDA 13.0's
# libcupti on a machine without a driver (CUPTI_ERROR_UNKNOWN). Such a CUPTI leaves
# thread-specific data in the thread that called it, whose destructor is CUPTI's code, run when
# that thread (libgputop-gpu.so's) ends: gputop's library used to unload CUPTI and itself first,
# and the program died of SIGSEGV (7/7, attach and launch). Here CUPTI is the SIMULATED one
# (tests/sim/cupti.c), SIMCUPTI_REFUSE=subscribe: it refuses with
# CUPTI_ERROR_INSUFFICIENT_PRIVILEGES and leaves such data, as the real one does.
# Each trial, launch mode and attach mode: the program (tests/progs/ring_loop.c) does its
# rounds, gputop says CUPTI refused and why, and the test waits until the library's thread has
# ended (where the program died) before it lets the program finish. Checks: the program lives
# and ends with its own output and status; gputop says no GPU time, why, and that CUPTI and
# its library stay loaded, idle; --json has no GPU-time figure (absent, not zero) and every
# launch counted. Attached, after the detach: both stay mapped, no thread of gputop's is left;
# attached again, that copy is not started again (its CUPTI was never finalized): said so.
# GPUTIME_REFUSED_TRIALS trials of each mode (default 10; a trial takes about a second).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin ring_loop simdrv/libcuda.so.1 simcupti/libcupti.so.13
need_gputop
[ -f "$ROOT/build/libgputop-gpu.so" ] || skip "build/libgputop-gpu.so is not built (no CUPTI headers)"

TRIALS=${GPUTIME_REFUSED_TRIALS:-10} N=100
export LD_LIBRARY_PATH=$SIMDRV GPUTOP_CUPTI=$BIN/simcupti/libcupti.so.13 SIMCUPTI_REFUSE=subscribe RB_CALLS=1
EXPECTED="ring_loop: launches=$((2 * N)) calls=$((2 * N)) failures=0"

# helper_gone PID: waits (10 s at most) until the library's thread (gputop-gpu) has ended in
# PID, or PID has; 0 when the thread is gone.
helper_gone() {
	local i
	for i in $(seq 1 200); do
		running "$1" || return 1
		grep -qx gputop-gpu /proc/"$1"/task/*/comm 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# refused_said ERR PID WHAT: gputop said that CUPTI refused, why, and what stays.
refused_said() {
	expect_match "$(cat "$1")" "^gputop: warning: --gpu-time: in $2, CUPTI said no: cuptiSubscribe: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES \(35\): no GPU time$" \
		"$3: gputop says no GPU time, and why"
	expect_match "$(cat "$1")" "NVreg_RestrictProfilingToAdminUsers" "$3: ... with the hint"
	expect_match "$(cat "$1")" "^gputop: warning: --gpu-time: libcupti and gputop's library stay loaded in $2, idle .*CUPTI refused" \
		"$3: ... and that CUPTI and its library stay loaded, idle"
}

# no_gpu_time JSON WHAT: no GPU-time figure at all, every launch counted.
no_gpu_time() {
	jq_eq "$1" '[.launches, .gpu_time, .gpu_busy, ([.kernels[].gpu_time] | unique), .processes[0].gpu_busy]' \
		"[$((2 * N)),null,null,[null],null]" "$2: --json: every launch, no GPU-time figure"
}

# no_gpu_time_any JSON WHAT: the same, whatever the number of launches.
no_gpu_time_any() {
	jq_eq "$1" '[.gpu_time, .gpu_busy, ([.kernels[].gpu_time] | unique), (.launches > 0)]' \
		'[null,null,[null],true]' "$2: --json: launches counted, no GPU-time figure"
}

# program_ends OUT WHAT: after "idle", the program printed its result and "idle" only.
program_ends() {
	rb_drop_ready "$1"
	expect_eq "$(tr '\n' '|' <"$1")" "ring_loop: running|$EXPECTED|idle|" "$2: the program's own output"
}

launch_trial() {
	local w="launch $1" name=launch$1 pid
	rm -f "$TMP/go" "$TMP/idle"
	RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle spawn "$TMP/$name" \
		"$GPUTOP" -q --gpu-time --json "$TMP/$name.json" -- "$BIN/ring_loop" 1 $N
	local g=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20 || bail "$w: the program said ready"
	pid=$(awk '/^ready/ { print $2 }' "$TMP/$name.out")
	touch "$TMP/go"
	wait_for_line "$TMP/$name.out" '^idle$' 60 || not_ok "$w: the program made its calls"
	wait_for_line "$TMP/$name.err" 'CUPTI said no' 30 || not_ok "$w: gputop heard CUPTI refuse"
	if helper_gone "$pid"; then
		ok "$w: the library's thread ended, the program lives"
	else
		not_ok "$w: the library's thread ended, the program lives"
	fi
	touch "$TMP/idle"
	wait_pid "$g" 60
	expect_eq "$WAIT_STATUS" 0 "$w: gputop exits with the program's status"
	program_ends "$TMP/$name.out" "$w"
	refused_said "$TMP/$name.err" "$pid" "$w"
	no_gpu_time "$TMP/$name.json" "$w"
	LIVED=$((LIVED + (WAIT_STATUS == 0)))
}

attach_trial() {
	local w="attach $1" name=attach$1 before
	rm -f "$TMP/go" "$TMP/idle"
	RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle rb_spawn "prog$1" "$BIN/ring_loop" 1 $N
	before=$(ls "/proc/$TARGET/task" | wc -l)
	rb_gputop_bg "$name" -p "$TARGET" --gpu-time --json "$TMP/$name.json"
	rb_wait_attached "$name"
	touch "$TMP/go"
	wait_for_line "$TMP/prog$1.out" '^idle$' 60 || not_ok "$w: the program made its calls"
	wait_for_line "$TMP/$name.err" 'CUPTI said no' 30 || not_ok "$w: gputop heard CUPTI refuse"
	if helper_gone "$TARGET"; then
		ok "$w: the library's thread ended, the program lives"
	else
		not_ok "$w: the library's thread ended, the program lives"
	fi
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 60
	expect_eq "$WAIT_STATUS" 0 "$w: gputop detaches, status 0"
	if grep -q libcupti.so.13 "/proc/$TARGET/maps" && grep -q libgputop-gpu.so "/proc/$TARGET/maps"; then
		ok "$w: after the detach, CUPTI and gputop's library stay mapped"
	else
		not_ok "$w: after the detach, CUPTI and gputop's library stay mapped"
	fi
	expect_eq "$(ls "/proc/$TARGET/task" | wc -l)" "$before" "$w: the program's threads only"
	refused_said "$TMP/$name.err" "$TARGET" "$w"
	no_gpu_time "$TMP/$name.json" "$w"
	touch "$TMP/idle"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "$w: the program ends well"
	program_ends "$TMP/prog$1.out" "$w"
	LIVED=$((LIVED + (WAIT_STATUS == 0)))
}

LIVED=0
for i in $(seq 1 "$TRIALS"); do
	launch_trial "$i"
done
expect_eq "$LIVED/$TRIALS" "$TRIALS/$TRIALS" "launch mode: the programs that lived"

can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
LIVED=0
for i in $(seq 1 "$TRIALS"); do
	attach_trial "$i"
done
expect_eq "$LIVED/$TRIALS" "$TRIALS/$TRIALS" "attach mode: the programs that lived"

# Attached again to a program where CUPTI and the library stayed: that copy, whose CUPTI was
# never finalized, is not started again; said so; the program, launching all along, lives.
rm -f "$TMP/go" "$TMP/stop"
RB_GO_FILE=$TMP/go RB_STOP_FILE=$TMP/stop RB_PAUSE_US=1000 rb_spawn again "$BIN/ring_loop" 1 0
touch "$TMP/go"
for k in 1 2; do
	rb_gputop_bg "again$k" -p "$TARGET" --gpu-time --json "$TMP/again$k.json"
	rb_wait_attached "again$k"
	wait_for_line "$TMP/again$k.err" 'CUPTI said no|earlier session' 30 || not_ok "again $k: gputop tried to load its library"
	helper_gone "$TARGET" || not_ok "again $k: the program lives"
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 60
	expect_eq "$WAIT_STATUS" 0 "again $k: gputop detaches, status 0"
	no_gpu_time_any "$TMP/again$k.json" "again $k"
done
refused_said "$TMP/again1.err" "$TARGET" "again 1"
expect_match "$(cat "$TMP/again2.err")" "^gputop: warning: --gpu-time: $TARGET still holds gputop's library and CUPTI from an earlier session, idle \(they could not be unloaded there\): no GPU time$" \
	"again 2: not started again, said so"
touch "$TMP/stop"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "again: the program ends well"
expect_match "$(cat "$TMP/again.out")" '^ring_loop: launches=[0-9]+ calls=[0-9]+ failures=0$' "again: all its calls succeeded"
finish
