#!/usr/bin/env bash
# Issue 36: --timeline of the demo (tests/bin/demo, `make demo`'s program, at its full rate on the
# SIMULATED runtime) read by the strict trace event check and by speedscope's own importer,
# with and without --stacks: every thread's complete events nest (before the fix a call's end
# passed the next call's start by up to tens of µs, on every run of a few seconds: the stubs'
# counter was converted with a line refitted as the session went), speedscope ends every frame
# it opens, one frame a function (not one per argument set), the count of calls clamped is in
# the file, and the calls on the timeline are those gputop counted.
# --timeline-compact on the same demo: the same checks, the calls its runs stand for (a run's
# instant says how many) are exactly those gputop counted, function by function, its launch
# counters add up to the launches counted, and it is at least 5 times smaller a call than the
# full timeline (before it, the demo's timeline grew about 10 MB/s).
source "$(dirname "$0")/../lib.sh"
need_bin demo sim/libcudart.so.13
need_gputop
command -v node >/dev/null && [ -f "$ROOT/tests/consumers/node_modules/speedscope/package.json" ] ||
	bail "speedscope is installed in tests/consumers (scripts/install-deps)"
export LD_LIBRARY_PATH=$SIM SIMCUDA_GBPS=12 SIMCUDA_SYNC_US=300	# as scripts/demo
SECONDS_RUN=${TIMELINE_DEMO_SECONDS:-4}

for stacks in none all compact; do
	t=$TMP/$stacks.trace
	mode=(--stacks "$stacks") what="--stacks $stacks"
	[ "$stacks" = compact ] && mode=(--stacks none --timeline-compact) what=--timeline-compact
	run_gputop_json "$TMP/$stacks.json" -- -b -q "${mode[@]}" --timeline "$t" -- "$BIN/demo" "$SECONDS_RUN" ||
		bail "$what: a summary to check"
	expect_eq "$GPUTOP_STATUS" 0 "$what: gputop exits as the demo did"
	if python3 "$ROOT/tests/consumers/trace_event_check.py" "$t" >"$TMP/$stacks.counts" 2>"$TMP/strict.err"; then
		ok "$what: the strict check passes ($(jq .X "$TMP/$stacks.counts") complete events)"
	else
		not_ok "$what: the strict check passes"
		head -n 5 "$TMP/strict.err" | sed 's/^/#   /'
	fi
	node "$ROOT/tests/consumers/speedscope_load.mjs" "$t" >"$TMP/$stacks.ss" 2>"$TMP/$stacks.sserr" ||
		not_ok "$what: speedscope reads the timeline"
	if grep -qE 'Tried to end|still open|stack was empty' "$TMP/$stacks.sserr"; then
		not_ok "$what: speedscope ends every frame it opens"
		grep -E 'Tried to end|still open' "$TMP/$stacks.sserr" | head -n 3 | cut -c1-300 | sed 's/^/#   /'
	else
		ok "$what: speedscope ends every frame it opens"
	fi
	# One frame a function: speedscope's frames are exactly the names of the complete events.
	jq_eq "$TMP/$stacks.ss" '[.profiles[].frames[]] | unique' "$(jq -c '.calls | keys' "$TMP/$stacks.counts")" \
		"$what: speedscope's frames are the functions called, one each"
	jq_check "$t" '.otherData.clamped_calls | type == "number"' "$what: the file says how many calls were clamped"
	note "$what: $(jq .otherData.clamped_calls "$t") calls clamped, $(stat -c %s "$t") bytes"
	# The calls on the timeline are those gputop counted (less records reported lost).
	for f in cudaStreamSynchronize cudaMemcpyAsync cudaMallocAsync; do
		jq_eq "$TMP/$stacks.counts" ".represented.$f" "$(jq "$(api_row $f) | .calls - (.lost // 0)" "$TMP/$stacks.json")" \
			"$what: $f: the calls on the timeline are those counted"
	done
	[ "$stacks" = compact ] || jq_check "$TMP/$stacks.counts" '.launch_events > 0' "--stacks $stacks: launches are on the timeline"
done

# The compact timeline: every function's calls, as its runs say, are those gputop counted.
c=$TMP/compact
jq_check "$c.trace" '.otherData.compact.run_gap_us == 50' "compact: otherData says the file is compact"
jq_eq "$c.counts" '.represented' "$(jq -cS '[.api[] | {(.name): (.calls - (.lost // 0))}] | add' "$c.json")" \
	"compact: the calls the runs stand for are those gputop counted, for every function"
jq_check "$c.counts" '.X < (.represented | add) / 2' "compact: runs merged ($(jq .X "$c.counts") complete events for $(jq '.represented | add' "$c.counts") calls)"
jq_eq "$c.counts" '.launches_counted' "$(jq .launches "$c.json")" "compact: the launch counters add up to the launches counted"
jq_eq "$c.counts" '.launch_events' 0 "compact: no instant per launch"
# Its size: bytes a counted call, against the full timeline of the same demo (--stacks none).
per_call() { echo $(($(stat -c %s "$TMP/$1.trace") / $(jq '[.api[] | .calls] | add' "$TMP/$1.json"))); }
full_b=$(per_call none) compact_b=$(per_call compact)
rate() { awk -v b="$(stat -c %s "$TMP/$1.trace")" -v s="$(jq .duration_s "$TMP/$1.json")" 'BEGIN { printf "%.2f", b / s / 1e6 }'; }
note "full: $full_b bytes a call, $(rate none) MB/s; compact: $compact_b bytes a call, $(rate compact) MB/s"
[ $((compact_b * 5)) -le "$full_b" ] && ok "compact: at least 5 times smaller a call ($full_b -> $compact_b bytes)" ||
	not_ok "compact: at least 5 times smaller a call ($full_b -> $compact_b bytes)"

finish
