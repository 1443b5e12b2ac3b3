#!/usr/bin/env bash
# The launch ring (src/probe/launchring.c, arch/x86_64_launch.S): driver launches counted without a
# stop, on the SIMULATED libcuda.so.1 (tests/progs/ring_loop.c: 4 threads, cuLaunchKernel and
# cuLaunchKernelEx at once).
#  1. Exact counts (32000 launches, fewer than the ring holds), kernel names and dimensions of
#     both stub variants (dimensions in registers and on the stack; by pointer), and no stop
#     per launch: only the first launch of each kernel stops (to name it) —
#     cost.stops_per_launch 0, a handful of stops in all.
#  2. A ring too small to hold them (GPUTOP_LAUNCH_RING_CAP=16): the counts stay exact, and the
#     launches it could not hold are shown as such, with no stop either.
#  3. GPUTOP_LAUNCH_RING=0: the same figures with a stop per launch.
#  4. Attach while it launches and calls (synchronizes in flight): the jumps go in (0xe9 at the
#     probed entries of libcuda's code, the ring mapped), and on detach every byte of code and
#     every mapping is as before; the program goes on and its calls all succeed.
#  5. gputop killed (SIGKILL) while attached: the program runs on, every launch succeeds (the
#     watchdog tells the stub nobody is there: it traps no more; the jumps stay). A new gputop
#     then puts the entries back, traces through its own ring, and leaves the code as it was.
#  6. The call stub (driver copies, memsets, synchronizes recorded at entry and return without
#     a stop): exact figures from 4 threads, the same as with a stop per call; under the
#     runtime, a driver call inside a traced runtime call is not counted again.
#  7. fork (a child from a traced parent, 20 while threads sit in calls) and exec (the new image
#     gets its own ring; the old image's last launches are read before it goes).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin ring_loop simdrv/libcuda.so.1
need_gputop
export LD_LIBRARY_PATH=$SIMDRV
P=$BIN/ring_loop

check_counts() {	# json name rounds (per thread, of 4 threads)
	local F=$1 n=$2 each=$((4 * $3))
	jq_eq "$F" "$(api_row cuLaunchKernel).calls" "$each" "$n: $each cuLaunchKernel"
	jq_eq "$F" "$(api_row cuLaunchKernelEx).calls" "$each" "$n: $each cuLaunchKernelEx"
	jq_eq "$F" '.launches' $((2 * each)) "$n: $((2 * each)) launches"
}

# 4 threads x 4000 rounds: 32000 launches, fewer than the ring holds, so that none can go
# unrecorded however late a drain comes on a loaded machine.
R=4000

check_exact() {	# json name
	local F=$1 n=$2
	check_counts "$F" "$n" "$R"
	jq_eq "$F" '.kernels | length' 2 "$n: two kernels, every launch named"
	expect_kernel "$F" 'ring_a(int*)' $((4 * R)) '[2,3,4]' '[32,2,1]'
	expect_kernel "$F" 'ring_b(float*)' $((4 * R)) '[5,1,1]' '[64,1,1]'
}

# --- 1. no stop per launch ----------------------------------------------------------------------
run_gputop_json "$TMP/ring.json" -- -- "$P" 4 $R || bail "a summary to check"
expect_eq "$(prog_lines "$GPUTOP_OUT" ring_loop)" "ring_loop: launches=$((8 * R)) calls=0 failures=0" "the program's launches all succeed"
check_exact "$TMP/ring.json" ring
jq_eq "$TMP/ring.json" '.cost.stops_per_launch' 0 "ring: launches go through the ring"
jq_check "$TMP/ring.json" '.cost.stops < 50' "ring: a few stops for $((8 * R)) launches"

# --- 2. a full ring -----------------------------------------------------------------------------
# (Few launches: a full ring makes each launch wait for the next drain, 10 ms.)
GPUTOP_LAUNCH_RING_CAP=16 run_gputop_json "$TMP/full.json" -- -- "$P" 4 250 || bail "a summary to check"
expect_eq "$(prog_lines "$GPUTOP_OUT" ring_loop)" "ring_loop: launches=2000 calls=0 failures=0" "full: the program's launches all succeed"
check_counts "$TMP/full.json" full 250
jq_eq "$TMP/full.json" '[.kernels[] | select(.name | startswith("(not recorded"))]' '[]' \
	"full: a launch the ring could not hold is counted under its kernel all the same (the tallies)"
jq_check "$TMP/full.json" '(.kernels | map(.launches) | add) == 2000' "full: the kernels' launches add up"
jq_check "$TMP/full.json" '.cost.stops < 50' "full: no stop for a full ring"

# --- 3. without the ring ------------------------------------------------------------------------
GPUTOP_LAUNCH_RING=0 run_gputop_json "$TMP/stop.json" -- -- "$P" 4 $R || bail "a summary to check"
check_exact "$TMP/stop.json" no-ring
jq_eq "$TMP/stop.json" '.cost.stops_per_launch' 1 "no-ring: a stop per launch"
jq_check "$TMP/stop.json" ".cost.stops >= $((8 * R))" "no-ring: at least $((8 * R)) stops"

# --- 4. attach and detach -------------------------------------------------------------------------
code_of() {	# pid out: the simulated libcuda's executable mapping(s)
	local range perms name
	: >"$2"
	while read -r range perms name; do
		[[ $perms == r-xp && $name == *simdrv/libcuda* ]] || continue
		dd if="/proc/$1/mem" bs=4096 skip=$((16#${range%-*} / 4096)) \
			count=$(((16#${range#*-} - 16#${range%-*}) / 4096)) 2>/dev/null >>"$2"
	done < <(awk '{ print $1, $2, $6 }' "/proc/$1/maps")
}

# jumps_in PID BEFORE OUT: waits (20 s at most) until the simulated libcuda's code in PID (saved
# to OUT) differs from BEFORE by 0xe9 bytes at 2 entries or more; their count in JUMPS.
jumps_in() {
	local deadline=$(($(date +%s) + 20))
	while :; do
		code_of "$1" "$3"
		JUMPS=$(cmp -l "$2" "$3" | awk '$3 == 351' | wc -l)	# 0xe9 in octal
		[ "$JUMPS" -ge 2 ] && return 0
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# A gputop -b's tables (in FILE) show ring_a's launches: a fixed pause may see none on a
# loaded machine, and the JSON must then have some.
wait_ring_a() {
	wait_for_line "$1" '^ring_a\(int\*\) +[1-9]' 20 || note "no launch of ring_a in $(basename "$1") after 20 s"
}

if can_attach_to_others; then
	rm -f "$TMP/go" "$TMP/stop"
	# With calls in flight too (each synchronize lasts 200 µs): their returns go back on detach.
	# (A pace a real program keeps: fewer calls per 10 ms than the 64 call records.)
	rb_spawn att env RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop" RB_PAUSE_US=1000 RB_CALLS=1 \
		SIMCUDA_SYNC_US=200 "$P" 2 0
	touch "$TMP/go"
	# its threads are there, with their buffers and arenas mapped (not a fixed pause: a thread
	# that came later than the picture would make the mappings differ after the detach)
	wait_for_line "$TMP/att.out" '^ring_loop: running$' 20 || note "ring_loop did not say running"
	code_of "$TARGET" "$TMP/before.code"
	cp "/proc/$TARGET/maps" "$TMP/before.maps"
	rb_gputop_bg attg -p "$TARGET" --json "$TMP/att.json" -b -d 0.1
	rb_wait_attached attg
	jumps_in "$TARGET" "$TMP/before.code" "$TMP/during.code"
	expect_eq "$((JUMPS >= 2))" 1 "attached: jumps at the launch entries ($JUMPS)"
	wait_ring_a "$TMP/attg.out"
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 20
	expect_eq "$WAIT_STATUS" 0 "attach: gputop detaches, status 0"
	code_of "$TARGET" "$TMP/after.code"
	if cmp -s "$TMP/before.code" "$TMP/after.code"; then
		ok "detached: every byte of libcuda's code is as before"
	else
		not_ok "detached: every byte of libcuda's code is as before"
	fi
	cp "/proc/$TARGET/maps" "$TMP/after.maps"	# (cmp trusts /proc's size of 0)
	expect_file_eq "$TMP/after.maps" "$TMP/before.maps" "detached: the mappings are as before"
	jq_check "$TMP/att.json" '.launches > 0 and .cost.stops < 50' "attach: launches counted without a stop each"
	jq_check "$TMP/att.json" '(.kernels | map(.launches) | max - min) <= 2' \
		"attach: ring_a and ring_b counted alike (each round launches both)"
	touch "$TMP/stop"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "attach: the program exits 0"
	expect_match "$(cat "$TMP/att.out")" 'failures=0$' "attach: every launch succeeded"

	# --- 5. SIGKILL ------------------------------------------------------------------------
	rm -f "$TMP/go" "$TMP/stop"
	rb_spawn kil env RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop" RB_PAUSE_US=1000 RB_CALLS=1 \
		SIMCUDA_SYNC_US=200 "$P" 2 0
	touch "$TMP/go"
	wait_for_line "$TMP/kil.out" '^ring_loop: running$' 20 || note "ring_loop did not say running"
	code_of "$TARGET" "$TMP/kil-before.code"
	rb_gputop_bg kilg -p "$TARGET" -b -d 0.1
	rb_wait_attached kilg
	jumps_in "$TARGET" "$TMP/kil-before.code" "$TMP/kil-during.code"
	wait_ring_a "$TMP/kilg.out"	# it traced launches for a while
	kill -KILL "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 20
	# the watchdog's turn: it says when it is done (its stderr is gputop's)
	wait_for_line "$TMP/kilg.err" 'watchdog: gputop died' 20 || note "the watchdog said nothing in 20 s"
	expect_running "$TARGET" "SIGKILL: the program runs on"
	code_of "$TARGET" "$TMP/kil-after.code"
	left=$(cmp -l "$TMP/kil-before.code" "$TMP/kil-after.code" | awk '$3 == 351' | wc -l)
	expect_eq "$((left >= 2))" 1 "SIGKILL: the jumps stay (the stub works without gputop)"
	# Another gputop puts the entries back and traces the launches as the first did.
	rb_gputop_bg kil2 -p "$TARGET" --json "$TMP/kil2.json" -b -d 0.1
	rb_wait_attached kil2
	wait_ring_a "$TMP/kil2.out"
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 20
	expect_eq "$WAIT_STATUS" 0 "after SIGKILL: a new gputop attaches and detaches, status 0"
	expect_match "$(cat "$TMP/kil2.err")" 'an earlier gputop left' "after SIGKILL: it says it put the entries back"
	jq_check "$TMP/kil2.json" '.cost.stops_per_launch == 0 and ([.kernels[] | select(.name == "ring_a(int*)")] | length) == 1 and .launches > 0' \
		"after SIGKILL: its launches go through its own ring, named"
	code_of "$TARGET" "$TMP/kil-end.code"
	if cmp -s "$TMP/kil-before.code" "$TMP/kil-end.code"; then
		ok "after SIGKILL and a new session: every byte of libcuda's code is as before"
	else
		not_ok "after SIGKILL and a new session: every byte of libcuda's code is as before"
	fi
	touch "$TMP/stop"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "SIGKILL: the program exits 0"
	expect_match "$(cat "$TMP/kil.out")" 'failures=0$' "SIGKILL: every launch succeeded"
else
	skip "attach and SIGKILL: cannot attach to other processes here"
fi

# --- 6. the call stub: copies, memsets and synchronizes recorded at entry and return ---------
# 4 threads x 2000 rounds of cuMemsetD8Async + cuStreamSynchronize besides the launches. Calls
# per function are exact; so are the memsets' count and bytes with a stop per call
# (GPUTOP_CALL_STUB=0). With the stub, 128 call records may not hold 4 threads' calls between
# two looks: the stub waits for gputop's drain while gputop drains (its heartbeat is fresh), and
# a call that still finds none runs untraced and is counted as lost (.api[].lost): on a loaded
# machine a few may be. What was recorded must then add up exactly: recorded + lost == calls,
# 256 bytes per recorded memset. Never a stop per call.
RB_CALLS=1 run_gputop_json "$TMP/calls.json" -- -- "$P" 4 2000 || bail "a summary to check"
expect_eq "$(prog_lines "$GPUTOP_OUT" ring_loop)" "ring_loop: launches=16000 calls=16000 failures=0" "calls: the program's calls all succeed"
RB_CALLS=1 GPUTOP_CALL_STUB=0 run_gputop_json "$TMP/calls0.json" -- -- "$P" 4 2000 || bail "a summary to check"
for F in "$TMP/calls.json" "$TMP/calls0.json"; do
	expect_api "$F" cuMemsetD8Async 8000 0
	expect_api "$F" cuStreamSynchronize 8000 0
done
lost() { echo "(.api[] | select(.name == \"$1\") | .lost)"; }
jq_eq "$TMP/calls0.json" '.memset.calls' 8000 "calls0: 8000 memsets"
jq_eq "$TMP/calls0.json" '.memset.bytes' 2048000 "calls0: 2048000 bytes set"
jq_eq "$TMP/calls0.json" '.synchronize.calls' 8000 "calls0: 8000 synchronizes"
jq_eq "$TMP/calls0.json" '.cost.lost_records' 0 "calls0: nothing lost when every call stops"
jq_check "$TMP/calls.json" ".memset.calls + $(lost cuMemsetD8Async) == 8000" "calls: memsets recorded + lost = 8000"
jq_check "$TMP/calls.json" '.memset.bytes == 256 * .memset.calls' "calls: 256 bytes per recorded memset"
jq_check "$TMP/calls.json" ".synchronize.calls + $(lost cuStreamSynchronize) == 8000" "calls: synchronizes recorded + lost = 8000"
note "lost records: $(jq '.cost.lost_records' "$TMP/calls.json")"
jq_check "$TMP/calls0.json" '.cost.stops >= 16000' "calls, GPUTOP_CALL_STUB=0: a stop per call"
jq_check "$TMP/calls.json" '.cost.stops < 4000' "calls: far fewer stops than calls"

# The SIMULATED runtime over the driver: the runtime's copies and memsets reach the driver's,
# which must not be counted again (a call made inside a traced call is part of it).
need_bin basic sim/libcudart.so.13
export LD_LIBRARY_PATH=$SIM:$SIMDRV
run_gputop_json "$TMP/layered.json" -- -- "$BIN/basic" 2 || bail "a summary to check"
GPUTOP_CALL_STUB=0 run_gputop_json "$TMP/layered0.json" -- -- "$BIN/basic" 2 || bail "a summary to check"
fig='[[.api[] | {name, calls, errors}], [.transfers[] | {kind, calls, bytes}], (.memset | {calls, bytes}), .synchronize.calls]'
expect_eq "$(jq -c "$fig" "$TMP/layered.json")" "$(jq -c "$fig" "$TMP/layered0.json")" \
	"layered: the same figures with the call stub as with a stop per call"
jq_check "$TMP/layered.json" "[.api[] | select(.layer == \"driver\" and (.name | test(\"Memcpy|Memset\")))] | length == 0" \
	"layered: no driver copy or memset counted on its own"
jq_check "$TMP/layered.json" ".cost.stops < $(jq .cost.stops "$TMP/layered0.json")" \
	"layered: fewer stops with the call stub"
export LD_LIBRARY_PATH=$SIMDRV

# --- 7. fork and exec with the ring (the SIMULATED runtime over the simulated driver) ------------
# A forked child gets libcuda's own bytes back (the int3 of its first launch of a kernel would
# kill it), and is then followed with a ring of its own (or let go: --no-follow); an exec'd
# image gets a ring of its own.
need_bin rb_fork basic sim/libcudart.so.13
export LD_LIBRARY_PATH=$SIM:$SIMDRV
OK='rb_fork: failures=0 mismatches=0'
rb_same fork 0 "rb_fork: child status=0\n$OK" -- "$BIN/rb_fork" fork 3
jq_eq "$TMP/fork.json" '.cost.stops_per_launch' 0 "fork: the parent's launches go through the ring"
jq '.processes[0]' "$TMP/fork.json" >"$TMP/fork.parent.json"
jq '.processes[1]' "$TMP/fork.json" >"$TMP/fork.child.json"
expect_kernel "$TMP/fork.parent.json" fork_kernel 4 '[2,1,1]' '[64,1,1]'
expect_kernel "$TMP/fork.child.json" fork_kernel 3 '[2,1,1]' '[64,1,1]'
jq_check "$TMP/fork.child.json" '.cost.stops <= 1' \
	"fork: the followed child's launches go through its own ring (a stop at most: naming its kernel)"
rb_same fork-nofollow 0 "rb_fork: child status=0\n$OK" --no-follow -- "$BIN/rb_fork" fork 3
expect_kernel "$TMP/fork-nofollow.json" fork_kernel 4 '[2,1,1]' '[64,1,1]'
SIMCUDA_SYNC_US=300 rb_same fork-threads 0 "rb_fork: children=20 ok=20 sync_failures=0\n$OK" -- "$BIN/rb_fork" fork-threads
jq '.processes[0]' "$TMP/fork-threads.json" >"$TMP/fork-threads.parent.json"
expect_kernel "$TMP/fork-threads.parent.json" fork_kernel 20 '[2,1,1]' '[64,1,1]'
rb_same exec 0 "$OK\nbasic: ok iterations=2" -- "$BIN/rb_fork" exec "$BIN/basic" 2
jq_eq "$TMP/exec.json" '.cost.stops_per_launch' 0 "exec: the new image's launches go through its own ring"
jq_check "$TMP/exec.json" '[.kernels[] | select(.name == "fork_kernel")][0].launches == 2' \
	"exec: the old image's 2 launches, read before the exec"
finish
