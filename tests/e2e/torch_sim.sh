#!/usr/bin/env bash
# Issue 27: PyTorch's memory by block, on the SIMULATED libc10_cuda.so (tests/sim/c10_cuda.c: the
# caching allocator in miniature, PyTorch 2.10+'s layouts and symbols) over the SIMULATED runtime.
# tests/progs/torch_blocks allocates and frees known sizes and prints what the allocator counts
# (memory_allocated(), memory_reserved() and every live block): gputop's torch_memory must say the
# same, exactly, with no stop per allocation.
#  1. Launch mode: live bytes, reserved, blocks largest first (sizes and requested sizes), calls.
#  2. --stacks allocs: live bytes by line; the 100 MiB block's line is the one marked BIG.
#  3. expandable_segments:True (pages mapped as needed): the same, exactly.
#  4. A libc10_cuda.so whose allocator gputop does not know: said once, the rest as usual.
#  5. No PyTorch: torch_memory says absent.
#  6. A Block with one more field than gputop's tables know: found by its values, exact.
source "$(dirname "$0")/../lib.sh"
need_bin torch_blocks basic sim/libcudart.so.13 simtorch/libc10_cuda.so simtorch_other/libc10_cuda.so \
	simtorch_extra/libc10_cuda.so
need_gputop

PROG_SRC=$ROOT/tests/progs/torch_blocks.c
L_BIG=$(grep -n '/\* BIG \*/' "$PROG_SRC" | cut -d: -f1)
L_TAKE=$(grep -n '/\* TAKE \*/' "$PROG_SRC" | cut -d: -f1)
TM=.torch_memory

# check_figures NAME JSON OUT [STOPS]: torch_memory against what the program printed; STOPS:
# what a call of each of the allocator's two functions costs in stops (default: no stop).
check_figures() {
	local name=$1 F=$2 out=$3 stops=${4:-'[0,0]'} allocated reserved live
	allocated=$(sed -n 's/^torch_blocks: allocated=\([0-9]*\) .*/\1/p' "$out")
	reserved=$(sed -n 's/^torch_blocks: allocated=[0-9]* reserved=\([0-9]*\) .*/\1/p' "$out")
	live=$(sed -n 's/^torch_blocks: allocated=.* live=\([0-9]*\)$/\1/p' "$out")
	[ -n "$allocated" ] || { not_ok "$name: the program printed its figures"; return; }
	jq_eq "$F" "$TM.state" '"tracking"' "$name: the allocator is followed"
	jq_eq "$F" "$TM.devices | length" 1 "$name: one device"
	jq_eq "$F" "$TM.devices[0].allocated_bytes" "$allocated" "$name: live blocks = memory_allocated()"
	jq_eq "$F" "$TM.devices[0].allocator_allocated_bytes" "$allocated" "$name: the allocator's own count read"
	jq_eq "$F" "$TM.devices[0].agrees" true "$name: they agree"
	jq_eq "$F" "$TM.devices[0].reserved_bytes" "$reserved" "$name: reserved = memory_reserved()"
	jq_eq "$F" "$TM.devices[0].free_in_segments_bytes" $((reserved - allocated)) "$name: free in segments"
	jq_eq "$F" "$TM.devices[0].live_blocks" "$live" "$name: $live live blocks"
	jq_eq "$F" "[$TM.largest_blocks[] | [.bytes, .requested_bytes]]" \
		"$(sed -n 's/^torch_blocks: block \([0-9]*\) \([0-9]*\)$/[\1,\2]/p' "$out" | paste -sd, | sed 's/^/[/; s/$/]/')" \
		"$name: the blocks, largest first, sizes and requested sizes"
	jq_eq "$F" "$TM.allocs" 11 "$name: 11 blocks handed out"
	jq_eq "$F" "$TM.frees" 4 "$name: 4 taken back"
	jq_eq "$F" "$TM.unknown_frees + $TM.unread_blocks" 0 "$name: every block read, every free known"
	jq_eq "$F" "$TM.blocks_before_attach" '"none"' "$name: launched: no block before gputop"
	jq_eq "$F" "[.api[] | select(.layer == \"torch\") | {name, calls, errors}] | sort_by(.name)" \
		'[{"name":"DeviceCachingAllocator::alloc_found_block","calls":11,"errors":0},{"name":"DeviceCachingAllocator::free","calls":4,"errors":0}]' \
		"$name: the allocator's calls in the API table"
	jq_eq "$F" "[.api[] | select(.layer == \"torch\")] | sort_by(.name) | map(.stops_per_call)" "$stops" \
		"$name: stops per call $stops (alloc_found_block, free)"
}

export LD_LIBRARY_PATH=$SIM:$BIN/simtorch

# --- 1. launch mode ---------------------------------------------------------------------------
run_plain "$TMP/plain" "$BIN/torch_blocks"
run_gputop_json "$TMP/launch.json" -- -b -- "$BIN/torch_blocks" || bail "a summary"
expect_file_eq <(prog_lines "$GPUTOP_OUT" torch_blocks) "$TMP/plain.out" "launch: the program prints the same under gputop"
check_figures launch "$TMP/launch.json" "$GPUTOP_OUT"
F=$TMP/launch.json
jq_eq "$F" "$TM.largest_blocks[0] | {bytes, before_attach, expandable_segment}" \
	'{"bytes":104857600,"before_attach":false,"expandable_segment":false}' "launch: the 100 MiB block first"
jq_eq "$F" "$TM.devices[0].empty_cache_bytes" 0 "launch: empty_cache() would give nothing back (every segment holds a block)"
jq_eq "$F" "[$TM.largest_blocks[].site] | unique" '[null]' "launch: no stack without --stacks"
jq_eq "$F" ".processes[0]$TM.devices[0].allocated_bytes" "$(jq "$TM.devices[0].allocated_bytes" "$F")" \
	"launch: the process's own torch_memory"
jq_eq "$F" '[.api[] | select(.name == "cudaMalloc") | .calls][0]' 4 "launch: its 4 segments are cudaMalloc calls as before"
jq_eq "$F" '.memory.by_caller | map(select(.module == "libc10_cuda.so")) | .[0].live_bytes' \
	"$(jq "$TM.devices[0].reserved_bytes" "$F")" "launch: cudaMalloc'd by libc10_cuda.so: its reserved bytes"

# --- 2. --stacks allocs: by line ---------------------------------------------------------------
run_gputop_json "$TMP/stacks.json" -- -b --stacks allocs -- "$BIN/torch_blocks" || bail "a summary"
check_figures stacks "$TMP/stacks.json" "$GPUTOP_OUT" '[1,0]'	# a stop per block for its stack
F=$TMP/stacks.json
jq_eq "$F" "$TM.by_line[0] | {function: .site.function, file: (.site.file | split(\"/\") | last), line: .site.line, live_bytes, live_blocks}" \
	"{\"function\":\"make_big\",\"file\":\"torch_blocks.c\",\"line\":$L_BIG,\"live_bytes\":104857600,\"live_blocks\":1}" \
	"stacks: top line by live bytes: the one that made the 100 MiB block (line $L_BIG)"
jq_eq "$F" "$TM.by_line[1] | {function: .site.function, line: .site.line, live_blocks}" \
	"{\"function\":\"take\",\"line\":$L_TAKE,\"live_blocks\":6}" "stacks: the other six from take(), line $L_TAKE"
jq_eq "$F" "$TM.largest_blocks[0].site.line" "$L_BIG" "stacks: the largest block's site"
jq_check "$F" "$TM.by_line[0].stack | map(.function) | index(\"make_big\") > 0" "stacks: its stack goes through make_big"
jq_eq "$F" "$TM.by_line[0].stack[0].function" '"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_found_block(c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::AllocParams const&, unsigned long, std::shared_ptr<c10::GatheredContext>, bool)"' \
	"stacks: the stack begins at alloc_found_block, demangled"

# --- 3. expandable segments -------------------------------------------------------------------
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
run_gputop_json "$TMP/exp.json" -- -b -- "$BIN/torch_blocks" || bail "a summary"
check_figures expandable "$TMP/exp.json" "$GPUTOP_OUT"
F=$TMP/exp.json
jq_eq "$F" "[$TM.largest_blocks[].expandable_segment] | unique" '[true]' "expandable: every block in an expandable segment"
jq_eq "$F" '[.api[] | select(.name == "cudaMalloc") | .calls][0] // 0' 0 "expandable: no cudaMalloc"
unset PYTORCH_CUDA_ALLOC_CONF

# --- 4. an allocator gputop does not know ----------------------------------------------------
export LD_LIBRARY_PATH=$SIM:$BIN/simtorch_other
run_gputop_json "$TMP/other.json" -- -b -- "$BIN/torch_blocks" || bail "a summary"
F=$TMP/other.json
expect_eq "$GPUTOP_STATUS" 0 "other: gputop exits with the program's status"
expect_eq "$(grep -c "libc10_cuda.so: PyTorch's caching allocator is not one gputop knows" "$GPUTOP_ERR")" 1 \
	"other: says once that it does not know the allocator"
jq_eq "$F" "$TM | {state, devices: (.devices | length)}" '{"state":"unknown","devices":0}' "other: torch_memory: unknown, nothing shown"
jq_check "$F" "$TM.message | test(\"not one gputop knows\")" "other: torch_memory says why"
jq_eq "$F" '[.api[] | select(.name == "cudaMalloc") | .calls][0]' 4 "other: cudaMalloc counted as before"
jq_eq "$F" '.memory.live_bytes' "$(jq "$TM.devices[0].reserved_bytes" "$TMP/launch.json")" "other: live cudaMalloc bytes as before"

# --- 5. no PyTorch ----------------------------------------------------------------------------
export LD_LIBRARY_PATH=$SIM
run_gputop_json "$TMP/none.json" -- -b -- "$BIN/basic" 1 || bail "a summary"
jq_eq "$TMP/none.json" "$TM | {state, message, devices: (.devices | length)}" \
	'{"state":"absent","message":null,"devices":0}' "no PyTorch: torch_memory says absent"
expect_eq "$(grep -ci 'pytorch' "$GPUTOP_ERR")" 0 "no PyTorch: nothing said of it"

# --- 6. a Block laid out otherwise ------------------------------------------------------------
export LD_LIBRARY_PATH=$SIM:$BIN/simtorch_extra GPUTOP_DEBUG=1
run_gputop_json "$TMP/extra.json" -- -b -- "$BIN/torch_blocks" || bail "a summary"
check_figures extra "$TMP/extra.json" "$GPUTOP_OUT"
expect_eq "$(grep -c "Blocks laid out as in neither: found by its fields' values (requested_size at 72)" "$GPUTOP_ERR")" 1 \
	"extra: the layout found by the fields' values, said"
finish
