#!/usr/bin/env bash
# Issue 27: live bytes by Python line. tests/progs/torch_alloc.py allocates through the SIMULATED
# libc10_cuda.so with ctypes (as torch.empty would): 64 MiB at the line marked "@site big", eight
# blocks of 1 MiB at "@site small". With --stacks allocs, torch_memory's by_line names those two
# Python lines, the big one first, with their live bytes; the blocks' sites are Python frames.
source "$(dirname "$0")/../lib.sh"
need_bin sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "Debian's /usr/bin/python3.11 is not installed"
PROG=$ROOT/tests/progs/torch_alloc.py
line_of() {
	grep -n "@site $1\$" "$PROG" | head -n1 | cut -d: -f1
}
L_BIG=$(line_of big) L_SMALL=$(line_of small)
MiB=1048576
TM=.torch_memory

export LD_LIBRARY_PATH=$SIM
run_gputop_json "$TMP/py.json" -- -b --stacks allocs -- "$PY" "$PROG" "$BIN/simtorch/libc10_cuda.so" || bail "a summary"
expect_eq "$(prog_lines "$GPUTOP_OUT" torch_alloc)" "torch_alloc: ok allocated=$((72 * MiB))" "the program works under gputop"
F=$TMP/py.json
jq_eq "$F" "$TM.devices[0].allocated_bytes" $((72 * MiB)) "72 MiB live"
site='{function: .site.function, file: (.site.file | split("/") | last), line: .site.line, python: .site.python, live_bytes, live_blocks}'
jq_eq "$F" "[$TM.by_line[] | $site]" \
	"[{\"function\":\"build\",\"file\":\"torch_alloc.py\",\"line\":$L_BIG,\"python\":true,\"live_bytes\":$((64 * MiB)),\"live_blocks\":1},{\"function\":\"build\",\"file\":\"torch_alloc.py\",\"line\":$L_SMALL,\"python\":true,\"live_bytes\":$((8 * MiB)),\"live_blocks\":8}]" \
	"by line: build() line $L_BIG (64 MiB), then line $L_SMALL (8 x 1 MiB)"
jq_eq "$F" "$TM.largest_blocks[0] | [.bytes, .site.line, .site.python]" "[$((64 * MiB)),$L_BIG,true]" \
	"the largest block's site is its Python line"
finish
