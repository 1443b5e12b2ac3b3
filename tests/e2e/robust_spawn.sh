#!/usr/bin/env bash
# Robustness, threads made while a followed process is probed. gputop -- sh -c '...' follows the
# shell's children; one without CUDA at its exec is probed once CUDA shows in its maps, after
# every thread of it was brought to a stop. Threads made meanwhile must be stopped too,
# whichever of a new thread's first stop and its creator's clone event comes first: before the
# fix a new thread whose first stop came first was let run, its creator was held in its clone
# event, and gputop waited for a stop of the new thread that never came (it waited for its
# creator): the process and gputop hung for good (found on the H200 by scripts/gpu-many, 8
# PyTorch processes under one gputop: 5 of 25 runs; here 10 of 10 runs of the loop below).
# Program: tests/progs/rb_spawn.c (4 threads making threads that wait for their creator, while
# the main thread dlopens the SIMULATED runtime).
#  SPAWN_RUNS (default 3) runs of 8 such processes: each probed (gputop's debug log says so),
#  then let finish: each ends with its output, gputop with status 0, and the one cudaMalloc
#  each makes after the probes is counted: 8.
source "$(dirname "$0")/../lib.sh"
need_bin rb_spawn sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
RUNS=${SPAWN_RUNS:-3}

for run in $(seq "$RUNS"); do
	stop=$TMP/stop$run
	GPUTOP_DEBUG=1 "$GPUTOP" -q --json "$TMP/spawn$run.json" -- sh -c \
		'for i in 1 2 3 4 5 6 7 8; do "$0" "$1" 4 & done; wait' "$BIN/rb_spawn" "$stop" \
		>"$TMP/spawn$run.out" 2>"$TMP/spawn$run.err" &
	g=$!
	probed=0
	for _ in $(seq 600); do	# the shell and the 8, each probed: 9 lines
		probed=$(grep -c 'probes planted' "$TMP/spawn$run.err")
		[ "$probed" -ge 9 ] && break
		sleep 0.05
	done
	touch "$stop"
	expect_eq "$probed" 9 "run $run: the shell and the 8 processes probed while they made threads"
	wait_pid "$g" 60
	expect_eq "$WAIT_STATUS" 0 "run $run: gputop ends (status 0, the shell's)"
	expect_eq "$(grep -c '^rb_spawn: cuda=0$' "$TMP/spawn$run.out")" 8 "run $run: the 8 processes ended, their calls made"
	jq_eq "$TMP/spawn$run.json" "$(api_row cudaMalloc).calls" 8 "run $run: the cudaMalloc each made after its probes, counted"
	if [ "$WAIT_STATUS" != 0 ]; then	# let a held program go: gputop is gone (killed)
		sleep 1
		pkill -KILL -f "$BIN/rb_spawn" 2>/dev/null
	fi
done
finish
