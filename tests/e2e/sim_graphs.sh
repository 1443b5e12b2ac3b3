#!/usr/bin/env bash
# CUDA graphs (issue 15) on the SIMULATED runtime and driver, which record a capture's nodes and
# replay them (tests/progs/graphs.c checks its own result: kernel runs as the driver counted
# them, and the bytes its graph's memset and copy left).
#  1. capture: 10 launches of gk captured, the graph launched 100 times, 7 direct dk: gk 1,000
#     graph executions and 0 launches, dk 7 launches, 100 graph launches; the captured memset and
#     copy are not transfers, the graph's are (100 executions of 4 KiB each).
#  2. explicit node calls: 3 gk nodes, launched 50 times: gk 150 graph executions.
#  3. cudaGraphExecUpdate: 10 launches with 2 gk, then 20 with 2 dk: gk 20, dk 40.
#  3b. threads: while the stream captures, another thread launches dk 50 times on its own stream:
#     those ran and count (dk 57 launches), the captured ones do not.
#  4. attach after the graph was captured (before its instantiation): as in 1, counted exactly.
#  5. attach after the instantiation: the 100 graph launches are counted, but the driver cannot
#     tell an executable graph's nodes, so the graph says so (nodes null) and names no kernel.
source "$(dirname "$0")/../lib.sh"
need_bin graphs sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop

export LD_LIBRARY_PATH=$SIM:$SIMDRV

# kernel_runs F NAME: [direct launches, graph executions] of kernel NAME.
kernel_runs() {
	jq -c --arg n "$2" '[.kernels[] | select(.name == $n) | .launches, .graph_launches]' "$1"
}

check_capture() {
	local F=$1 what=$2
	expect_eq "$(kernel_runs "$F" gk)" '[0,1000]' "$what: gk 0 launches, 1000 graph executions"
	expect_eq "$(kernel_runs "$F" dk)" '[7,0]' "$what: dk 7 launches"
	jq_eq "$F" '.launches' 7 "$what: 7 launches in all"
	jq_eq "$F" '.graph_launches' 100 "$what: 100 graph launches"
	jq_eq "$F" '.graph_kernel_runs' 1000 "$what: 1000 kernel executions in graphs"
	jq_eq "$F" '[.graphs[] | {nodes, kernels, copies, memsets, launches}]' \
		'[{"nodes":12,"kernels":10,"copies":1,"memsets":1,"launches":100}]' "$what: one graph of 12 nodes"
	jq_eq "$F" '.transfers' '[]' "$what: a captured copy is no transfer"
	jq_eq "$F" '.memset.calls' 0 "$what: a captured memset is no memset"
	jq_eq "$F" '.graph_transfers' '[{"kind":"D2H","executions":100,"bytes":409600}]' \
		"$what: the graph's copy ran 100 times"
	jq_eq "$F" '.graph_memset' '{"executions":100,"bytes":409600}' "$what: the graph's memset ran 100 times"
}

# --- 1-3: launch mode ------------------------------------------------------------------------
for mode in capture explicit update threads; do
	run_plain "$TMP/plain-$mode" "$BIN/graphs" "$mode"
	expect_match "$(cat "$TMP/plain-$mode.out")" "^graphs: ok $mode\$" "$mode: the program's own check passes without gputop"
	run_gputop_json "$TMP/$mode.json" -- -- "$BIN/graphs" "$mode" || continue
	expect_eq "$GPUTOP_STATUS" 0 "$mode: gputop exits with the program's status"
	expect_file_eq <(prog_lines "$GPUTOP_OUT" graphs) <(prog_lines "$TMP/plain-$mode.out" graphs) \
		"$mode: program output as without gputop"
done
check_capture "$TMP/capture.json" capture
# Cost: a graph launch goes through the launch ring, no stop (the whole run stops fewer times
# than it launches the graph).
jq_eq "$TMP/capture.json" "$(api_row cuGraphLaunch) | [.calls, .stops_per_call]" '[100,0]' \
	"capture: cuGraphLaunch called 100 times, no stop per call"
jq_check "$TMP/capture.json" '.cost.stops < .graph_launches' "capture: fewer stops in all than graph launches"
F=$TMP/explicit.json
expect_eq "$(kernel_runs "$F" gk)" '[0,150]' "explicit: gk 150 graph executions"
jq_eq "$F" '[.graphs[] | {nodes, kernels, launches}]' '[{"nodes":5,"kernels":3,"launches":50}]' \
	"explicit: one graph of 5 nodes, 50 launches"
jq_eq "$F" "$(api_row cudaGraphAddKernelNode).calls" 3 "explicit: 3 cudaGraphAddKernelNode calls"
jq_check "$F" '[.graphs[].pid] == [.processes[0].pid] and .processes[0].pid > 0' \
	"explicit: the graph names its process (ids are per process)"
F=$TMP/update.json
expect_eq "$(kernel_runs "$F" gk)" '[0,20]' "update: gk 20 graph executions"
expect_eq "$(kernel_runs "$F" dk)" '[0,40]' "update: dk 40 graph executions"
jq_eq "$F" '[.graphs[] | {nodes, launches}]' '[{"nodes":2,"launches":30}]' "update: the updated graph keeps its row"

# The tables (-b shares its cells with the TUI's Kernels and Bandwidth views): direct launches and
# executions in graphs apart, graph copies on rows of their own.
run_gputop_json "$TMP/table.json" -- -b -- "$BIN/graphs" capture
expect_match "$(grep -E '^KERNEL' "$GPUTOP_OUT" | tail -1)" 'LAUNCHES +IN GRAPHS' "-b: the kernel table has an IN GRAPHS column"
expect_match "$(grep -E '^gk ' "$GPUTOP_OUT" | tail -1)" '^gk +0 +1\.00k ' "-b: gk 0 launches, 1.00k in graphs"
expect_match "$(grep -E '^dk ' "$GPUTOP_OUT" | tail -1)" '^dk +7 +0 ' "-b: dk 7 launches, 0 in graphs"
expect_match "$(grep -E '^D2H graph ' "$GPUTOP_OUT" | tail -1)" '^D2H graph +100 +400 KiB' "-b: the graph's copy, 100 executions"
expect_match "$(grep -E '^memset graph ' "$GPUTOP_OUT" | tail -1)" '^memset graph +100 +400 KiB' "-b: the graph's memset"
expect_match "$(grep 'exit status' "$GPUTOP_OUT")" '7 launches, 1000 kernel runs in 100 graph launches' "-b: the summary line"

F=$TMP/threads.json
expect_eq "$(kernel_runs "$F" gk)" '[0,1000]' "threads: gk 0 launches, 1000 graph executions"
expect_eq "$(kernel_runs "$F" dk)" '[57,0]' "threads: dk 57 launches (50 while the other stream captured)"
jq_eq "$F" '.graphs[0].nodes' 12 "threads: the graph has the captured nodes only"

# --- 3c. the GPU check's program (nvcc, <<<>>> launches of CUDA 13 kernel handles) --------------
if [ -x "$BIN/gpu_graphs" ]; then
	run_gputop_json "$TMP/nvcc.json" -- -- env GPUCHECK_SIMULATED=1 "$BIN/gpu_graphs"
	expect_eq "$GPUTOP_STATUS" 0 "nvcc: gputop exits with the program's status"
	expect_eq "$(kernel_runs "$TMP/nvcc.json" 'gk(unsigned long long*)')" '[0,1000]' "nvcc: gk 1000 graph executions"
	expect_eq "$(kernel_runs "$TMP/nvcc.json" 'dk(unsigned long long*)')" '[7,0]' "nvcc: dk 7 launches"
	jq_eq "$TMP/nvcc.json" '[.graphs[] | {nodes, launches}]' '[{"nodes":10,"launches":100}]' "nvcc: one graph of 10 nodes"
else
	note "nvcc part skipped: tests/bin/gpu_graphs not built (no nvcc)"
fi

# --- 4-5: attach mode ------------------------------------------------------------------------
if can_attach_to_others; then
	for wait in built instantiated; do
		spawn "$TMP/t-$wait" "$BIN/graphs" capture --go "$TMP/go-$wait" --wait "$wait"
		TARGET=$SPAWNED_PID
		wait_for_line "$TMP/t-$wait.out" '^ready [0-9]+$' 30 || bail "$wait: the program said ready"
		spawn "$TMP/gputop-$wait" "$GPUTOP" -p "$TARGET" --json "$TMP/attach-$wait.json" -b -d 0.2
		GPUTOP_PID=$SPAWNED_PID
		wait_for_line "$TMP/gputop-$wait.err" 'attached' 30 || not_ok "$wait: gputop says it attached"
		touch "$TMP/go-$wait"
		wait_pid "$TARGET" 30
		expect_eq "$WAIT_STATUS" 0 "$wait: the program's own check passes under gputop"
		wait_pid "$GPUTOP_PID" 30
		expect_eq "$WAIT_STATUS" 0 "$wait: gputop ends with the program, status 0"
	done
	check_capture "$TMP/attach-built.json" "attach after capture"
	F=$TMP/attach-instantiated.json
	jq_eq "$F" '.graph_launches' 100 "attach after instantiation: 100 graph launches"
	jq_eq "$F" '[.graphs[] | {nodes, kernels, launches}]' '[{"nodes":null,"kernels":null,"launches":100}]' \
		"attach after instantiation: the graph's nodes are not known, and it says so"
	expect_eq "$(kernel_runs "$F" dk)" '[7,0]' "attach after instantiation: dk 7 launches"
else
	note "attach parts skipped: this user may not ptrace other processes"
fi
finish
