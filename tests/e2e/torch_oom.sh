#!/usr/bin/env bash
# Issue 35: an out-of-memory on the SIMULATED runtime and allocator (SIMCUDA_MEM_LIMIT: the
# simulated device holds 200 MiB). torch_blocks asks for 150 MiB more than fits (--oom): the
# allocator frees its cache, tries again, gives up; the program catches it and goes on. Under
# gputop: the same output and status as without it; --oom-report names the request (the
# cudaMalloc of 150 MiB), the allocator's figures as the program prints them, "not
# fragmentation", the 100 MiB block at make_big's line; --oom-snapshot is a pickle.
source "$(dirname "$0")/../lib.sh"
need_bin torch_blocks sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
export LD_LIBRARY_PATH=$SIM:$BIN/simtorch SIMCUDA_MEM_LIMIT=$((200 * 1048576))
REQ=$((150 * 1048576))
run_plain "$TMP/plain" "$BIN/torch_blocks" --oom "$REQ"
expect_match "$(cat "$TMP/plain.out")" "torch_blocks: oom caught" "untraced: the allocation fails and is caught"
"$GPUTOP" --stacks allocs --oom-report "$TMP/r.txt" --oom-snapshot "$TMP/o.pickle" -b -- \
	"$BIN/torch_blocks" --oom "$REQ" >"$TMP/traced.out" 2>"$TMP/traced.err"
expect_eq "$?" 0 "traced: exit status 0, as untraced"
expect_file_eq <(prog_lines "$TMP/traced.out" torch_blocks) "$TMP/plain.out" "traced: the same output as untraced"
expect_match "$(cat "$TMP/traced.err")" "out of memory in [0-9]+: cudaMalloc of $REQ bytes on GPU 0 failed" "gputop says it"
[ -s "$TMP/r.txt" ] || bail "the report was written"
held=$(sed -n 's/^torch_blocks: oom caught allocated=\([0-9]*\) reserved=\([0-9]*\)$/\1 \2/p' "$TMP/plain.out")
expect_match "$(cat "$TMP/r.txt")" "request: $REQ bytes, GPU 0, cudaMalloc, error 2" "the report: the request"
expect_match "$(cat "$TMP/r.txt")" "allocator: reserved ${held#* }, allocated ${held% *} " "the report: reserved and allocated as the program's"
expect_match "$(cat "$TMP/r.txt")" "verdict: not fragmentation" "the report: not fragmentation"
expect_match "$(cat "$TMP/r.txt")" " 104857600 +1  .*torch_blocks.c:[0-9]+ \\(make_big\\)" "the report: the 100 MiB block by its line"
python3 -c 'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); assert d["segments"]' "$TMP/o.pickle" &&
	ok "--oom-snapshot: a _snapshot() pickle with segments" || not_ok "--oom-snapshot: a _snapshot() pickle with segments"
finish
