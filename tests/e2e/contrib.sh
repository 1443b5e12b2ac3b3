#!/usr/bin/env bash
# Issues 14 and 26: contrib/.
#  1. The Kubernetes manifests pass a schema validator, offline: tests/consumers/k8s_validate.mjs
#     (Kubernetes' API schemas from npm's kubernetes-models, the Prometheus Operator's CRDs, and
#     no field the schema lacks, as kubeconform -strict); a misplaced field fails it. They ask
#     for no privilege beyond CAP_SYS_PTRACE, share the pod's process namespace, run gputop as a
#     native sidecar of a Job with the downward API's GPUTOP_POD_* variables; and the
#     NetworkPolicy, evaluated here as Kubernetes does, lets Prometheus alone reach the metrics
#     port and the Job's own pods (by the label the Job controller sets, not app=train, which
#     any pod may carry) reach each other on every port. The PodMonitor carries the label
#     kube-prometheus-stack's default selector asks for (issue 36).
#  2. contrib/prometheus/prometheus.yml passes `promtool check config`; the Grafana dashboard
#     is JSON whose variables filter by job and rank (its queries are run against a real
#     Prometheus in metrics_prometheus.sh).
#  3. The sidecar's entry point, contrib/kubernetes/gputop-attach, run here as the sidecar runs
#     it, on a launcher that starts a worker (fleet_kernels on the SIMULATED driver): it waits
#     for the process its pattern names, attaches to it and to the worker it starts, serves the
#     worker's figures with its rank and job, goes on serving when the launcher ends before the
#     worker, and exits 0 once both have ended (the sidecar completes). Then on SIGTERM it
#     detaches and exits 0, the traced program running on to a clean exit. First, as root: a
#     root trainer and a sidecar with every capability dropped (setpriv --bounding-set=-all):
#     refused, exit status 4, said why; with CAP_SYS_PTRACE alone: attached (issue 36).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/metrics_lib.bash"
need_bin fleet_kernels simdrv/libcuda.so.1
need_gputop
need_metrics_tools
C=$ROOT/contrib
K=$C/kubernetes

# --- 1. Kubernetes -----------------------------------------------------------------------------
command -v node >/dev/null && [ -f "$ROOT/tests/consumers/node_modules/kubernetes-models/package.json" ] ||
	bail "kubernetes-models is installed in tests/consumers (scripts/install-deps)"
VALIDATE="node $ROOT/tests/consumers/k8s_validate.mjs"
out=$($VALIDATE "$K"/*.yaml 2>&1)
status=$?
sed "s/^/# /" <<<"$out"
expect_eq "$status" 0 "the Kubernetes manifests pass the schema validator"
expect_eq "$(grep -c '^ok ' <<<"$out")" 4 "every document validated: Service, Job, NetworkPolicy, PodMonitor"
sed 's/^\( *\)restartPolicy: Always/\1restartPolicyy: Always/' "$K/gputop-sidecar.yaml" >"$TMP/typo.yaml"
sed 's/containerPort: 9464/containerPort: "9464x"/' "$K/gputop-sidecar.yaml" >"$TMP/type.yaml"
$VALIDATE "$TMP/typo.yaml" >"$TMP/typo.out" 2>&1 && not_ok "a misspelt field fails the validator" ||
	expect_match "$(cat "$TMP/typo.out")" 'restartPolicyy: no such field' "a misspelt field fails the validator"
$VALIDATE "$TMP/type.yaml" >"$TMP/type.out" 2>&1 && not_ok "a port that is not a number fails the validator" ||
	expect_match "$(cat "$TMP/type.out")" 'containerPort must be integer' "a port that is not a number fails the validator"

/usr/bin/python3 -c 'import yaml' 2>/dev/null || bail "python3-yaml is installed (Debian's python3 has it)"
lint=$(/usr/bin/python3 - "$K/gputop-sidecar.yaml" "$K/podmonitor.yaml" <<'PY'
import sys, yaml
docs = [d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d]
kind = lambda k: next(d for d in docs if d["kind"] == k)
job = kind("Job")
pod = job["spec"]["template"]["spec"]
# The pods' labels: the template's and those the Job controller adds (Kubernetes 1.27+).
labels = dict(job["spec"]["template"]["metadata"]["labels"],
              **{"batch.kubernetes.io/job-name": job["metadata"]["name"], "job-name": job["metadata"]["name"],
                 "batch.kubernetes.io/controller-uid": "u-1", "controller-uid": "u-1"})
other_job = dict(job["spec"]["template"]["metadata"]["labels"],
                 **{"batch.kubernetes.io/job-name": "other", "job-name": "other"})
print("kinds", " ".join(sorted(d["kind"] for d in docs)))
print("shareProcessNamespace", pod.get("shareProcessNamespace"))
print("hostPID", pod.get("hostPID", False))
for c in pod.get("initContainers", []) + pod["containers"]:
    sc = c.get("securityContext", {})
    print("container", c["name"], "privileged", sc.get("privileged", False),
          "add", ",".join(sc.get("capabilities", {}).get("add", [])) or "-",
          "drop", ",".join(sc.get("capabilities", {}).get("drop", [])) or "-")
side = next(c for c in pod.get("initContainers", []) if c["name"] == "gputop")
print("sidecar restartPolicy", side.get("restartPolicy"))
for e in side["env"]:
    if e["name"].startswith("GPUTOP_") and "valueFrom" in e:
        print("downward", e["name"], e["valueFrom"]["fieldRef"]["fieldPath"])
ports = {p["name"]: p["containerPort"] for c in pod.get("initContainers", []) + pod["containers"]
         for p in c.get("ports", [])}

# NetworkPolicy ingress as Kubernetes evaluates it: a peer reaches a port of a selected pod if
# some rule has a matching peer (or none) and a matching port (or none).
def matches(sel, lab):
    return all(lab.get(k) == v for k, v in sel.get("matchLabels", {}).items())
def allowed(np, ns, peer_ns, peer_labels, port):
    for rule in np["spec"].get("ingress", []):
        peers = rule.get("from")
        ok_peer = peers is None or any(
            (("namespaceSelector" in p and matches(p["namespaceSelector"], {"kubernetes.io/metadata.name": peer_ns}))
             or ("namespaceSelector" not in p and peer_ns == ns))
            and matches(p.get("podSelector", {}), peer_labels) for p in peers)
        ok_port = "ports" not in rule or any(ports.get(p.get("port"), p.get("port")) == port
                                             for p in rule["ports"])
        if ok_peer and ok_port:
            return True
    return False
np = kind("NetworkPolicy")
print("policy selects the job's pods", matches(np["spec"]["podSelector"], labels))
print("service selects the job's pods", matches({"matchLabels": kind("Service")["spec"]["selector"]}, labels),
      "another job's", matches({"matchLabels": kind("Service")["spec"]["selector"]}, other_job))
pm = kind("PodMonitor")
print("podmonitor release label", pm["metadata"].get("labels", {}).get("release"))
print("podmonitor selects the job's pods", matches(pm["spec"]["selector"], labels))
prom = ("monitoring", {"app.kubernetes.io/name": "prometheus"})
cases = [("the job's pods", "default", labels), ("Prometheus", *prom),
         ("another pod of the namespace", "default", {"app": "web"}),
         ("another pod of monitoring", "monitoring", {"app": "grafana"}),
         ("a pod of another namespace", "other", labels),
         ("a pod of another Job labelled app=train", "default", other_job)]
for name, ns, lab in cases:
    for port in (9464, 29500):
        print("reach", port, "from", name, allowed(np, "default", ns, lab, port))
PY
)
sed "s/^/# /" <<<"$lint"
expect_match "$lint" '^kinds Job NetworkPolicy PodMonitor Service$' "the Kubernetes files parse: a Service, a Job, a NetworkPolicy, a PodMonitor"
expect_match "$lint" '^shareProcessNamespace True$' "the pod shares its process namespace"
expect_match "$lint" '^hostPID False$' "no host PID namespace"
[ "$(grep -c 'privileged True' <<<"$lint")" -eq 0 ] && ok "no container is privileged" || not_ok "no container is privileged"
expect_match "$lint" '^container gputop privileged False add SYS_PTRACE drop ALL$' \
	"the sidecar drops every capability and adds only SYS_PTRACE"
expect_match "$lint" '^sidecar restartPolicy Always$' "gputop is a native sidecar: stopped once the trainer has ended"
expect_match "$lint" '^downward GPUTOP_POD_NAME metadata.name$' "GPUTOP_POD_NAME from the downward API"
expect_match "$lint" '^downward GPUTOP_POD_NAMESPACE metadata.namespace$' "GPUTOP_POD_NAMESPACE from the downward API"
expect_match "$lint" '^downward GPUTOP_NODE_NAME spec.nodeName$' "GPUTOP_NODE_NAME from the downward API"
expect_match "$lint" "^policy selects the job's pods True$" "the NetworkPolicy guards the job's pods"
expect_match "$lint" '^reach 9464 from Prometheus True$' "the policy: Prometheus reaches the metrics port"
expect_match "$lint" "^reach 29500 from the job's pods True$" "the policy: the job's pods reach each other (rendezvous port)"
expect_match "$lint" "^reach 9464 from the job's pods True$" "the policy: the job's pods reach each other on any port"
for who in "another pod of the namespace" "another pod of monitoring" "a pod of another namespace" \
	"a pod of another Job labelled app=train"; do
	expect_match "$lint" "^reach 9464 from $who False$" "the policy: $who does not reach the metrics port"
done
expect_match "$lint" "^reach 29500 from a pod of another Job labelled app=train False$" \
	"the policy: the Job's own label, not app=train, lets a pod reach the job's pods"
expect_match "$lint" "^service selects the job's pods True another job's False$" \
	"the headless Service names this Job's pods only"
expect_match "$lint" '^podmonitor release label kube-prometheus-stack$' \
	"the PodMonitor carries the label kube-prometheus-stack's default selector asks for"
expect_match "$lint" "^podmonitor selects the job's pods True$" "the PodMonitor selects the job's pods"

# --- 2. Prometheus and Grafana -------------------------------------------------------------------
command -v promtool >/dev/null || bail "promtool is installed (Debian's prometheus package)"
promtool check config "$C/prometheus/prometheus.yml" >"$TMP/promtool.out" 2>&1 &&
	ok "contrib/prometheus/prometheus.yml: promtool check config" ||
	not_ok "contrib/prometheus/prometheus.yml: promtool check config ($(tail -c 300 "$TMP/promtool.out"))"
D=$C/grafana/gputop-dashboard.json
jq -e '.panels | length > 0' "$D" >/dev/null && ok "the Grafana dashboard is JSON with panels" ||
	not_ok "the Grafana dashboard is JSON with panels"
expect_eq "$(jq -r '[.templating.list[] | select(.type == "query") | .name] | join(",")' "$D")" "job_id,rank" \
	"the dashboard's variables: job_id, then rank"
expect_eq "$(jq '[.panels[].targets[].expr | select(test("gputop_cpu_seconds") | not) |
	select(contains("job_id=~\"$job_id\"") and contains("rank=~\"$rank\"") | not)] | length' "$D")" 0 \
	"every per-process query of the dashboard filters by job and rank"

# --- 3. the sidecar's entry point --------------------------------------------------------------
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
export LD_LIBRARY_PATH=$SIMDRV

# A root trainer, a sidecar with every capability dropped (the recipe's first variant before
# issue 36): the kernel refuses it, since the trainer holds capabilities it lacks; with
# CAP_SYS_PTRACE alone (the recipe) it attaches. setpriv empties the bounding set, as a
# container's "drop: [ALL]" does.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	RB_GO_FILE=$TMP/go-0 spawn "$TMP/prog-0" "$BIN/fleet_kernels" 2 10
	P0=$SPAWNED_PID
	wait_for_line "$TMP/prog-0.out" '^ready [0-9]+$' 30 || bail "program 0 said ready"
	setpriv --bounding-set=-all "$GPUTOP" -b -n 1 -d 0.1 -p "$P0" >"$TMP/nocap.out" 2>"$TMP/nocap.err"
	expect_eq "$?" 4 "a root trainer, a sidecar with no capability: refused (exit status 4)"
	expect_match "$(cat "$TMP/nocap.err")" 'holds capabilities gputop lacks \(it runs as root\)' "it says why"
	expect_match "$(cat "$TMP/nocap.err")" 'takes CAP_SYS_PTRACE' "and what it takes"
	setpriv --bounding-set=-all,+sys_ptrace "$GPUTOP" -b -n 1 -d 0.1 -p "$P0" >"$TMP/ptrace.out" 2>"$TMP/ptrace.err"
	expect_eq "$?" 0 "a root trainer, a sidecar with CAP_SYS_PTRACE alone: attached"
	expect_match "$(cat "$TMP/ptrace.err")" "attached to $P0" "it says it attached"
	touch "$TMP/go-0"
	wait_pid "$P0" 30
	expect_eq "$WAIT_STATUS" 0 "the trainer ends with status 0 after both"
else
	note "not root, or no setpriv: the root-trainer case is not reproduced"
fi
MARK=fleet-$$-$RANDOM
# The launcher (as torchrun is): starts the worker when told, and ends when told.
cat >"$TMP/launcher.sh" <<'EOF'
read -r go <"$2.go"
"$3" 2 100 &
read -r end <"$2.end"
exit 0
EOF
mkfifo "$TMP/fifo.go" "$TMP/fifo.end"
RB_STOP_FILE=$TMP/stop-1 RANK=0 LOCAL_RANK=0 TORCHELASTIC_RUN_ID=job-contrib \
	spawn "$TMP/launcher" sh "$TMP/launcher.sh" "$MARK" "$TMP/fifo" "$BIN/fleet_kernels"
LAUNCHER=$SPAWNED_PID
GPORT=$(free_port)
GPUTOP_TARGET="launcher.sh $MARK" GPUTOP_LISTEN=127.0.0.1:$GPORT GPUTOP=$GPUTOP GPUTOP_ARGS="-d 0.2" \
	GPUTOP_POD_NAME=train-0 spawn "$TMP/attach" "$K/gputop-attach"
LOOP=$SPAWNED_PID
wait_for_metric "$GPORT" "gputop_process_running{pid=\"$LAUNCHER\"," 1 30 &&
	ok "gputop-attach attached to the process its pattern names ($LAUNCHER)" ||
	bail "gputop-attach attached to $LAUNCHER (stderr: $(head -c 300 "$TMP/attach.err"))"
echo go >"$TMP/fifo.go"
for try in $(seq 300); do	# the worker: the launcher's child
	WORKER=$(pgrep -P "$LAUNCHER" -f fleet_kernels) && break
	sleep 0.1
done
[ -n "$WORKER" ] || bail "the launcher started its worker"
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$WORKER\"," 100 30 &&
	ok "the worker it started ($WORKER) is traced: its 100 launches are served" ||
	not_ok "the worker's ($WORKER) 100 launches are served"
expect_match "$(grep "^gputop_launches_total{pid=\"$WORKER\"," <<<"$SCRAPED")" \
	"^gputop_launches_total\\{pid=\"$WORKER\",rank=\"0\",local_rank=\"0\",job_id=\"job-contrib\",hostname=\"[^\"]+\",k8s_pod=\"train-0\"\\} 100\$" \
	"the worker's series: its rank, local rank and job, the host and pod"
echo end >"$TMP/fifo.end"
wait_pid "$LAUNCHER" 30
expect_eq "$WAIT_STATUS" 0 "the launcher ends before its worker"
wait_for_metric "$GPORT" "gputop_process_running{pid=\"$LAUNCHER\"," 0 30 &&
	ok "its series say it ended, and are still served: the worker is still traced" ||
	not_ok "the launcher's end is served while the worker runs"
expect_running "$LOOP" "gputop-attach runs on while a traced process does"
touch "$TMP/stop-1"
wait_pid "$LOOP" 60
expect_eq "$WAIT_STATUS" 0 "the worker ends too: gputop-attach exits 0 (the sidecar completes)"
expect_match "$(cat "$TMP/launcher.out")" 'launches=100 .*failures=0$' "the worker's calls all succeeded"
curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$GPORT/metrics" &&
	not_ok "nothing listens any more" || ok "nothing listens any more"

# SIGTERM (the pod stopping): gputop detaches, the program runs on untouched.
RB_GO_FILE=$TMP/go-2 RB_STOP_FILE=$TMP/stop-2 spawn "$TMP/prog-2" "$BIN/fleet_kernels" 2 100 "$MARK"
P2=$SPAWNED_PID
wait_for_line "$TMP/prog-2.out" '^ready [0-9]+$' 30 || bail "program 2 said ready"
GPORT=$(free_port)
GPUTOP_TARGET="fleet_kernels 2 100 $MARK" GPUTOP_LISTEN=127.0.0.1:$GPORT GPUTOP=$GPUTOP GPUTOP_ARGS="-d 0.2" \
	spawn "$TMP/attach-2" "$K/gputop-attach"
LOOP=$SPAWNED_PID
wait_for_metric "$GPORT" "gputop_launches_total{pid=\"$P2\"," 0 30 &&
	ok "gputop-attach attached to $P2" || bail "gputop-attach attached to $P2 (stderr: $(head -c 300 "$TMP/attach-2.err"))"
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
