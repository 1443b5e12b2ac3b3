#!/usr/bin/env bash
# Issue 14, item 3: contrib/. The Grafana dashboard is valid JSON (its queries are run against a
# real Prometheus in metrics_prometheus.sh). The Kubernetes example parses as YAML and asks for
# no privilege beyond CAP_SYS_PTRACE (no privileged mode, no host PID namespace, no other
# capability added) with the pod's process namespace shared. And the sidecar's loop,
# contrib/kubernetes/gputop-attach, run here as the sidecar runs it: it waits for the process
# its pattern names, attaches, serves that process's figures, attaches again to the next one
# when it ends, and on SIGTERM detaches and exits 0, the traced program running on to a clean
# exit (fleet_kernels on the SIMULATED driver).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin fleet_kernels simdrv/libcuda.so.1
need_gputop
need_metrics_tools
C=$ROOT/contrib

jq -e '.panels | length > 0' "$C/grafana/gputop-dashboard.json" >/dev/null &&
	ok "the Grafana dashboard is JSON with panels" || not_ok "the Grafana dashboard is JSON with panels"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || bail "python3-yaml is installed (Debian's python3 has it)"
lint=$(/usr/bin/python3 - "$C/kubernetes/gputop-sidecar.yaml" "$C/kubernetes/podmonitor.yaml" <<'PY'
import sys, yaml
docs = [d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d]
pod = next(d for d in docs if d["kind"] == "Pod")["spec"]
print("kinds", " ".join(sorted(d["kind"] for d in docs)))
print("shareProcessNamespace", pod.get("shareProcessNamespace"))
print("hostPID", pod.get("hostPID", False))
for c in pod["containers"]:
    sc = c.get("securityContext", {})
    print("container", c["name"], "privileged", sc.get("privileged", False),
          "add", ",".join(sc.get("capabilities", {}).get("add", [])) or "-",
          "drop", ",".join(sc.get("capabilities", {}).get("drop", [])) or "-")
PY
)
sed "s/^/# /" <<<"$lint"
expect_match "$lint" '^kinds NetworkPolicy Pod PodMonitor$' "the Kubernetes files parse: a Pod, a NetworkPolicy, a PodMonitor"
expect_match "$lint" '^shareProcessNamespace True$' "the pod shares its process namespace"
expect_match "$lint" '^hostPID False$' "no host PID namespace"
[ "$(grep -c 'privileged True' <<<"$lint")" -eq 0 ] && ok "no container is privileged" || not_ok "no container is privileged"
expect_match "$lint" '^container gputop privileged False add SYS_PTRACE drop ALL$' \
	"the sidecar drops every capability and adds only SYS_PTRACE"

can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIMDRV
MARK=fleet-$$-$RANDOM
start_program() {	# N: fleet_kernels 2 100 MARK, waiting for $TMP/go-N; pid in PROG
	RB_GO_FILE=$TMP/go-$1 RB_STOP_FILE=$TMP/stop-$1 spawn "$TMP/prog-$1" "$BIN/fleet_kernels" 2 100 "$MARK"
	PROG=$SPAWNED_PID
	wait_for_line "$TMP/prog-$1.out" '^ready [0-9]+$' 30 || bail "program $1 said ready"
}
start_program 1
P1=$PROG
GPORT=$(free_port)
GPUTOP_TARGET="fleet_kernels 2 100 $MARK" GPUTOP_LISTEN=127.0.0.1:$GPORT GPUTOP=$GPUTOP GPUTOP_ARGS="-d 0.2" \
	spawn "$TMP/attach" "$C/kubernetes/gputop-attach"
LOOP=$SPAWNED_PID
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$P1\"," 0 30 &&
	ok "gputop-attach attached to the process its pattern names ($P1)" ||
	bail "gputop-attach attached to $P1 (stderr: $(head -c 300 "$TMP/attach.err"))"
touch "$TMP/go-1"
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$P1\"," 100 30 &&
	ok "its 100 launches are served" || not_ok "its 100 launches are served"
touch "$TMP/stop-1"
wait_pid "$P1" 30
expect_eq "$WAIT_STATUS" 0 "program 1 exits with status 0"

start_program 2
P2=$PROG
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$P2\"," 0 30 &&
	ok "the next process of the pattern is attached ($P2)" || not_ok "the next process ($P2) is attached"
touch "$TMP/go-2"
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$P2\"," 100 30 &&
	ok "its 100 launches are served" || not_ok "its 100 launches are served"
kill -TERM "$LOOP"
wait_pid "$LOOP" 30
expect_eq "$WAIT_STATUS" 0 "SIGTERM: gputop-attach exits 0"
expect_running "$P2" "program 2 runs on after the detach"
curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$GPORT/metrics" &&
	not_ok "nothing listens any more" || ok "nothing listens any more"
touch "$TMP/stop-2"
wait_pid "$P2" 30
expect_eq "$WAIT_STATUS" 0 "program 2 exits with status 0 (nothing of gputop left in it)"
expect_match "$(prog_lines "$TMP/prog-2.out" fleet_kernels)" 'launches=100 .*failures=0$' "program 2's calls all succeeded"
finish
