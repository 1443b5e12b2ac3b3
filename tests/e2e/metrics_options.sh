#!/usr/bin/env bash
# Issue 14: --listen's address, its errors and its HTTP surface.
#  1. Bad arguments: exit status 2 and a message, nothing run. A port already taken, or an
#     address of no interface here: exit status 6 ("cannot listen on ..."), the program not run.
#  2. PORT alone binds 127.0.0.1 (gputop says where, with PORT 0 a free port); the program
#     gputop launches does not inherit the listening socket.
#  3. Only /metrics answers (404 elsewhere, 405 for POST with Allow: GET, HEAD); HEAD has no
#     body; a request with Accept: application/openmetrics-text gets OpenMetrics (# EOF at the
#     end), one without gets the Prometheus text format, each with its Content-Type; the
#     connection is kept alive between requests.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin fleet_kernels simdrv/libcuda.so.1
need_gputop
need_metrics_tools
export LD_LIBRARY_PATH=$SIMDRV

# --- 1. errors ---------------------------------------------------------------------------------
for bad in abc 70000 :9464 127.0.0.1: '[::1]9464' -1; do
	expect_refused "--listen '$bad'" 2 "^gputop: invalid listen address '$(sed 's/[][]/\\&/g' <<<"$bad")'" --listen "$bad"
done
expect_refused "--metrics-top-kernels without --listen" 2 "is for --listen" --metrics-top-kernels 5
expect_refused "--metrics-top-kernels x" 2 "invalid kernel count 'x'" --listen 0 --metrics-top-kernels x

# A port taken by someone else (a listener of python's, held while gputop tries).
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$TMP/holder" &
HOLDER=$!
SPAWNED+=("$HOLDER")
wait_for_line "$TMP/holder" '^[0-9]+$' 30 || bail "a port is held"
taken=$(cat "$TMP/holder")
expect_refused "a port in use" 6 "^gputop: cannot listen on '127.0.0.1:$taken': Address already in use" \
	--listen "127.0.0.1:$taken"
kill "$HOLDER"
expect_refused "an address of no interface here" 6 "^gputop: cannot listen on '192.0.2.1:9464': " \
	--listen 192.0.2.1:9464

# --- 2. PORT alone -------------------------------------------------------------------------------
RB_STOP_FILE=$TMP/stop spawn "$TMP/g" "$GPUTOP" --listen 0 -d 0.2 -o "$TMP/prog.out" -- \
	"$BIN/fleet_kernels" 2 50
G=$SPAWNED_PID
wait_for_line "$TMP/g.err" 'serving metrics on http://' 30 || bail "gputop says where it serves"
where=$(grep -o 'http://[^ ]*' "$TMP/g.err")
expect_match "$where" '^http://127\.0\.0\.1:[1-9][0-9]*/metrics$' "PORT alone listens on 127.0.0.1 ($where)"
GPORT=$(sed -E 's|.*:([0-9]+)/metrics|\1|' <<<"$where")
wait_for_metric "$GPORT" 'gputop_launches_total{' 50 30 || bail "gputop serves the program's 50 launches"
prog=$(sed -nE 's/.*pid="([0-9]+)".*/\1/p' <<<"$(grep '^gputop_launches_total' <<<"$SCRAPED")")
sockets=$(find "/proc/$prog/fd" -lname 'socket:*' 2>/dev/null | wc -l)
expect_eq "$sockets" 0 "the program ($prog) holds no socket: the listening one is not inherited"

# --- 3. HTTP -------------------------------------------------------------------------------------
url=http://127.0.0.1:$GPORT
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect_eq "$(code "$url/")" 404 "GET / is 404"
expect_eq "$(code "$url/metrics/x")" 404 "GET /metrics/x is 404"
expect_eq "$(code "$url/metricsfoo")" 404 "GET /metricsfoo is 404"
expect_eq "$(code -X POST -d x=1 "$url/metrics")" 405 "POST /metrics is 405"
expect_match "$(curl -s -D - -o /dev/null -X POST "$url/metrics")" $'^Allow: GET, HEAD\r?$' "405 says Allow: GET, HEAD"
head_out=$(curl -s -I "$url/metrics")
expect_match "$head_out" '^HTTP/1\.1 200' "HEAD /metrics is 200"
expect_eq "$(curl -s -X HEAD --max-time 3 "$url/metrics" 2>/dev/null | wc -c)" 0 "HEAD has no body"
om_head=$(curl -s -D - -o "$TMP/om" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' "$url/metrics")
expect_match "$om_head" $'^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r?$' \
	"OpenMetrics asked for: its Content-Type"
expect_eq "$(tail -n 1 "$TMP/om")" "# EOF" "OpenMetrics: ends with # EOF"
text_head=$(curl -s -D - -o "$TMP/text" "$url/metrics")
expect_match "$text_head" $'^Content-Type: text/plain; version=0.0.4; charset=utf-8\r?$' \
	"no Accept: the Prometheus text format's Content-Type"
grep -q '^# EOF' "$TMP/text" && not_ok "Prometheus text: no # EOF" || ok "Prometheus text: no # EOF"
expect_match "$(cat "$TMP/text")" '^# TYPE gputop_launches_total counter$' "Prometheus text: counters typed with _total"
expect_match "$(cat "$TMP/om")" '^# TYPE gputop_launches counter$' "OpenMetrics: counter families without _total"
expect_match "$(curl -sv -o /dev/null -o /dev/null "$url/metrics" "$url/metrics" 2>&1)" 'Re-using existing connection' \
	"keep-alive: a scraper's second request goes over the same connection"

touch "$TMP/stop"
wait_pid "$G" 60
expect_eq "$WAIT_STATUS" 0 "gputop exits with the program's status 0"
finish
