#!/usr/bin/env bash
# --linger SECONDS (issue 36): once the tracing ends, gputop goes on serving the last figures
# on --listen that long, so that the scrapes after a short job's end collect its final counters
# (without it the endpoint went away the instant the program exited: a job shorter than a
# scrape interval left no series at all). Program: fleet_kernels on the SIMULATED driver.
#  1. launch mode, a real Prometheus scraping every 500 ms: the program ends; Prometheus still
#     gets process_running 0 and all 100 launches from gputop, which then exits by itself with
#     the program's status once the linger is over, no sooner than it was asked;
#  2. SIGTERM during the linger (a Kubernetes native sidecar gets one as soon as the trainer has
#     ended): gputop serves on; SIGINT (Ctrl-C) ends it at once, with the program's status;
#  3. attach mode, the program ends: the same figures served, gputop exits 0;
#  4. --linger without --listen, or not a number: exit status 2, said; without -q gputop says
#     that it lingers, and for how long.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin fleet_kernels simdrv/libcuda.so.1
need_gputop
need_metrics_tools
command -v prometheus >/dev/null || bail "prometheus is installed (scripts/install-deps installs it)"
command -v jq >/dev/null || bail "jq is installed"
export LD_LIBRARY_PATH=$SIMDRV
LINGER=4

# --- 1. launch mode, with Prometheus --------------------------------------------------------
export RB_GO_FILE=$TMP/go-1
start_gputop_listening l1 --linger "$LINGER" -d 0.2 -- "$BIN/fleet_kernels" 2 100 ||
	bail "gputop listened (stderr: $(head -c 300 "$TMP/l1.err"))"
start_prometheus "$GPORT" || bail "Prometheus became ready"
wait_for_prom "gputop_process_running{job=\"gputop\"}" 1 60 ||
	bail "Prometheus scraped gputop while the program ran (got '$PROM_VALUE')"
touch "$TMP/go-1"
wait_for_line "$TMP/l1.out" 'fleet_kernels: kernels=2 launches=100' 30 || bail "the program did its work"
ended=$(date +%s%N)
wait_for_prom "gputop_process_running{job=\"gputop\"}" 0 20 &&
	ok "Prometheus scraped process_running 0 after the program ended" ||
	not_ok "Prometheus scraped process_running 0 after the program ended (got '$PROM_VALUE')"
wait_for_prom "gputop_launches_total{job=\"gputop\"}" 100 20 &&
	ok "Prometheus has all 100 launches" || not_ok "Prometheus has all 100 launches (got '$PROM_VALUE')"
wait_pid "$GPUTOP_PID" 30
status=$WAIT_STATUS
ms=$((($(date +%s%N) - ended) / 1000000))
expect_eq "$status" 0 "launch mode: gputop exits by itself with the program's status, once the linger is over"
[ "$ms" -ge $((LINGER * 1000 - 1000)) ] && ok "it served at least the linger asked for (${ms} ms after the program's output)" ||
	not_ok "it served at least the linger asked for: ended ${ms} ms after the program's output, $LINGER s asked"
kill "$PROM_PID" 2>/dev/null
unset RB_GO_FILE

# --- 2. SIGTERM does not end it, SIGINT does ----------------------------------------------------
# (SIGINT at its default: bash starts background commands with it ignored, which gputop keeps.)
GPUTOP_REAL=$GPUTOP GPUTOP="$TMP/gputop-sigint"
printf '#!/bin/sh\nexec env --default-signal=INT "%s" "$@"\n' "$GPUTOP_REAL" >"$GPUTOP" && chmod +x "$GPUTOP"
start_gputop_listening l2 --linger 300 -d 0.2 -- "$BIN/fleet_kernels" 2 100 ||
	bail "gputop listened (stderr: $(head -c 300 "$TMP/l2.err"))"
GPUTOP=$GPUTOP_REAL
wait_for_metric "$GPORT" 'gputop_process_running{' 0 30 || bail "gputop lingered after the program's end"
kill -TERM "$GPUTOP_PID"
sleep 0.5
expect_running "$GPUTOP_PID" "SIGTERM during the linger: gputop serves on"
wait_for_metric "$GPORT" 'gputop_launches_total{' 100 10 &&
	ok "SIGTERM: the final figures still served" || not_ok "SIGTERM: the final figures still served"
kill -INT "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 5
expect_eq "$WAIT_STATUS" 0 "SIGINT during the linger: gputop ends at once, with the program's status"

# --- 3. attach mode ---------------------------------------------------------------------------
RB_GO_FILE=$TMP/go-3 spawn "$TMP/p3" "$BIN/fleet_kernels" 2 100
P3=$SPAWNED_PID
wait_for_line "$TMP/p3.out" '^ready [0-9]+$' 30 || bail "the program said ready"
start_gputop_listening l3 --linger "$LINGER" -d 0.2 -p "$P3" || bail "gputop listened (attach)"
wait_for_metric "$GPORT" "gputop_process_running{pid=\"$P3\"," 1 30 || bail "gputop attached to $P3"
touch "$TMP/go-3"
wait_pid "$P3" 30
expect_eq "$WAIT_STATUS" 0 "attach mode: the program ends with status 0"
wait_for_metric "$GPORT" "gputop_process_running{pid=\"$P3\"," 0 10 &&
	ok "attach mode: process_running 0 served after the program ended" ||
	not_ok "attach mode: process_running 0 served after the program ended"
expect_eq "$(metric_value "$SCRAPED" "gputop_launches_total{pid=\"$P3\",")" 100 "attach mode: its 100 launches served"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "attach mode: gputop exits 0 once the linger is over"

# --- 4. bad input -----------------------------------------------------------------------------
"$GPUTOP" -b -n 100 --listen 0 --linger 0.5 -- true >"$TMP/said.out" 2>&1
expect_match "$(cat "$TMP/said.out")" 'serving the last figures on http://127\.0\.0\.1:[0-9]+/metrics for [0-9]+ s more \(Ctrl-C ends it\)' \
	"without -q: it says it lingers, and how to end it"
"$GPUTOP" --linger 3 -- true >"$TMP/bad1.out" 2>&1
expect_eq "$?" 2 "--linger without --listen: exit status 2"
expect_match "$(cat "$TMP/bad1.out")" 'linger is for --listen' "--linger without --listen: said"
"$GPUTOP" --listen 0 --linger soon -- true >"$TMP/bad2.out" 2>&1
expect_eq "$?" 2 "--linger soon: exit status 2"
expect_match "$(cat "$TMP/bad2.out")" "invalid linger 'soon'" "--linger soon: said"
finish
