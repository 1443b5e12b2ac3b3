#!/usr/bin/env bash
# Issue 12: --folded and --timeline, read back by a real consumer (speedscope's own importer,
# from npm: tests/consumers/speedscope_load.mjs) and by a strict check of the trace event
# format (tests/consumers/trace_event_check.py). On the SIMULATED runtime and driver:
#  - folded stacks of each metric add up to gputop's own figures (live bytes, allocated bytes,
#    launches) and name the call chain of tests/progs/stacks.c;
#  - the timeline of ring_loop (launches through the ring, calls through the call stub) holds
#    one launch event per launch gputop counted and one complete event per traced call;
#  - it is a valid document however the session ends (Ctrl-C, --timeout) and stays within
#    --timeline-max-mb.
source "$(dirname "$0")/../lib.sh"
need_bin stacks ring_loop sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
command -v node >/dev/null && [ -f "$ROOT/tests/consumers/node_modules/speedscope/package.json" ] ||
	bail "speedscope is installed in tests/consumers (scripts/install-deps)"
speedscope() {
	node "$ROOT/tests/consumers/speedscope_load.mjs" "$1" 2>"$TMP/speedscope.err"
}
strict() {
	python3 "$ROOT/tests/consumers/trace_event_check.py" "$1" 2>"$TMP/strict.err"
}

# --- folded stacks, each metric ----------------------------------------------------------------
export LD_LIBRARY_PATH=$SIM
for m in live-bytes allocated-bytes api-time; do
	run_gputop_json "$TMP/$m.json" -- -b --stacks allocs --folded "$TMP/$m.folded" --folded-metric "$m" -- "$BIN/stacks" ||
		bail "a summary to check"
	speedscope "$TMP/$m.folded" >"$TMP/$m.ss" || { not_ok "$m: speedscope reads the folded file"; cat "$TMP/speedscope.err"; continue; }
	ok "$m: speedscope reads the folded file"
	jq_check "$TMP/$m.ss" '.profiles[0].frames | (index("leak_b (stacks.c:25)") != null and index("cudaMalloc") != null)' \
		"$m: speedscope sees leak_b's frame and cudaMalloc" '.profiles[0].frames'
done
jq_eq "$TMP/live-bytes.ss" '.profiles[0].total' "$(jq .memory.live_bytes "$TMP/live-bytes.json")" "live-bytes: speedscope's total is gputop's live bytes"
jq_eq "$TMP/allocated-bytes.ss" '.profiles[0].total' $((4 << 20)) "allocated-bytes: 3 MiB leaked + 1 MiB freed (the refused one is not counted)"
jq_check "$TMP/api-time.ss" '.profiles[0].total > 0' "api-time: time in the calls"
expect_match "$(head -n1 "$TMP/live-bytes.folded")" '^_start;.*;main \(stacks\.c:[0-9]+\);leak_a \(stacks\.c:[0-9]+\);leak_b \(stacks\.c:[0-9]+\);cudaMalloc 3145728$' \
	"live-bytes: one line, outermost frame first"

# --- timeline and launches of the ring and the call stub ----------------------------------------
export LD_LIBRARY_PATH=$SIMDRV
R=500
RB_CALLS=1 run_gputop_json "$TMP/ring.json" -- -b --stacks launches --timeline "$TMP/ring.trace" \
	--folded "$TMP/ring.folded" --folded-metric launches -- "$BIN/ring_loop" 4 $R || bail "a summary to check"
expect_eq "$(prog_lines "$GPUTOP_OUT" ring_loop)" "ring_loop: launches=$((8 * R)) calls=$((8 * R)) failures=0" "ring_loop works"
strict "$TMP/ring.trace" >"$TMP/ring.counts" && ok "the timeline passes the strict trace event check" ||
	{ not_ok "the timeline passes the strict trace event check"; sed 's/^/#   /' "$TMP/strict.err"; }
jq_eq "$TMP/ring.counts" '.launch_events' \
	"$(jq '.launches - ([.api[] | select(.name | test("LaunchKernel")) | .lost // 0] | add // 0)' "$TMP/ring.json")" \
	"one launch event per launch gputop counted (less any the full ring could not record)"
# (Calls the stubs counted but could not record, a full table on a loaded machine, have no event:
# gputop reports them as lost.)
jq_eq "$TMP/ring.counts" '.X' "$(jq '[.api[] | select(.errors != null) | .calls - .lost] | add' "$TMP/ring.json")" \
	"one complete event per traced call with a return (less those reported lost)"
jq_eq "$TMP/ring.counts" '.calls.cuStreamSynchronize' "$(jq "$(api_row cuStreamSynchronize) | .calls - .lost" "$TMP/ring.json")" \
	"cuStreamSynchronize: a complete event per call recorded"
jq_check "$TMP/ring.counts" '.threads >= 4' "a track per thread (4 workers)"
speedscope "$TMP/ring.trace" >"$TMP/ring.ss" && ok "speedscope reads the timeline" ||
	{ not_ok "speedscope reads the timeline"; sed 's/^/#   /' "$TMP/speedscope.err"; }
jq_check "$TMP/ring.ss" '.profiles | length >= 4' "speedscope: a profile per thread with calls"
speedscope "$TMP/ring.folded" >"$TMP/ringf.ss" && ok "speedscope reads the launches' folded file" ||
	not_ok "speedscope reads the launches' folded file"
jq_eq "$TMP/ringf.ss" '.profiles[0].total' $((8 * R)) "launches: the folded total is the launch count"
jq_check "$TMP/ringf.ss" '.profiles[0].frames | (index("ring_a(int*)") != null and index("cuLaunchKernelEx") != null)' \
	"launches: kernels under their launch function" '.profiles[0].frames'

# --- --stacks launches: more launch sites sampled, counts exact ----------------------------------
# A sample every 100 ms a kernel at most, paid from a credit (the overhead budget's share of
# the wall time): 2,000 rounds of at least 0.5 ms make a run of 1 s or more however busy the
# machine, and a budget of 50% leaves the credit no say (at 2%, on a loaded machine, one
# kernel once got no sample past its first launch).
RS=2000
RB_PAUSE_US=500 run_gputop_json "$TMP/sampled.json" -- -b --max-overhead 50 --stacks allocs,launches \
	--folded "$TMP/sampled.folded" --folded-metric launches -- "$BIN/ring_loop" 4 $RS || bail "a summary to check"
jq_eq "$TMP/sampled.json" '.launches' $((8 * RS)) "--stacks launches: every launch counted"
jq_check "$TMP/sampled.json" '.kernels | length == 2 and all(.sites | length == 1 and .[0].samples > 1)' \
	"--stacks launches: each kernel's site sampled more than once" '[.kernels[] | {name, s: [.sites[].samples]}]'
jq_check "$TMP/sampled.json" "$(api_row cuLaunchKernel).stops_per_call == 0" "--stacks launches: launches still go through the ring"
speedscope "$TMP/sampled.folded" >"$TMP/sampled.ss" && jq_eq "$TMP/sampled.ss" '.profiles[0].total' $((8 * RS)) \
	"--stacks launches: the folded launches still add up to the launch count"

# --- however the session ends --------------------------------------------------------------------
# Ctrl-C: gputop detaches and leaves a valid timeline.
spawn "$TMP/int" env RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/never" RB_PAUSE_US=200 "$BIN/ring_loop" 2 1
wait_for_line "$TMP/int.out" '^ready [0-9]+' 10 || bail "ring_loop is ready"
PROG=$SPAWNED_PID
# (env: a background job of a script starts with SIGINT ignored.)
spawn "$TMP/g" env --default-signal=INT "$GPUTOP" -b -d 0.2 --timeline "$TMP/int.trace" -p "$PROG"
GP=$SPAWNED_PID
wait_for_line "$TMP/g.err" 'attached' 20 || not_ok "gputop attached"
touch "$TMP/go"
# While tracing, the events go to a temporary file beside it (.int.trace.XXXXXX), renamed at the end.
beside=$(ls -A "$TMP" | grep -E '^\.int\.trace\.' | head -n 1)
wait_for_line "$TMP/$beside" '"cat":"launch"' 10 || not_ok "launch events come in, beside the file"
[ -e "$TMP/int.trace" ] && not_ok "the file comes at the end only" || ok "the file comes at the end only"
kill -INT "$GP"
wait_pid "$GP" 20
expect_eq "$WAIT_STATUS" 0 "Ctrl-C: gputop exits 0"
expect_eq "$(ls -A "$TMP" | grep -cE '^\.int\.trace\.')" 0 "Ctrl-C: the temporary file became the timeline"
strict "$TMP/int.trace" >/dev/null && ok "Ctrl-C: the timeline is valid" ||
	{ not_ok "Ctrl-C: the timeline is valid"; sed 's/^/#   /' "$TMP/strict.err"; }
expect_running "$PROG" "Ctrl-C: the program runs on"
# --timeout, and a small --timeline-max-mb: cut at the bound, still valid.
"$GPUTOP" -b -d 0.2 --timeout 1 --timeline "$TMP/cut.trace" --timeline-max-mb 0.05 -p "$PROG" >"$TMP/cut.out" 2>&1
expect_eq "$?" 0 "--timeout: gputop exits 0"
strict "$TMP/cut.trace" >"$TMP/cut.counts" && ok "--timeout: the timeline is valid" ||
	{ not_ok "--timeout: the timeline is valid"; sed 's/^/#   /' "$TMP/strict.err"; }
size=$(stat -c %s "$TMP/cut.trace")
[ "$size" -le 52429 ] && ok "--timeline-max-mb 0.05: $size bytes, within 52429" || not_ok "--timeline-max-mb 0.05: $size bytes > 52429"
grep -q 'timeline-max-mb reached' "$TMP/cut.trace" && ok "the cut is said in the file" || not_ok "the cut is said in the file"
touch "$TMP/never"
wait_pid "$PROG" 20
expect_eq "$WAIT_STATUS" 0 "the program ends normally"

# --- an output that cannot be written: exit 6, nothing run, nothing left -----------------------
"$GPUTOP" --timeline /nonexistent/dir/t.json -- "$BIN/stacks" >"$TMP/bad.out" 2>"$TMP/bad.err"
expect_eq "$?" 6 "--timeline in a missing directory: exit status 6"
expect_match "$(cat "$TMP/bad.err")" "cannot write --timeline file" "--timeline: says why"
"$GPUTOP" --folded "$TMP/f.folded" -- /nonexistent/prog >/dev/null 2>&1
expect_eq "$?" 5 "a program that does not exist: exit status 5"
[ ! -e "$TMP/f.folded" ] && ok "no folded file left behind" || not_ok "no folded file left behind"
finish
