#!/usr/bin/env bash
# Issue 34, item 4: the job's gauges on /metrics (--listen), read by a real Prometheus server
# (Debian's `prometheus`). 4 ranks of tests/progs/py_job.py on the SIMULATED runtime and NCCL;
# rank 1 sleeps 30 ms before each collective (PY_JOB_SLOW_MS), the others wait for it inside
# ncclAllReduce; gputop -q --listen attaches to the running job:
#  - the text is valid OpenMetrics (the strict parser of python3-prometheus-client), with the
#    families gputop_job_wait_ratio (UNIT ratio), gputop_job_calls_in_flight,
#    gputop_job_oldest_call_seconds and gputop_job_odd_one_out;
#  - Prometheus: rank 1's gputop_job_odd_one_out{reason="waits least"} is 1, and it is the only
#    rank so marked; its wait ratio is 0.2 or more below every other rank's;
#  - then rank 1 hangs in Python (PY_JOB_HANG's file): each other rank has 1 call in flight at
#    least 10 s old (gputop_job_calls_in_flight{min_age_seconds="10"}) and its oldest call over
#    10 s, rank 1 none in flight; rank 1 is marked "not waiting" and "another line" (held 2 s).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_metrics_tools
need_bin sim/libcudart.so.13 simnccl/libnccl.so.2
need_gputop
command -v prometheus >/dev/null || bail "prometheus is installed (scripts/install-deps installs it)"
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "Debian's /usr/bin/python3.11 is not installed"
can_attach_to_others || skip "ptrace_scope forbids attaching to a process that is not a child"
PROG=$ROOT/tests/progs/py_job.py
N=4 ODD=1 ITER=1000000
D=$TMP/job
mkdir -p "$D"
JOB_PIDS=()
for ((r = 0; r < N; r++)); do
	RANK=$r WORLD_SIZE=$N NCCL_SIM_JOB=$D/job PY_JOB_SLOW_MS=30 PY_JOB_HANG=$D/hang LD_LIBRARY_PATH=$SIM:$BIN/simnccl \
		spawn "$D/r$r" "$PY" "$PROG" "$SIM/libcudart.so.13" "$BIN/simnccl/libnccl.so.2" \
		$r $N $ITER $ODD $ITER "$D/go" "$D/stop"
	JOB_PIDS+=("$SPAWNED_PID")
done
for ((r = 0; r < N; r++)); do
	wait_for_line "$D/r$r.out" '^ready' 60 || bail "rank $r is ready: $(cat "$D/r$r.err")"
done
touch "$D/go"
ODD_PID=${JOB_PIDS[$ODD]}
pids=$(IFS=,; echo "${JOB_PIDS[*]}")

# wait_for_sample PREFIX LABEL VALUE TIMEOUT: polls /metrics until the sample that starts with
# PREFIX and has LABEL (the session's labels come between) has VALUE.
wait_for_sample() {
	local deadline=$(($(date +%s) + $4)) got
	while :; do
		got=$(scrape "$GPORT" 2>/dev/null | awk -v a="$1" -v b="$2" 'index($0, a) == 1 && index($0, b) { print $NF; exit }')
		[ "$got" == "$3" ] && return 0
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}

start_gputop_listening gputop -d 0.25 -p "$pids" || bail "gputop listens (stderr: $(head -c 400 "$TMP/gputop.err"))"
wait_for_sample "gputop_job_odd_one_out{pid=\"$ODD_PID\",rank=\"$ODD\"," 'reason="waits least"' 1 60 ||
	bail "rank $ODD's gputop_job_odd_one_out{reason=\"waits least\"} comes to 1 on /metrics"
ok "/metrics: rank $ODD marked \"waits least\""
scrape "$GPORT" 'application/openmetrics-text; version=1.0.0' >"$TMP/om.txt"
if "$ROOT/tests/e2e/metrics_om_check.py" "$TMP/om.txt" >"$TMP/om.families" 2>"$TMP/om.err"; then
	ok "the OpenMetrics text parses (strict parser)"
else
	not_ok "the OpenMetrics text parses: $(cat "$TMP/om.err")"
fi
expect_match "$(cat "$TMP/om.families")" "gputop_job_wait_ratio gauge $N" "gputop_job_wait_ratio: a gauge, a sample per rank"
expect_match "$(cat "$TMP/om.families")" "gputop_job_calls_in_flight gauge $((4 * N))" \
	"gputop_job_calls_in_flight: a gauge, 4 ages per rank"
expect_match "$(cat "$TMP/om.families")" "gputop_job_oldest_call_seconds gauge $N" "gputop_job_oldest_call_seconds: a gauge"
expect_match "$(cat "$TMP/om.families")" "gputop_job_odd_one_out gauge $((4 * N))" "gputop_job_odd_one_out: a gauge, 4 reasons per rank"
expect_match "$(grep -A2 '^# TYPE gputop_job_wait_ratio ' "$TMP/om.txt")" "# UNIT gputop_job_wait_ratio ratio" "its UNIT: ratio"

start_prometheus "$GPORT" || bail "Prometheus started (log: $(tail -c 600 "$TMP/prometheus.err"))"
q="gputop_job_odd_one_out{pid=\"$ODD_PID\",reason=\"waits least\"}"
wait_for_prom "$q" 1 60 && ok "Prometheus: $q = 1" || not_ok "Prometheus: $q = 1 (last: '$PROM_VALUE')"
expect_eq "$(prom_query 'sum(gputop_job_odd_one_out{reason="waits least"})')" 1 "Prometheus: one rank waits least"
odd_ratio=$(prom_query "gputop_job_wait_ratio{pid=\"$ODD_PID\"}")
others_min=$(prom_query "min(gputop_job_wait_ratio{pid!=\"$ODD_PID\"})")
note "wait ratio: rank $ODD $odd_ratio, the others at least $others_min"
awk -v a="$odd_ratio" -v b="$others_min" 'BEGIN { exit !(a != "" && b != "" && b >= a + 0.2) }' &&
	ok "Prometheus: every other rank's wait ratio is 0.2 or more above rank $ODD's" ||
	not_ok "Prometheus: every other rank's wait ratio is 0.2 or more above rank $ODD's ($odd_ratio, $others_min)"

# The hang: rank ODD waits in Python, the others inside their ncclAllReduce.
touch "$D/hang"
wait_for_line "$D/r$ODD.out" '^straggling' 60 || bail "rank $ODD hangs"
q='count(gputop_job_calls_in_flight{min_age_seconds="10"} == 1)'
wait_for_prom "$q" $((N - 1)) 90 && ok "Prometheus: the $((N - 1)) other ranks each have a call in flight 10 s old or more" ||
	not_ok "Prometheus: $q = $((N - 1)) (last: '$PROM_VALUE')"
expect_eq "$(prom_query "gputop_job_calls_in_flight{pid=\"$ODD_PID\",min_age_seconds=\"0\"}")" 0 \
	"Prometheus: rank $ODD has no call in flight"
expect_eq "$(prom_query "count(gputop_job_oldest_call_seconds{pid!=\"$ODD_PID\"} > 10)")" $((N - 1)) \
	"Prometheus: the others' oldest call in flight is over 10 s old"
for reason in "not waiting" "another line"; do
	q="gputop_job_odd_one_out{pid=\"$ODD_PID\",reason=\"$reason\"}"
	wait_for_prom "$q" 1 30 && ok "Prometheus: rank $ODD $reason" || not_ok "Prometheus: $q = 1 (last: '$PROM_VALUE')"
done
expect_eq "$(prom_query "sum(gputop_job_odd_one_out{pid!=\"$ODD_PID\"})")" 0 "Prometheus: no other rank marked"
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "gputop detaches on SIGTERM, status 0"
touch "$D/stop"
finish
