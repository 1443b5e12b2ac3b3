#!/usr/bin/env bash
# Time measured by gputop: on the SIMULATED runtime a copy of n bytes lasts n / (SIMCUDA_GBPS*1e9)
# seconds and a synchronize call SIMCUDA_SYNC_US microseconds (busy-waits until a deadline), so
# gputop's GB/s and its time blocked in synchronize calls must come out within 20% of those (the
# tracer's own stops are meant to be subtracted). A busy machine can only make the times longer
# (preemption), never shorter: each figure is taken at its best over up to 5 runs.
source "$(dirname "$0")/../lib.sh"
need_bin basic sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM SIMCUDA_GBPS=0.5 SIMCUDA_SYNC_US=2000
# 5 copies of 1 MiB each way at 0.5 GB/s: 2.097 ms each, 10.5 ms in all; 5 x 2 ms synchronizing.
checks() {
	jq_range "$BEST" .d2h_gbps 0.4 0.6 "D2H bandwidth near 0.5 GB/s"
	jq_range "$BEST" .d2h_seconds 0.0084 0.0126 "D2H time near 5 x 2.1 ms"
	jq_range "$BEST" .d2d_gbps 0.4 0.6 "D2D bandwidth near 0.5 GB/s"
	jq_range "$BEST" .d2d_seconds 0.0084 0.0126 "D2D time near 5 x 2.1 ms"
	jq_range "$BEST" .sync_seconds 0.008 0.012 "time blocked in synchronize near 5 x 2 ms"
}

F=$TMP/s.json
BEST=$TMP/best.json
for attempt in 1 2 3 4 5; do
	run_gputop_json "$F" -- -b -- "$BIN/basic" 5 || bail "a summary to check"
	expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
	jq -c "{d2h_gbps: $(xfer_row D2H).gbps, d2h_seconds: $(xfer_row D2H).seconds,
		d2d_gbps: $(xfer_row D2D).gbps, d2d_seconds: $(xfer_row D2D).seconds,
		sync_seconds: .synchronize.seconds}" "$F" >>"$TMP/runs.jsonl"
	note "run $attempt: $(tail -n 1 "$TMP/runs.jsonl")"
	jq -s '{d2h_gbps: (map(.d2h_gbps) | max), d2h_seconds: (map(.d2h_seconds) | min),
		d2d_gbps: (map(.d2d_gbps) | max), d2d_seconds: (map(.d2d_seconds) | min),
		sync_seconds: (map(.sync_seconds) | min)}' "$TMP/runs.jsonl" >"$BEST"
	# a quiet look (subshell: its verdicts are not counted); printed once at the end
	(FAILED=0; checks >/dev/null; [ "$FAILED" -eq 0 ]) && break
done
checks
finish
