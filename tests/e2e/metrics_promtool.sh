#!/usr/bin/env bash
# Issue 14, acceptance 2: what gputop --listen serves is valid for real consumers, for every
# kind of test program (runtime and driver, one and many threads, C++ kernel names, a command
# line with quotes, a newline and bytes that are not UTF-8): `promtool check metrics` accepts
# the Prometheus text, and the OpenMetrics parser of python3-prometheus-client accepts the
# OpenMetrics text. The kernel series stay bounded: fleet_kernels makes 20,000 distinct kernels
# and --metrics-top-kernels 25 gives 25 series plus "(other kernels)", which together hold
# every launch. Programs run on the SIMULATED runtime/driver; each is scraped while it runs
# (it waits for a stop file), once gputop serves the figures of its work.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin fleet_kernels tui_loop ring_loop rb_kernels rb_progress simdrv/libcuda.so.1 sim/libcudart.so.13
need_gputop
need_metrics_tools
command -v promtool >/dev/null || bail "promtool is installed (Debian's prometheus package)"
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	bail "python3-prometheus-client is installed (scripts/install-deps installs it)"
OM='application/openmetrics-text;version=1.0.0'

# check_program NAME LIBRARY_PATH 'sample{labels' VALUE -- PROGRAM ARGS...: gputop --listen
# launches PROGRAM (RB_STOP_FILE=$TMP/stop-NAME); once the first sample whose line starts so has
# VALUE ("+": any above 0), both formats are scraped and checked; then the program is let go.
check_program() {
	local name=$1 libs=$2 key=$3 want=$4
	shift 5
	RB_STOP_FILE=$TMP/stop-$name LD_LIBRARY_PATH=$libs \
		start_gputop_listening "gputop-$name" -d 0.2 -o "$TMP/$name.prog" "$@" ||
		{ not_ok "$name: gputop listens"; return 1; }
	if wait_for_metric "$GPORT" "$key" "$want" 60; then
		ok "$name: $key...} = $want"
	else
		not_ok "$name: $key...} = $want (last: '$(metric_value "$SCRAPED" "$key")')"
	fi
	# A series the checks below want besides (CHECK_ALSO, a regex), once the program made it:
	# the first scrape with a call in it may come before the program's first launch.
	local deadline=$(($(date +%s) + 60))
	until [ -z "${CHECK_ALSO:-}" ] || grep -qE "$CHECK_ALSO" <<<"$SCRAPED" || [ "$(date +%s)" -ge "$deadline" ]; do
		sleep 0.1
		SCRAPED=$(scrape "$GPORT" 2>/dev/null)
	done
	printf '%s\n' "$SCRAPED" >"$TMP/$name.prom"
	scrape "$GPORT" "$OM" >"$TMP/$name.om"
	if promtool check metrics <"$TMP/$name.prom" >"$TMP/$name.promtool" 2>&1; then
		ok "$name: promtool check metrics accepts it ($(grep -vc '^#' "$TMP/$name.prom") samples)"
	else
		not_ok "$name: promtool check metrics"
		sed 's/^/#   /' "$TMP/$name.promtool" | head -20
	fi
	if "$ROOT/tests/e2e/metrics_om_check.py" "$TMP/$name.om" >"$TMP/$name.families" 2>"$TMP/$name.omerr"; then
		ok "$name: the OpenMetrics parser accepts the OpenMetrics text"
	else
		not_ok "$name: the OpenMetrics parser accepts it: $(cat "$TMP/$name.omerr")"
	fi
	touch "$TMP/stop-$name"
	wait_pid "$GPUTOP_PID" 60
	expect_eq "$WAIT_STATUS" 0 "$name: gputop exits with the program's status 0"
}

# 20,000 kernels, 40,000 launches (the driver; each kernel's first launch names it).
check_program many "$SIMDRV" 'gputop_launches_total{pid="' 40000 -- \
	--metrics-top-kernels 25 -- "$BIN/fleet_kernels" 20000 40000
kernel_lines=$(grep '^gputop_kernel_launches_total{' "$TMP/many.prom")
expect_eq "$(wc -l <<<"$kernel_lines")" 26 "many: 20,000 kernels give 25 kernel series + 1"
expect_eq "$(grep -c 'kernel="(other kernels)"' <<<"$kernel_lines")" 1 "many: one (other kernels) series"
expect_eq "$(awk '{ s += $NF } END { print s }' <<<"$kernel_lines")" 40000 \
	"many: the kernel series hold every launch"
expect_eq "$(grep -c '^gputop_kernel_launches_total{' "$TMP/many.om")" 26 "many: the same in OpenMetrics"
series=$(grep -vc '^#' "$TMP/many.prom")
[ "$series" -lt 200 ] && ok "many: $series series in all for 20,000 kernels" || not_ok "many: $series series"

CHECK_ALSO='kernel="tui_demo::zeta_step\(float\*, int\)"' check_program tui "$SIM" 'gputop_api_calls_total{pid="' + -- \
	-- "$BIN/tui_loop" --seconds 120 --stop "$TMP/stop-tui" || true
expect_match "$(cat "$TMP/tui.prom")" 'kernel="tui_demo::zeta_step\(float\*, int\)"' \
	"tui: a C++ kernel name as a label value"

check_program ring "$SIMDRV" 'gputop_api_calls_total{pid="' + -- -- "$BIN/ring_loop" 2 1
check_program kernels "$SIM" 'gputop_launches_total{pid="' 8192 -- -- "$BIN/rb_kernels" 4096 100
RB_LAUNCH=1 check_program threads "$SIM" 'gputop_launches_total{pid="' + -- -- "$BIN/rb_progress" 3 0

# A command line with a quote, a backslash, a newline and bytes that are not UTF-8.
check_program odd "$SIMDRV" 'gputop_launches_total{pid="' 10 -- \
	-- "$BIN/fleet_kernels" 2 10 'say "hi"' 'back\slash' $'new\nline' $'bad\xff\xfeutf8'
expect_match "$(grep '^gputop_process_info' "$TMP/odd.prom")" \
	'command=".*fleet_kernels 2 10 say \\"hi\\" back\\\\slash new\\nline bad'$'\xef\xbf\xbd\xef\xbf\xbd''utf8"' \
	"odd: the command label escaped, bytes that are not UTF-8 as U+FFFD (utf8.h, as every output)"
# Two processes at once (-p A,B; ranks and jobs from their environment): a set of series each,
# labelled with its pid, rank, local rank and job (torchrun's TORCHELASTIC_RUN_ID, else Slurm's
# SLURM_JOB_ID; torchrun's "none" is no id), then where gputop runs (hostname, and the pod of
# GPUTOP_POD_*, as the Kubernetes sidecar sets them), each holding exactly its own launches, in
# one family block per metric.
if can_attach_to_others; then
	export LD_LIBRARY_PATH=$SIMDRV RB_GO_FILE=$TMP/go-mp RB_STOP_FILE=$TMP/stop-mp
	RANK=3 LOCAL_RANK=1 TORCHELASTIC_RUN_ID=job-e2e SLURM_JOB_ID=77 spawn "$TMP/mp1" "$BIN/fleet_kernels" 2 100
	A=$SPAWNED_PID
	RANK=5 TORCHELASTIC_RUN_ID=none SLURM_JOB_ID=4242 spawn "$TMP/mp2" "$BIN/fleet_kernels" 3 250
	B=$SPAWNED_PID
	unset RB_GO_FILE RB_STOP_FILE
	wait_for_line "$TMP/mp1.out" '^ready' 30 && wait_for_line "$TMP/mp2.out" '^ready' 30 || bail "two programs ready"
	GPUTOP_POD_NAME=train-0 GPUTOP_POD_NAMESPACE=ml GPUTOP_NODE_NAME=node-7 \
		start_gputop_listening gputop-mp -d 0.2 --json "$TMP/mp.json" -p "$A,$B" || bail "gputop -p $A,$B listens"
	where="hostname=\"$(uname -n)\",k8s_namespace=\"ml\",k8s_pod=\"train-0\",k8s_node=\"node-7\""
	wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$B\"" 0 30 || bail "both processes attached"
	touch "$TMP/go-mp"
	wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$A\",rank=\"3\",local_rank=\"1\",job_id=\"job-e2e\",$where}" 100 30 &&
		ok "two processes: $A (rank 3, local rank 1, job job-e2e) has its own 100 launches" ||
		not_ok "two processes: $A (rank 3, local rank 1, job job-e2e, $where): 100 launches"
	wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$B\",rank=\"5\",job_id=\"4242\",$where}" 250 30 &&
		ok "two processes: $B (rank 5, Slurm job 4242) has its own 250 launches" ||
		not_ok "two processes: $B (rank 5, Slurm job 4242, $where): 250 launches"
	printf '%s\n' "$SCRAPED" >"$TMP/mp.prom"
	scrape "$GPORT" "$OM" >"$TMP/mp.om"
	promtool check metrics <"$TMP/mp.prom" >/dev/null 2>&1 && ok "two processes: promtool accepts it" ||
		not_ok "two processes: promtool accepts it"
	"$ROOT/tests/e2e/metrics_om_check.py" "$TMP/mp.om" >/dev/null 2>&1 && ok "two processes: the OpenMetrics parser accepts it" ||
		not_ok "two processes: the OpenMetrics parser accepts it"
	expect_eq "$(grep -c '^# TYPE gputop_launches counter' "$TMP/mp.om")" 1 "two processes: one family block"
	expect_eq "$(grep -c "^gputop_cpu_seconds_total{$where} " "$TMP/mp.om")" 1 \
		"two processes: gputop's CPU time once, for the session, with the session's labels only"
	touch "$TMP/stop-mp"
	wait_pid "$GPUTOP_PID" 60
	expect_eq "$WAIT_STATUS" 0 "two processes: gputop exits 0 once both have ended"
	jq_eq "$TMP/mp.json" "[.processes[] | {pid, job_id}] | sort_by(.pid)" \
		"$(jq -cn --argjson a "$A" --argjson b "$B" '[{pid: $a, job_id: "job-e2e"}, {pid: $b, job_id: "4242"}] | sort_by(.pid)')" \
		"two processes: --json gives each its job id, as the metrics do"
else
	note "two processes: skipped (this user may not ptrace other processes)"
fi
finish
