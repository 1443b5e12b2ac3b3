#!/usr/bin/env bash
# Issue 12, acceptance 1: native call stacks. tests/progs/stacks.c allocates through
# main -> leak_a -> leak_b -> cudaMalloc at lines marked "@site NAME" (found in the source here,
# not written down twice), on the SIMULATED runtime; gputop shows exactly that chain (function,
# file, line) for the leak in --json (leaks[].stack, memory.by_site) and -b with --stacks allocs;
# the failing cudaMalloc's site and, with --stacks launches, the kernel's launch site too.
# Without debug info the functions stay and the lines go; stripped, the static functions become
# module+offset. By default no call stops or unwinds for a stack (unwinding a PyTorch process at
# each kernel's first launch cost it 95% of its speed after an attach); --stack-depth is obeyed.
source "$(dirname "$0")/../lib.sh"
need_bin stacks stacks_nodebug stacks_stripped sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM
SRC=$ROOT/tests/progs/stacks.c
line_of() {
	grep -n "@site $1\$\|@site $1 " "$SRC" | head -n1 | cut -d: -f1
}
L_B=$(line_of leak_b) L_A=$(line_of leak_a) L_MAIN=$(line_of main)
L_FAIL=$(line_of fail_site) L_LAUNCH=$(line_of launch_site)
note "lines: leak_b $L_B, leak_a $L_A, main $L_MAIN, fail_site $L_FAIL, launch_site $L_LAUNCH"
[ -n "$L_B" ] && [ -n "$L_A" ] && [ -n "$L_MAIN" ] && [ -n "$L_FAIL" ] && [ -n "$L_LAUNCH" ] ||
	bail "the @site marks are in $SRC"

run_plain "$TMP/plain" "$BIN/stacks"
expect_match "$(cat "$TMP/plain.out")" '^stacks: ok leaks=1 failures=0$' "stacks works on the simulated runtime"

# --- with DWARF: function, file and line of every frame of the chain ---------------------------
run_gputop_json "$TMP/s.json" -- -b --stacks allocs,launches -- "$BIN/stacks" || bail "a summary to check"
expect_eq "$GPUTOP_STATUS" 0 "gputop exits with the program's status"
expect_file_eq <(prog_lines "$GPUTOP_OUT" stacks) <(prog_lines "$TMP/plain.out" stacks) "program output is the same"
F=$TMP/s.json
chain='[.[0:4][] | [.function, (if .file then .file | split("/") | last else null end), .line, .module, .python]]'
expected="[[\"cudaMalloc\",null,null,\"libcudart.so.13\",false],[\"leak_b\",\"stacks.c\",$L_B,\"stacks\",false],[\"leak_a\",\"stacks.c\",$L_A,\"stacks\",false],[\"main\",\"stacks.c\",$L_MAIN,\"stacks\",false]]"
jq_eq "$F" ".memory.leaks | length" 1 "one leak"
jq_eq "$F" ".memory.leaks[0].stack | $chain" "$expected" "the leak's stack: cudaMalloc <- leak_b <- leak_a <- main, with lines"
jq_check "$F" ".memory.leaks[0].stack[1].file == \"$SRC\"" "the file is the whole path of the source" ".memory.leaks[0].stack[1].file"
jq_eq "$F" ".memory.by_site | length" 1 "one site holds live memory (churn's allocation was freed)"
jq_eq "$F" ".memory.by_site[0] | {live_bytes, live_allocations, allocated_bytes}" \
	'{"live_bytes":3145728,"live_allocations":1,"allocated_bytes":3145728}' "the site's figures"
jq_eq "$F" ".memory.by_site[0].stack | $chain" "$expected" "the site's stack is the leak's"
jq_eq "$F" "$(api_row cudaMalloc).stops_per_call" 1 "--stacks allocs: cudaMalloc's call stub stops for its stack"
jq_eq "$F" "$(api_row cudaMalloc).error_sites | map({error, count, at: (.stack[1] | [.function, .line])})" \
	"[{\"error\":2,\"count\":1,\"at\":[\"fail_site\",$L_FAIL]}]" "the failing cudaMalloc's site"
jq_eq "$F" "$(kernel_row stacks_kernel).sites | map({samples, at: (.stack[0:3] | map([.function, .line]))})" \
	"[{\"samples\":1,\"at\":[[\"cudaLaunchKernel\",null],[\"launch_site\",$L_LAUNCH],[\"main\",$((L_MAIN + 3))]]}]" \
	"the kernel's first launch site"
# -b: the summary lists the site with its stack.
grep -A5 '^Live memory by allocation site:' "$GPUTOP_OUT" | tail -n 6 >"$TMP/sites.txt"
expect_match "$(sed -n 2p "$TMP/sites.txt")" '^3\.00 MiB in 1 allocation, oldest' "-b summary: the site's figures"
expect_match "$(sed -n 4p "$TMP/sites.txt")" "^    leak_b at $SRC:$L_B \\[stacks\\]\$" "-b summary: leak_b's frame"
expect_match "$(sed -n 5p "$TMP/sites.txt")" "^    leak_a at $SRC:$L_A \\[stacks\\]\$" "-b summary: leak_a's frame"

# --- no debug info, no frame pointers: CFI still unwinds; names from .symtab, no lines --------
run_gputop_json "$TMP/n.json" -- -b --stacks allocs -- "$BIN/stacks_nodebug" || bail "a summary to check"
jq_eq "$TMP/n.json" ".memory.leaks[0].stack | $chain" \
	'[["cudaMalloc",null,null,"libcudart.so.13",false],["leak_b",null,null,"stacks_nodebug",false],["leak_a",null,null,"stacks_nodebug",false],["main",null,null,"stacks_nodebug",false]]' \
	"without -g and frame pointers: the same chain, no file or line"

# --- stripped: static functions have no name left; main is exported (-rdynamic) ---------------
run_gputop_json "$TMP/x.json" -- -b --stacks allocs -- "$BIN/stacks_stripped" || bail "a summary to check"
jq_check "$TMP/x.json" '.memory.leaks[0].stack[1:3] | map(.function | test("^stacks_stripped\\+0x[0-9a-f]+$")) | all' \
	"stripped: leak_b and leak_a as module+offset" '.memory.leaks[0].stack'
jq_eq "$TMP/x.json" '.memory.leaks[0].stack[3].function' '"main"' "stripped: main by its dynamic symbol"

# --- --stack-depth and --stacks ----------------------------------------------------------------
run_gputop_json "$TMP/d.json" -- -b --stacks allocs --stack-depth 2 -- "$BIN/stacks" || bail "a summary to check"
jq_eq "$TMP/d.json" '.memory.leaks[0].stack | map(.function)' '["cudaMalloc","leak_b"]' "--stack-depth 2: two frames"
run_gputop_json "$TMP/0.json" -- -b -- "$BIN/stacks" || bail "a summary to check"
jq_eq "$TMP/0.json" '.memory.leaks[0].stack' null "default: no allocation stack"
jq_eq "$TMP/0.json" "$(api_row cudaMalloc).stops_per_call" 0 "default: cudaMalloc does not stop"
jq_eq "$TMP/0.json" ".memory.leaks | length" 1 "default: the leak is still found"
jq_eq "$TMP/0.json" "$(kernel_row stacks_kernel).sites" '[]' "default: no launch site unwound either"
run_gputop_json "$TMP/n0.json" -- -b --stacks allocs,frees --stacks none -- "$BIN/stacks" || bail "a summary to check"
jq_eq "$TMP/n0.json" "$(api_row cudaMalloc).stops_per_call" 0 "--stacks none after another: the last one counts"
run_gputop_json "$TMP/z.json" -- -b --stack-depth 0 -- "$BIN/stacks" || bail "a summary to check"
jq_eq "$TMP/z.json" "$(kernel_row stacks_kernel).sites" '[]' "--stack-depth 0: no launch site either"
jq_eq "$TMP/z.json" "$(api_row cudaMalloc).stops_per_call" 0 "--stack-depth 0: cudaMalloc does not stop"

# --- bad values: a clear error, exit 2, nothing run --------------------------------------------
for bad in "--stack-depth -1" "--stack-depth 257" "--stack-depth x" "--stacks bogus" "--stacks allocs,,x" "--folded-metric heap"; do
	# shellcheck disable=SC2086
	"$GPUTOP" $bad -- "$BIN/stacks" >"$TMP/bad.out" 2>"$TMP/bad.err"
	expect_eq "$?" 2 "$bad: exit status 2"
	expect_match "$(head -n1 "$TMP/bad.err")" '^gputop: invalid' "$bad: says what is wrong"
	expect_eq "$(cat "$TMP/bad.out")" "" "$bad: the program did not run"
done
finish
