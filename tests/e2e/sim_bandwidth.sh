#!/usr/bin/env bash
# Time measured by gputop: on the SIMULATED runtime a copy of n bytes lasts at least
# n / (SIMCUDA_GBPS*1e9) seconds and a synchronize call at least SIMCUDA_SYNC_US microseconds
# (busy-waits until a deadline), and the runtime keeps its own account of how long each of its
# copies and synchronize calls really lasted, measured inside the call (SIMCUDA_TIMES,
# tests/sim/simmem.h). gputop's time per direction and its time blocked in synchronize calls
# must come out within 20% of that account, and its GB/s within 20% of the bytes over that
# account's time (the tracer's own stops are meant to be subtracted: a figure with them in, or
# with the time stamp counter misread, is off by more).
#
# Why these bounds hold on a loaded machine: a busy machine can only make a call longer
# (preemption), never shorter. The model's figures are therefore used only as bounds that load
# cannot break: the runtime's own time is at least the model's (5 x 2.097 ms per direction,
# 5 x 2 ms synchronizing) and gputop's GB/s at most the model's 0.5 GB/s (+20%). The two-sided
# comparison is with the runtime's own time of the same run, which grows with gputop's when the
# program is preempted inside a call: they differ only by what happens between gputop's time
# stamps and the runtime's (a few instructions, or gputop's stops where the time stamp counter
# cannot be used), so a preemption must land in that gap to break it. Each figure is taken from
# the best of up to 5 runs, so it would have to land there in every run. (It was compared with
# the model's time before, and failed on a busy machine: D2D 13.07 ms against at most 12.6.)
source "$(dirname "$0")/../lib.sh"
need_bin basic sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM SIMCUDA_GBPS=0.5 SIMCUDA_SYNC_US=2000
MiB=1048576
# 5 copies of 1 MiB each way at 0.5 GB/s: 2.097 ms each, 10.49 ms in all; 5 x 2 ms synchronizing.
COPY_MODEL_S=$(awk -v m=$MiB 'BEGIN { printf "%.6f", 5 * m / 0.5e9 }')
SYNC_MODEL_S=0.010

# checks: on $BEST, one object per figure (the run where gputop and the runtime agree best).
checks() {
	local k
	for k in D2H D2D; do
		jq_eq "$BEST" ".$k.sim_calls" 5 "$k: the runtime made 5 copies"
		jq_eq "$BEST" ".$k.sim_bytes" $((5 * MiB)) "$k: the runtime copied 5 MiB"
		jq_range "$BEST" ".$k.sim_seconds" "$COPY_MODEL_S" 1e9 \
			"$k: the runtime's own time is at least the model's 5 x 2.097 ms"
		jq_range "$BEST" ".$k.ratio" 0.8 1.2 "$k: gputop's time within 20% of the runtime's own"
		jq_range "$BEST" ".$k.gbps_ratio" 0.8 1.2 "$k: gputop's GB/s within 20% of the runtime's own"
		jq_range "$BEST" ".$k.gbps" 0 0.6 "$k: gputop's GB/s at most the model's 0.5 GB/s + 20%"
	done
	jq_eq "$BEST" '.sync.sim_calls' 5 "sync: the runtime had 5 synchronize calls"
	jq_range "$BEST" '.sync.sim_seconds' "$SYNC_MODEL_S" 1e9 \
		"sync: the runtime's own time is at least the model's 5 x 2 ms"
	jq_range "$BEST" '.sync.ratio' 0.8 1.2 "sync: gputop's time blocked within 20% of the runtime's own"
}

F=$TMP/s.json
BEST=$TMP/best.json
for attempt in 1 2 3 4 5; do
	export SIMCUDA_TIMES=$TMP/times.$attempt.jsonl
	run_gputop_json "$F" -- -b -- "$BIN/basic" 5 || bail "a summary to check"
	expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
	jq -e -s 'map(select(.library == "runtime")) | length == 1' "$SIMCUDA_TIMES" >/dev/null 2>&1 ||
		bail "the simulated runtime wrote its own account to SIMCUDA_TIMES (one line)"
	# gputop's figures beside the runtime's own, per figure
	jq -c --slurpfile sim "$SIMCUDA_TIMES" '
		($sim | map(select(.library == "runtime"))[0]) as $s |
		def row($k): (.transfers | map(select(.kind == $k))[0]) // {};
		def fig($g; $o): {seconds: $g.seconds, gbps: $g.gbps, sim_calls: $o.calls,
			sim_bytes: $o.bytes, sim_seconds: $o.seconds,
			ratio: (if $o.seconds > 0 then ($g.seconds // 0) / $o.seconds else null end),
			gbps_ratio: (if $o.seconds > 0 and $o.bytes > 0
				then ($g.gbps // 0) / ($o.bytes / $o.seconds / 1e9) else null end)};
		{D2H: fig(row("D2H"); $s.D2H), D2D: fig(row("D2D"); $s.D2D),
		 sync: fig(.synchronize; $s.sync)}' "$F" >>"$TMP/runs.jsonl"
	note "run $attempt: $(tail -n 1 "$TMP/runs.jsonl")"
	# per figure, the run whose ratio is nearest 1
	jq -s 'def best($k): map(.[$k]) | min_by((.ratio // 1e9) - 1 | fabs);
		{D2H: best("D2H"), D2D: best("D2D"), sync: best("sync")}' "$TMP/runs.jsonl" >"$BEST"
	# a quiet look (subshell: its verdicts are not counted); printed once at the end
	(FAILED=0; checks >/dev/null; [ "$FAILED" -eq 0 ]) && break
done
checks
finish
