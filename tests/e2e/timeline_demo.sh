#!/usr/bin/env bash
# Issue 36: --timeline of the demo (tests/bin/demo, `make demo`'s program, at its full rate on the
# SIMULATED runtime) read by the strict trace event check and by speedscope's own importer,
# with and without --stacks: every thread's complete events nest (before the fix a call's end
# passed the next call's start by up to tens of µs, on every run of a few seconds: the stubs'
# counter was converted with a line refitted as the session went), speedscope ends every frame
# it opens, one frame a function (not one per argument set), the count of calls clamped is in
# the file, and the calls on the timeline are those gputop counted.
source "$(dirname "$0")/../lib.sh"
need_bin demo sim/libcudart.so.13
need_gputop
command -v node >/dev/null && [ -f "$ROOT/tests/consumers/node_modules/speedscope/package.json" ] ||
	bail "speedscope is installed in tests/consumers (scripts/install-deps)"
export LD_LIBRARY_PATH=$SIM SIMCUDA_GBPS=12 SIMCUDA_SYNC_US=300	# as scripts/demo
SECONDS_RUN=${TIMELINE_DEMO_SECONDS:-4}

for stacks in none all; do
	t=$TMP/$stacks.trace
	run_gputop_json "$TMP/$stacks.json" -- -b -q --stacks "$stacks" --timeline "$t" -- "$BIN/demo" "$SECONDS_RUN" ||
		bail "--stacks $stacks: a summary to check"
	expect_eq "$GPUTOP_STATUS" 0 "--stacks $stacks: gputop exits as the demo did"
	if python3 "$ROOT/tests/consumers/trace_event_check.py" "$t" >"$TMP/$stacks.counts" 2>"$TMP/strict.err"; then
		ok "--stacks $stacks: the strict check passes ($(jq .X "$TMP/$stacks.counts") complete events)"
	else
		not_ok "--stacks $stacks: the strict check passes"
		head -n 5 "$TMP/strict.err" | sed 's/^/#   /'
	fi
	node "$ROOT/tests/consumers/speedscope_load.mjs" "$t" >"$TMP/$stacks.ss" 2>"$TMP/$stacks.sserr" ||
		not_ok "--stacks $stacks: speedscope reads the timeline"
	if grep -qE 'Tried to end|still open|stack was empty' "$TMP/$stacks.sserr"; then
		not_ok "--stacks $stacks: speedscope ends every frame it opens"
		grep -E 'Tried to end|still open' "$TMP/$stacks.sserr" | head -n 3 | cut -c1-300 | sed 's/^/#   /'
	else
		ok "--stacks $stacks: speedscope ends every frame it opens"
	fi
	# One frame a function: speedscope's frames are exactly the names of the complete events.
	jq_eq "$TMP/$stacks.ss" '[.profiles[].frames[]] | unique' "$(jq -c '.calls | keys' "$TMP/$stacks.counts")" \
		"--stacks $stacks: speedscope's frames are the functions called, one each"
	jq_check "$t" '.otherData.clamped_calls | type == "number"' "--stacks $stacks: the file says how many calls were clamped"
	note "--stacks $stacks: $(jq .otherData.clamped_calls "$t") calls clamped, $(stat -c %s "$t") bytes"
	# The calls on the timeline are those gputop counted (less records reported lost).
	for f in cudaStreamSynchronize cudaMemcpyAsync cudaMallocAsync; do
		jq_eq "$TMP/$stacks.counts" ".calls.$f" "$(jq "$(api_row $f) | .calls - (.lost // 0)" "$TMP/$stacks.json")" \
			"--stacks $stacks: $f: a complete event per call counted"
	done
	jq_check "$TMP/$stacks.counts" '.launch_events > 0' "--stacks $stacks: launches are on the timeline"
done
finish
