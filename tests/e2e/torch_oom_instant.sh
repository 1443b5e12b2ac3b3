#!/usr/bin/env bash
# Issue 35, part 1 of what was left: the out-of-memory's state is the failing instant's, not
# gputop's next look. On the SIMULATED runtime and allocator (SIMCUDA_MEM_LIMIT: a device of
# 200 MiB), torch_blocks asks for 150 MiB more than fits. The call stub's return parks the
# thread whose cudaMalloc failed (error 2) while gputop is there and fresh; gputop reads the
# allocator then.
#  1. --oom-then free: the program frees its 100 MiB block right after the failure is caught.
#     A state read at gputop's next look (up to 10 ms later) has no such block; the report
#     must still show it live at make_big's line, the allocator's figures as the program printed
#     them in its handler, and say that the state was read at the instant.
#  2. --oom-then exit: the program ends at once (status 3), as one that does not catch the
#     error: the report is written all the same, of the instant, and the status is the
#     program's.
#     The request's stream is its own (0x7000; the blocks are on 0x5000): read from the
#     allocator's AllocParams on the failed thread's stack, held.
#  3. expandable_segments:True: PyTorch's allocator maps pages (cuMemCreate, through the
#     SIMULATED driver's pointer, as its DriverAPI's) instead of cudaMalloc; the page that fails
#     holds the thread the same way, and the request is the allocator's (150 MiB, read from its
#     AllocParams), not the 20 MiB page.
#  4. gputop SIGSTOPped before the program's 20 failing allocations (--oom-times 20, after
#     --oom-go): they end while gputop is still stopped (a thread that waited for it would
#     wait until SIGCONT), and after SIGCONT the program ends with the output it has untraced.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin torch_blocks sim/libcudart.so.13 simdrv/libcuda.so.1 simtorch/libc10_cuda.so
need_gputop
export LD_LIBRARY_PATH=$SIM:$BIN/simtorch SIMCUDA_MEM_LIMIT=$((200 * 1048576))
REQ=$((150 * 1048576))
BIG=' 104857600 +1  .*torch_blocks.c:[0-9]+ \(make_big\)'

# 1. Freed right after.
run_plain "$TMP/plain" "$BIN/torch_blocks" --oom "$REQ" --oom-then free
expect_match "$(cat "$TMP/plain.out")" "torch_blocks: oom caught" "untraced: the allocation fails and is caught"
"$GPUTOP" --stacks allocs --oom-report "$TMP/r.txt" -b -- "$BIN/torch_blocks" --oom "$REQ" --oom-then free \
	>"$TMP/traced.out" 2>"$TMP/traced.err"
expect_eq "$?" 0 "freed after: exit status 0, as untraced"
expect_file_eq <(prog_lines "$TMP/traced.out" torch_blocks) "$TMP/plain.out" "freed after: the same output as untraced"
[ -s "$TMP/r.txt" ] || bail "freed after: the report was written"
held=$(sed -n 's/^torch_blocks: oom caught allocated=\([0-9]*\) reserved=\([0-9]*\)$/\1 \2/p' "$TMP/plain.out")
expect_match "$(cat "$TMP/r.txt")" "$BIG" "freed after: the 100 MiB block live in the report, at its line"
expect_match "$(cat "$TMP/r.txt")" "allocator: reserved ${held#* }, allocated ${held% *} " \
	"freed after: reserved and allocated as the program's handler saw them"
expect_match "$(cat "$TMP/r.txt")" "state: read at the failure's instant" "freed after: the report says the state is the instant's"
expect_match "$(cat "$TMP/r.txt")" "^stream: 0x7000 \\(PyTorch's allocator's request\\)" \
	"the request's stream (0x7000, its own; every block is on 0x5000), read from the allocator's request"
expect_match "$(cat "$TMP/traced.err")" "PyTorch's allocator gave up after freeing its cache" "freed after: the allocator gave up, said"

# 2. Not caught: the program ends at once.
run_plain "$TMP/plain-exit" "$BIN/torch_blocks" --oom "$REQ" --oom-then exit
expect_eq "$PLAIN_STATUS" 3 "untraced: the program ends with status 3 at the failure"
"$GPUTOP" --stacks allocs --oom-report "$TMP/exit.txt" --oom-snapshot "$TMP/exit.pickle" -b -- \
	"$BIN/torch_blocks" --oom "$REQ" --oom-then exit >"$TMP/exit.out" 2>"$TMP/exit.err"
expect_eq "$?" 3 "not caught: gputop's status is the program's (3)"
expect_file_eq <(prog_lines "$TMP/exit.out" torch_blocks) "$TMP/plain-exit.out" "not caught: the same output as untraced"
OOM_LINE=$(grep -n '/\* OOM \*/' "$ROOT/tests/progs/torch_blocks.c" | cut -d: -f1)
expect_match "$(cat "$TMP/exit.txt" 2>/dev/null)" "request: $REQ bytes, GPU 0, cudaMalloc, error 2, at .*torch_blocks.c:$OOM_LINE \\(main\\)" \
	"not caught: the report is written, the request at its line"
expect_match "$(cat "$TMP/exit.txt" 2>/dev/null)" "$BIG" "not caught: the blocks in it"
expect_match "$(cat "$TMP/exit.txt" 2>/dev/null)" "state: read at the failure's instant" "not caught: of the instant"
python3 -c 'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); assert d["segments"]' "$TMP/exit.pickle" 2>/dev/null &&
	ok "not caught: --oom-snapshot written" || not_ok "not caught: --oom-snapshot written"

# 3. Expandable segments: a page fails.
(
	export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True LD_LIBRARY_PATH=$SIM:$BIN/simdrv:$BIN/simtorch
	run_plain "$TMP/plain-exp" "$BIN/torch_blocks" --oom "$REQ" --oom-then free
	"$GPUTOP" --stacks allocs --oom-report "$TMP/exp.txt" --json "$TMP/exp.json" -b -- "$BIN/torch_blocks" --oom "$REQ" \
		--oom-then free >"$TMP/exp.out" 2>"$TMP/exp.err"
	echo "$?" >"$TMP/exp.status"
)
expect_match "$(cat "$TMP/plain-exp.out")" "torch_blocks: oom caught" "expandable, untraced: the allocation fails and is caught"
expect_eq "$(cat "$TMP/exp.status")" 0 "expandable: exit status 0, as untraced"
expect_file_eq <(prog_lines "$TMP/exp.out" torch_blocks) "$TMP/plain-exp.out" "expandable: the same output as untraced"
held=$(sed -n 's/^torch_blocks: oom caught allocated=\([0-9]*\) reserved=\([0-9]*\)$/\1 \2/p' "$TMP/plain-exp.out")
report=$(cat "$TMP/exp.txt" 2>/dev/null)
expect_match "$report" "request: $REQ bytes, GPU 0, cuMemCreate, error 2, at .*torch_blocks.c:$OOM_LINE \\(main\\)" \
	"expandable: the request is the allocator's $REQ bytes, at its line, made by cuMemCreate"
expect_match "$report" "^page: the failed cuMemCreate made one 20971520-byte page" "expandable: the failed page said"
expect_match "$report" "^stream: 0x7000 " "expandable: the request's stream"
expect_match "$report" "state: read at the failure's instant" "expandable: the state is the instant's"
expect_match "$report" "$BIG" "expandable: the 100 MiB block (freed right after) live in the report, at its line"
expect_match "$report" "allocator: reserved ${held#* }, allocated ${held% *} " \
	"expandable: reserved and allocated as the program's handler saw them"
python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["torch_memory"]["oom"]; assert len(o) == 1 and o[0]["bytes"] == int(sys.argv[2]) and o[0]["page_bytes"] == 20971520 and o[0]["function"] == "cuMemCreate"' \
	"$TMP/exp.json" "$REQ" 2>/dev/null && ok "expandable: --json's oom: bytes, page_bytes, function" ||
	not_ok "expandable: --json's oom: bytes, page_bytes, function"

# 4. gputop frozen: the failing allocations never wait for it.
run_plain "$TMP/plain-frozen" "$BIN/torch_blocks" --oom "$REQ" --oom-times 20
rb_gputop_bg gp --oom-report "$TMP/frozen.txt" -b -d 0.2 -- "$BIN/torch_blocks" --oom "$REQ" --oom-times 20 \
	--oom-go "$TMP/go"
wait_for_line "$TMP/gp.out" '^ready [0-9]+$' 20 || bail "frozen: the program said ready"
sleep 0.3
kill -STOP "$GPUTOP_PID"
sleep 0.5	# gputop's heartbeat stale (250 ms): a park would not wait from here on anyway
touch "$TMP/go"
if wait_for_line "$TMP/gp.out" '^torch_blocks: oom x 20 in [0-9]+ ms$' 10; then
	ok "frozen: the 20 failing allocations ended while gputop was stopped ($(grep -o 'in [0-9]* ms' "$TMP/gp.out"))"
else
	not_ok "frozen: the 20 failing allocations ended while gputop was stopped"
fi
[ "$(proc_state "$GPUTOP_PID")" == T ] && ok "frozen: gputop was still stopped then" || not_ok "frozen: gputop was still stopped then"
kill -CONT "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "frozen: gputop ends with the program's status (0)"
expect_file_eq <(prog_lines "$TMP/gp.out" torch_blocks | grep -v ' oom x ') <(grep -v ' oom x ' "$TMP/plain-frozen.out") \
	"frozen: the program's output as untraced"
finish
