# tests/e2e/metrics_lib.bash — helpers of the --listen tests (source after lib.sh): free ports,
# scraping gputop, and a real Prometheus server (Debian's `prometheus`) started for the test.

need_metrics_tools() {
	command -v curl >/dev/null || bail "curl is installed (scripts/install-deps installs it)"
	command -v python3 >/dev/null || bail "python3 is installed (scripts/install-deps installs it)"
}

# A TCP port of 127.0.0.1 free right now (another process may still take it: callers retry).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# scrape PORT [ACCEPT]: the body of GET /metrics (Prometheus text unless ACCEPT names another).
scrape() {
	curl -sS --max-time 10 ${2:+-H "Accept: $2"} "http://127.0.0.1:$1/metrics"
}

# metric_value TEXT 'name{labels}': the value of the sample whose name and labels start so.
metric_value() {
	awk -v key="$2" 'index($0, key) == 1 { print $NF; exit }' <<<"$1"
}

# wait_for_metric PORT 'name{labels' VALUE TIMEOUT: polls /metrics until that sample has VALUE
# (VALUE "+": any value above 0); 0 when it did, 1 on timeout. The last scrape is in SCRAPED.
wait_for_metric() {
	local port=$1 key=$2 want=$3 deadline
	deadline=$(($(date +%s) + $4))
	while :; do
		SCRAPED=$(scrape "$port" 2>/dev/null)
		local got
		got=$(metric_value "$SCRAPED" "$key")
		[ "$got" == "$want" ] && return 0
		[ "$want" == "+" ] && [ -n "$got" ] && awk -v v="$got" 'BEGIN { exit !(v > 0) }' && return 0
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# start_gputop_listening NAME GPUTOP_ARGS...: gputop -q --listen 127.0.0.1:PORT ARGS in the
# background on a free port (tried again on another if that one was taken meanwhile). Sets
# GPORT and GPUTOP_PID; its output in $TMP/NAME.out/.err. Returns 1 if it never listened.
start_gputop_listening() {
	local name=$1 try
	shift
	for try in 1 2 3; do
		GPORT=$(free_port)
		spawn "$TMP/$name" "$GPUTOP" -q --listen "127.0.0.1:$GPORT" "$@"
		GPUTOP_PID=$SPAWNED_PID
		local deadline=$(($(date +%s) + 30))
		while running "$GPUTOP_PID" && [ "$(date +%s)" -lt "$deadline" ]; do
			curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$GPORT/metrics" && return 0
			sleep 0.1
		done
		running "$GPUTOP_PID" && return 1
		grep -q 'cannot listen' "$TMP/$name.err" || return 1
	done
	return 1
}

# start_prometheus SCRAPE_PORT: a Prometheus server on a free port of 127.0.0.1 that scrapes
# 127.0.0.1:SCRAPE_PORT/metrics every 500 ms (job "gputop"), its data in $TMP. Sets PPORT and
# PROM_PID; returns 1 if it did not become ready within 60 s.
start_prometheus() {
	local try deadline
	cat >"$TMP/prometheus.yml" <<EOT
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: gputop
    static_configs:
      - targets: ['127.0.0.1:$1']
EOT
	for try in 1 2 3; do
		PPORT=$(free_port)
		rm -rf "$TMP/prometheus-data"
		spawn "$TMP/prometheus" prometheus --config.file="$TMP/prometheus.yml" \
			--storage.tsdb.path="$TMP/prometheus-data" --web.listen-address="127.0.0.1:$PPORT" \
			--log.level=warn
		PROM_PID=$SPAWNED_PID
		deadline=$(($(date +%s) + 60))
		while running "$PROM_PID" && [ "$(date +%s)" -lt "$deadline" ]; do
			curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$PPORT/-/ready" && return 0
			sleep 0.2
		done
		running "$PROM_PID" && return 1
	done
	return 1
}

# prom_query 'PromQL': the value of the query's first result from Prometheus's HTTP API
# (empty when there is none).
prom_query() {
	curl -sS --max-time 10 --data-urlencode "query=$1" "http://127.0.0.1:$PPORT/api/v1/query" |
		jq -r '.data.result[0].value[1] // empty'
}

# wait_for_prom 'PromQL' VALUE TIMEOUT: polls Prometheus until the query gives VALUE (0), or
# times out (1); the last answer in PROM_VALUE.
wait_for_prom() {
	local deadline
	deadline=$(($(date +%s) + $3))
	while :; do
		PROM_VALUE=$(prom_query "$1" 2>/dev/null)
		[ "$PROM_VALUE" == "$2" ] && return 0
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.25
	done
}
