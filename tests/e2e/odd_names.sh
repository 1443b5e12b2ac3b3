#!/usr/bin/env bash
# Issue 26, part 1: names gputop does not control — a program whose file name has byte 0xFF,
# kernels whose names hold quotes, backslashes, ';', control characters, UTF-8 and bytes that
# are not — leave every output readable by a strict parser: --json, --timeline and --folded
# (tests/e2e/odd_names_check.py: python3's json on strictly decoded UTF-8, each ill-formed part
# as U+FFFD), /metrics (the OpenMetrics parser of python3-prometheus-client, and promtool).
# One run of tests/progs/odd_names.c on the SIMULATED driver, scraped while it waits.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin odd_names simdrv/libcuda.so.1
need_gputop
need_metrics_tools
command -v promtool >/dev/null || bail "promtool is installed (Debian's prometheus package)"
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	bail "python3-prometheus-client is installed (scripts/install-deps installs it)"

PROG=$TMP/$'odd\xff_names'
cp "$BIN/odd_names" "$PROG" || bail "a copy of odd_names named with byte 0xFF"
rm -f "$TMP/stop"
RB_STOP_FILE=$TMP/stop LD_LIBRARY_PATH=$SIMDRV start_gputop_listening gputop -d 0.2 -o "$TMP/prog.out" \
	--stacks launches --json "$TMP/summary.json" --timeline "$TMP/timeline.json" \
	--folded "$TMP/launches.folded" --folded-metric launches -- "$PROG" || bail "gputop listens"
wait_for_metric "$GPORT" 'gputop_launches_total{pid="' 14 60 && ok "/metrics: 14 launches" ||
	not_ok "/metrics: 14 launches (last: '$(metric_value "$SCRAPED" 'gputop_launches_total{pid="')')"
printf '%s\n' "$SCRAPED" >"$TMP/metrics.prom"
scrape "$GPORT" 'application/openmetrics-text;version=1.0.0' >"$TMP/metrics.om"
touch "$TMP/stop"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "gputop ends with the program's status, 0"
expect_match "$(cat "$TMP/prog.out")" '^odd_names: kernels=7 launches=14 failures=0$' "odd_names: every call succeeded"

"$ROOT/tests/e2e/metrics_om_check.py" "$TMP/metrics.om" >"$TMP/om.families" 2>"$TMP/om.err" &&
	ok "/metrics: the OpenMetrics parser accepts it" ||
	{ not_ok "/metrics: the OpenMetrics parser accepts it"; sed 's/^/#   /' "$TMP/om.err"; }
promtool check metrics <"$TMP/metrics.prom" >"$TMP/promtool.out" 2>&1 && ok "/metrics: promtool accepts the text format" ||
	{ not_ok "/metrics: promtool accepts the text format"; sed 's/^/#   /' "$TMP/promtool.out" | head -20; }
expect_eq "$(grep '^gputop_kernel_launches_total{' "$TMP/metrics.prom" | grep -vc '"(other kernels)"')" 7 \
	"/metrics: a series per kernel"
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8", errors="strict").read()' "$TMP/metrics.om" 2>/dev/null &&
	ok "/metrics: strict UTF-8" || not_ok "/metrics: strict UTF-8"

python3 "$ROOT/tests/e2e/odd_names_check.py" "$TMP/prog.out" "$PROG" "$TMP/summary.json" "$TMP/timeline.json" \
	"$TMP/launches.folded" >"$TMP/check.out" 2>&1
status=$?
cat "$TMP/check.out"
CHECKS=$((CHECKS + $(grep -c '^ok - \|^not ok - ' "$TMP/check.out")))
FAILED=$((FAILED + $(grep -c '^not ok - ' "$TMP/check.out")))
[ "$status" -eq 0 ] || grep -q '^not ok - ' "$TMP/check.out" || not_ok "odd_names_check.py ran (status $status)"
python3 "$ROOT/tests/consumers/trace_event_check.py" "$TMP/timeline.json" >/dev/null 2>"$TMP/strict.err" &&
	ok "--timeline: the strict trace event check passes" ||
	{ not_ok "--timeline: the strict trace event check passes"; sed 's/^/#   /' "$TMP/strict.err"; }
finish
