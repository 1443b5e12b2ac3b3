#!/usr/bin/env bash
# Issue 14, acceptance 1: a real Prometheus server (Debian's `prometheus`, started here on a free
# port) scrapes `gputop -q --listen 127.0.0.1:PORT -p PID` attached to a running program
# (fleet_kernels on the SIMULATED libcuda.so.1), in OpenMetrics (Prometheus asks for it). Its
# HTTP API must then give exactly the program's own figures: its launch count (in all, and
# summed over the kernel series) and its live device bytes; the scrape target is healthy.
# The program's figures come from its own output; nothing is hard-coded but the work it is told
# to do.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin fleet_kernels simdrv/libcuda.so.1
need_gputop
need_metrics_tools
command -v prometheus >/dev/null || bail "prometheus is installed (scripts/install-deps installs it)"
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIMDRV

# The program waits for the go file, works, says what it did, then waits for the stop file.
# It is rank 0 of job prom-job (the dashboard's variables list them).
RB_GO_FILE=$TMP/go RB_STOP_FILE=$TMP/stop RANK=0 TORCHELASTIC_RUN_ID=prom-job \
	spawn "$TMP/prog" "$BIN/fleet_kernels" 3 30000
PROG=$SPAWNED_PID
wait_for_line "$TMP/prog.out" '^ready [0-9]+$' 30 || bail "the program said ready"

start_gputop_listening gputop -d 0.2 --json "$TMP/end.json" -p "$PROG" ||
	bail "gputop listens (stderr: $(head -c 400 "$TMP/gputop.err"))"
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$PROG\"," 0 30 ||
	bail "gputop serves the attached program's figures (pid=\"$PROG\")"
ok "gputop serves the figures of $PROG on 127.0.0.1:$GPORT"

start_prometheus "$GPORT" || bail "Prometheus started (log: $(tail -c 600 "$TMP/prometheus.err"))"
ok "Prometheus ready on 127.0.0.1:$PPORT, scraping 127.0.0.1:$GPORT"

touch "$TMP/go"
wait_for_line "$TMP/prog.out" '^fleet_kernels: ' 60 || bail "the program did its work"
line=$(prog_lines "$TMP/prog.out" fleet_kernels)
expect_match "$line" 'failures=0$' "the program's calls all succeed"
LAUNCHES=$(sed -nE 's/.* launches=([0-9]+) .*/\1/p' <<<"$line")
LIVE=$(sed -nE 's/.* live_bytes=([0-9]+) .*/\1/p' <<<"$line")
note "the program's own account: $LAUNCHES launches, $LIVE bytes live"

sel="pid=\"$PROG\""
if wait_for_prom "gputop_launches_total{$sel}" "$LAUNCHES" 60; then
	ok "Prometheus: gputop_launches_total{$sel} = the program's $LAUNCHES launches"
else
	not_ok "Prometheus: gputop_launches_total{$sel} = $LAUNCHES (last answer: '$PROM_VALUE')"
fi
expect_eq "$(prom_query "sum(gputop_kernel_launches_total{$sel})")" "$LAUNCHES" \
	"Prometheus: the kernel series add up to the same launches"
expect_eq "$(prom_query "count(gputop_kernel_launches_total{$sel})")" 4 \
	"Prometheus: one series per kernel (3) and one for (other kernels)"
expect_eq "$(prom_query "sum(gputop_live_bytes{$sel,kind=\"device\"})")" "$LIVE" \
	"Prometheus: gputop_live_bytes of kind device = the program's $LIVE live bytes"
expect_eq "$(prom_query "gputop_api_calls_total{$sel,api=\"cuMemAlloc_v2\"}")" 4 \
	"Prometheus: 4 cuMemAlloc_v2 calls"
expect_eq "$(prom_query "up{job=\"gputop\"}")" 1 "Prometheus: the target is up"
health=$(curl -sS "http://127.0.0.1:$PPORT/api/v1/targets" | jq -r '.data.activeTargets[0] | "\(.health) \(.lastError)"')
expect_eq "$health" "up " "Prometheus: the last scrape was healthy, without an error"
# UNIT and the info type exist only in OpenMetrics: Prometheus parsed that format.
meta=$(curl -sS "http://127.0.0.1:$PPORT/api/v1/metadata" |
	jq -r '"\(.data.gputop_api_seconds[0].unit) \(.data.gputop_process[0].type)"')
expect_eq "$meta" "seconds info" "Prometheus read OpenMetrics (a UNIT, an info family)"

# The Grafana dashboard (contrib/grafana): every query of it is valid PromQL on this data, names
# metric families gputop serves, and those without a "> 0" filter give series, with its job
# and rank variables at "All" and at this process's job and rank; the variables list them.
DASH=$ROOT/contrib/grafana/gputop-dashboard.json
families=$(curl -sS "http://127.0.0.1:$PPORT/api/v1/metadata" | jq -r '.data | keys[]')
n=0
while read -r expr; do
	n=$((n + 1))
	if [ $((n % 2)) -eq 0 ]; then
		q=${expr//\$job_id/.*}
		q=${q//\$rank/.*}
	else
		q=${expr//\$job_id/prom-job}
		q=${q//\$rank/0}
	fi
	q=${q//\$__rate_interval/10s}
	# rate() needs two samples in its window: on a loaded machine the scrapes may lag, so ask
	# again (for 30 s at most) until a query that should give series does.
	for try in $(seq 60); do
		answer=$(curl -sS --data-urlencode "query=$q" "http://127.0.0.1:$PPORT/api/v1/query")
		status=$(jq -r '.status' <<<"$answer")
		results=$(jq -r '.data.result | length' <<<"$answer")
		[ "$status" != success ] || [[ $expr == *"> 0"* ]] || [ "$results" -gt 0 ] && break
		sleep 0.5
	done
	if [ "$status" != success ]; then
		not_ok "dashboard query $n is valid: $expr ($(jq -r '.error' <<<"$answer"))"
	elif [[ $expr != *"> 0"* ]] && [ "$results" -eq 0 ]; then
		not_ok "dashboard query $n gives series: $expr"
	else
		ok "dashboard query $n: $status, $results series"
	fi
	for name in $(grep -oE 'gputop_[a-z_]+' <<<"$expr"); do
		grep -qx "${name%_total}" <<<"$families" || not_ok "dashboard query $n: gputop serves ${name%_total}"
	done
done < <(jq -r '.panels[].targets[].expr' "$DASH")
[ "$n" -ge 10 ] && ok "the dashboard has $n queries" || not_ok "the dashboard has queries ($n)"
label_values() {	# label_values(gputop_process_info, LABEL), as Grafana asks Prometheus
	curl -sS -G --data-urlencode 'match[]=gputop_process_info' "http://127.0.0.1:$PPORT/api/v1/label/$1/values" |
		jq -r '.data | join(",")'
}
expect_eq "$(label_values job_id)" prom-job "the dashboard's job variable (label_values(gputop_process_info, job_id)) lists prom-job"
expect_eq "$(label_values rank)" 0 "the dashboard's rank variable lists rank 0"

# The program ends: gputop with it, and its summary has the same figures.
touch "$TMP/stop"
wait_pid "$PROG" 60
expect_eq "$WAIT_STATUS" 0 "the program exits with status 0"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "gputop exits with status 0 when the program has ended"
jq_eq "$TMP/end.json" '.launches' "$LAUNCHES" "gputop's own summary: the same $LAUNCHES launches"
finish
