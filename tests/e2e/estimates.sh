#!/usr/bin/env bash
# --max-overhead: launch figures become estimates, and say so in -b output and in --json, while
# every other figure stays exact. The simulated demo runs for 2 s (ten budget periods) with a
# 1% budget; how many steps it made it prints itself, and each step's calls are fixed
# (tests/progs/demo.cpp), so the exact figures are known afterwards. (The TUI's marks are
# checked by tui_estimate.sh.) Launches through the launch ring (the driver's, and the runtime's
# where libcuda is not probed) cost no stop and are never shed: GPUTOP_LAUNCH_RING=0 gives the
# simulated runtime's launches their int3 back, where --max-overhead samples them.
source "$(dirname "$0")/../lib.sh"
need_bin demo
need_gputop
export LD_LIBRARY_PATH=$SIM GPUTOP_LAUNCH_RING=0

run_gputop_json "$TMP/est.json" -- -b -d 0.5 --max-overhead 1 -- "$BIN/demo" 2 || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
steps=$(sed -n 's/^demo: steps=\([0-9]*\)$/\1/p' "$GPUTOP_OUT")
[ -n "$steps" ] || bail "the demo's step count in its output"
note "the demo made $steps steps"

F=$TMP/est.json
jq_eq "$F" '.launches_estimated' true "JSON: launch figures are marked as estimates"
# Exact, whatever the budget: every call but the launches (setup: 6 cudaMalloc, 1 host).
expect_api "$F" cudaMallocAsync "$steps" 0
expect_api "$F" cudaFreeAsync "$steps" 0
expect_api "$F" cudaMemcpyAsync "$steps" 0
expect_api "$F" cudaMemcpy "$steps" 0
expect_api "$F" cudaStreamSynchronize "$steps" 0
jq_eq "$F" '.memory.allocations' "$((steps + 7))" "JSON: every allocation counted, none estimated"
jq_eq "$F" '.memory.frees' "$(jq '[.api[] | select(.name | test("Free")) | .calls] | add' "$F")" \
	"JSON: every free counted"
jq_check "$F" '[.memory.leaks[] | select(.bytes == 16777216)] | length == 1' "JSON: the 16 MiB leak is there"

# -b: every launch figure carries a "~", the figures that are exact do not.
expect_match "$(grep -E '^ml::linear_forward' "$GPUTOP_OUT" | tail -n 1)" '~[0-9.]+k? +~' \
	"-b: a kernel's launches and launches per second are marked ~"
expect_match "$(grep -E '^cudaLaunchKernel ' "$GPUTOP_OUT" | tail -n 1)" '~[0-9]' \
	"-b: the launch function's call count is marked ~"
expect_match "$(grep -E '^cudaMallocAsync ' "$GPUTOP_OUT" | tail -n 1)" '^cudaMallocAsync +[0-9]' \
	"-b: an allocation function's call count is not marked"
expect_match "$(grep -E 'launches \(estimated\)' "$GPUTOP_OUT")" 'estimated' \
	"-b: the summary says the launches are estimated"

# Without a budget nothing is marked.
run_gputop_json "$TMP/exact.json" -- -b -d 0.5 -- "$BIN/demo" 1 || bail "a summary to check"
jq_eq "$TMP/exact.json" '.launches_estimated' false "no budget: JSON launches are exact"
steps=$(sed -n 's/^demo: steps=\([0-9]*\)$/\1/p' "$GPUTOP_OUT")
jq_eq "$TMP/exact.json" '.launches' "$((steps * 12))" "no budget: 12 launches a step, exactly"
expect_eq "$(grep -c '~' "$GPUTOP_OUT")" 0 "no budget: no ~ in -b output"

# With the launch ring (the default) the same budget has no launch stop to shed: exact.
unset GPUTOP_LAUNCH_RING
run_gputop_json "$TMP/ring.json" -- -b -d 0.5 --max-overhead 1 -- "$BIN/demo" 1 || bail "a summary to check"
jq_eq "$TMP/ring.json" '.launches_estimated' false "launch ring, --max-overhead 1: launches exact"
steps=$(sed -n 's/^demo: steps=\([0-9]*\)$/\1/p' "$GPUTOP_OUT")
jq_eq "$TMP/ring.json" '[.kernels[].launches] | add' "$((steps * 12))" \
	"launch ring: 12 launches a step, recorded or dropped by a full ring"
finish
