#!/usr/bin/env bash
# Issue 35: an out-of-memory on the SIMULATED runtime and allocator (SIMCUDA_MEM_LIMIT: the
# simulated device holds 200 MiB). torch_blocks asks for 150 MiB more than fits (--oom): the
# allocator frees its cache, tries again, gives up; the program catches it and goes on. Under
# gputop: the same output and status as without it; --oom-report names the request (the
# cudaMalloc of 150 MiB), the allocator's figures as the program prints them, "not
# fragmentation", the 100 MiB block at make_big's line, the request at the program's own line;
# --oom-snapshot is a pickle. Then a fragmentation case (enough bytes free in segments, no
# block large enough), and a program without PyTorch whose own cudaMalloc fails.
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
expect_match "$(cat "$TMP/traced.err")" "out of memory in [0-9]+: cudaMalloc of $REQ bytes on GPU 0 failed \\(error 2\\); PyTorch's allocator gave up after freeing its cache: not fragmentation" \
	"gputop says it: the request, PyTorch's allocator gave up, not fragmentation"
[ -s "$TMP/r.txt" ] || bail "the report was written"
held=$(sed -n 's/^torch_blocks: oom caught allocated=\([0-9]*\) reserved=\([0-9]*\)$/\1 \2/p' "$TMP/plain.out")
OOM_LINE=$(grep -n '/\* OOM \*/' "$ROOT/tests/progs/torch_blocks.c" | cut -d: -f1)
expect_match "$(cat "$TMP/r.txt")" "request: $REQ bytes, GPU 0, cudaMalloc, error 2, at .*torch_blocks.c:$OOM_LINE \\(main\\)" \
	"the report: the request, at the program's line that asked"
expect_match "$(cat "$TMP/r.txt")" "allocator: reserved ${held#* }, allocated ${held% *} " "the report: reserved and allocated as the program's"
expect_match "$(cat "$TMP/r.txt")" "verdict: not fragmentation" "the report: not fragmentation"
expect_match "$(cat "$TMP/r.txt")" " 104857600 +1  .*torch_blocks.c:[0-9]+ \\(make_big\\)" "the report: the 100 MiB block by its line"
python3 -c 'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); assert d["segments"]' "$TMP/o.pickle" &&
	ok "--oom-snapshot: a _snapshot() pickle with segments" || not_ok "--oom-snapshot: a _snapshot() pickle with segments"

# Fragmentation: 150 MiB of device; 18 MiB asked when the segments hold about 21 MiB free in
# pieces of 15 MiB at most.
export SIMCUDA_MEM_LIMIT=$((150 * 1048576))
REQ=$((18 * 1048576))
run_plain "$TMP/plain-frag" "$BIN/torch_blocks" --oom "$REQ"
"$GPUTOP" --stacks allocs --oom-report "$TMP/frag.txt" --json "$TMP/frag.json" -b -- "$BIN/torch_blocks" --oom "$REQ" \
	>"$TMP/frag.out" 2>"$TMP/frag.err"
expect_eq "$?" 0 "fragmentation: exit status 0"
expect_file_eq <(prog_lines "$TMP/frag.out" torch_blocks) "$TMP/plain-frag.out" "fragmentation: the same output as untraced"
free=$(sed -n 's/^segments: .* free in segments \([0-9]*\); largest free block \([0-9]*\)$/\1 \2/p' "$TMP/frag.txt")
[ -n "$free" ] && [ "${free% *}" -ge "$REQ" ] && [ "${free#* }" -lt "$REQ" ] &&
	ok "fragmentation: free in segments (${free% *}) >= the request, the largest free block (${free#* }) below it" ||
	not_ok "fragmentation: free in segments >= the request, the largest free block below it ($free)"
expect_match "$(cat "$TMP/frag.txt")" "verdict: fragmentation" "fragmentation: said so"
held=$(sed -n 's/^torch_blocks: oom caught allocated=\([0-9]*\) reserved=\([0-9]*\)$/\1 \2/p' "$TMP/plain-frag.out")
F=$TMP/frag.json
jq_eq "$F" '.torch_memory.oom | length' 1 "--json: one oom event"
jq_eq "$F" '.torch_memory.oom[0] | [.function, .error, .bytes, .device, .pytorch_gave_up, .fragmentation, .stream]' \
	"[\"cudaMalloc\",2,$REQ,0,true,true,\"0x7000\"]" "--json: the request, PyTorch gave up, fragmentation, its stream"
jq_eq "$F" '.torch_memory.oom[0] | [.reserved_bytes, .allocated_bytes]' "[${held#* },${held% *}]" \
	"--json: reserved and allocated as the program printed them"
jq_eq "$F" '.torch_memory.oom[0].line | [(.file | endswith("torch_blocks.c")), .line]' "[true,$OOM_LINE]" "--json: the request's line"
expect_match "$(cat "$TMP/frag.out")" "OUT OF MEMORY in [0-9]+: cudaMalloc of 18.0 MiB on GPU 0 failed \\(PyTorch's allocator gave up\\) at .*torch_blocks.c:$OOM_LINE; .*: fragmentation" \
	"-b: the out-of-memory line"

# No PyTorch: a program's own cudaMalloc that fails (hold_memory: 10 MiB, then 100 MiB of a
# 50 MiB device) is said and reported too; the program's output and status as untraced (1: it
# counts the failure).
need_bin hold_memory
export SIMCUDA_MEM_LIMIT=$((50 * 1048576))
touch "$TMP/go" "$TMP/stop"
HOLD=("$BIN/hold_memory" --before $((10 * 1048576)) --after $((100 * 1048576)) --go "$TMP/go" --stop "$TMP/stop")
"${HOLD[@]}" >"$TMP/hold-plain.out" 2>&1
plain_status=$?
"$GPUTOP" --stacks allocs --oom-report "$TMP/hold.txt" -b -- "${HOLD[@]}" >"$TMP/hold.out" 2>"$TMP/hold.err"
expect_eq "$?" "$plain_status" "no PyTorch: exit status as untraced ($plain_status)"
expect_eq "$(grep -c '^hold_memory: cudaMalloc failed 1 time' "$TMP/hold.out")" 1 "no PyTorch: the program saw its failure, as untraced"
expect_match "$(cat "$TMP/hold.err")" "out of memory in [0-9]+: cudaMalloc of 104857600 bytes on GPU 0 failed \\(error 2\\)" "no PyTorch: said"
expect_match "$(cat "$TMP/hold.txt")" "request: 104857600 bytes, GPU 0, cudaMalloc, error 2, at .*hold_memory.c:[0-9]+ \\(main\\)" \
	"no PyTorch: the report names the request and its line"
expect_match "$(cat "$TMP/hold.txt")" "^stream: no stream \\(the function takes none\\)" "no PyTorch: cudaMalloc has no stream, said"

# No PyTorch, the driver's virtual memory API (as NCCL makes its buffers): a cuMemCreate of
# 100 MiB on the SIMULATED driver's 50 MiB device, by Python through ctypes. A plain request,
# not an expandable segment's page (that is only PyTorch's allocator's).
need_bin simdrv/libcuda.so.1
VMM='import ctypes
cu = ctypes.CDLL("libcuda.so.1")
h, prop = ctypes.c_uint64(0), (ctypes.c_char * 64)()
print("vmm: cuMemCreate returned", cu.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(104857600), prop, ctypes.c_ulonglong(0)))'
LD_LIBRARY_PATH=$BIN/simdrv python3 -c "$VMM" >"$TMP/vmm-plain.out" 2>&1
expect_eq "$(cat "$TMP/vmm-plain.out")" "vmm: cuMemCreate returned 2" "no PyTorch, cuMemCreate: out of memory untraced"
LD_LIBRARY_PATH=$BIN/simdrv "$GPUTOP" --oom-report "$TMP/vmm.txt" --json "$TMP/vmm.json" -- python3 -c "$VMM" \
	>"$TMP/vmm.out" 2>"$TMP/vmm.err"
expect_eq "$(grep '^vmm:' "$TMP/vmm.out")" "vmm: cuMemCreate returned 2" "no PyTorch, cuMemCreate: the same traced"
expect_match "$(cat "$TMP/vmm.err")" "out of memory in [0-9]+: cuMemCreate of 104857600 bytes on GPU 0 failed \\(error 2\\)" \
	"no PyTorch, cuMemCreate: said as a plain request"
expect_match "$(cat "$TMP/vmm.txt")" "^request: 104857600 bytes, GPU 0, cuMemCreate, error 2" "no PyTorch, cuMemCreate: reported"
[ -s "$TMP/vmm.txt" ] && ! grep -q '^page:' "$TMP/vmm.txt" && ok "no PyTorch, cuMemCreate: no expandable segment's page said" ||
	not_ok "no PyTorch, cuMemCreate: no expandable segment's page said"
jq_eq "$TMP/vmm.json" "$(api_row cuMemCreate) | [.calls, .errors]" "[1,1]" "no PyTorch, cuMemCreate: counted, its error too"
finish
