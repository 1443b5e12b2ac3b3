#!/usr/bin/env bash
# TUI, issue 27: the Memory view (m), on the SIMULATED libc10_cuda.so. gputop launches
# torch_blocks (--stacks allocs; it makes its blocks, then lingers) in a tmux terminal of 120x30:
#  m: the allocator's line, a line for GPU 0 (reserved, allocated as PyTorch counts, free in
#     segments, what empty_cache() would give back), the blocks largest first with their lines;
#  g: live bytes by line, the 100 MiB line first; Enter: its call stack; s sorts.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin torch_blocks sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
L_BIG=$(grep -n '/\* BIG \*/' "$ROOT/tests/progs/torch_blocks.c" | cut -d: -f1)

tui_gputop 120 30 LD_LIBRARY_PATH="$SIM:$BIN/simtorch" -- -d 0.3 --stacks allocs -- "$BIN/torch_blocks" --linger 60000
tui_keys m
expect_screen "PyTorch's caching allocator: 7 live blocks; every block seen handed out" "m: the allocator's line"
expect_screen 'GPU 0: reserved 142 MiB, allocated 121 MiB \(as PyTorch counts\) in 7 blocks, free in segments 21\.4 MiB' \
	"m: GPU 0's line"
expect_screen 'ADDRESS +SIZE.? +REQUESTED +DEV +STREAM +AGE +LINE' "m: the blocks' columns"
expect_screen "0x[0-9a-f]+ +100 MiB +100 MiB +0 +0x5000 .* make_big at torch_blocks\\.c:$L_BIG" "m: the 100 MiB block first, its line"
expect_screen '12\.0 MiB +12\.0 MiB .* take at torch_blocks\.c' "m: then the 12 MiB one"
tui_keys g
expect_screen 'LIVE.? +BLOCKS +OLDEST +LINE' "g: by line"
expect_screen "100 MiB +1 .* make_big at torch_blocks\\.c:$L_BIG" "g: the 100 MiB line first"
expect_screen '20\.6 MiB +6 .* take at torch_blocks\.c' "g: the six others"
tui_keys Enter
expect_screen 'alloc_found_block' "Enter: the line's call stack, from alloc_found_block"
tui_keys Escape
tui_keys g
expect_screen 'ADDRESS +SIZE.? +REQUESTED' "g again: every block"
tui_keys q d
tui_wait_status
expect_eq "$TUI_STATUS" 0 "q d: detach, gputop exits 0"
finish
