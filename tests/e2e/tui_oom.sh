#!/usr/bin/env bash
# TUI, issue 35: an out-of-memory said on the status line until the session ends, the key O
# showing the Memory view frozen at that instant, and the key S writing --memory-snapshot's
# file. On the SIMULATED runtime and libc10_cuda.so: a 150 MiB device (SIMCUDA_MEM_LIMIT),
# torch_blocks asks 18 MiB when about 21 MiB are free in pieces of 15 MiB at most
# (fragmentation), catches the failure, frees its 100 MiB block at once (--oom-then free) and
# lingers: the live Memory view has no such block, the frozen one has it at make_big's line.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin torch_blocks sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
command -v python3 >/dev/null || skip "python3 is needed to read the pickle"
L_OOM=$(grep -n '/\* OOM \*/' "$ROOT/tests/progs/torch_blocks.c" | cut -d: -f1)

tui_gputop 220 30 LD_LIBRARY_PATH="$SIM:$BIN/simtorch" SIMCUDA_MEM_LIMIT=$((150 * 1048576)) -- -d 0.3 --stacks allocs \
	--memory-snapshot "$TMP/s.pickle" -- "$BIN/torch_blocks" --oom $((18 * 1048576)) --oom-then free --linger 60000
expect_screen "OUT OF MEMORY in [0-9]+: cudaMalloc of 18\\.0 MiB on GPU 0 failed \\(PyTorch's allocator gave up\\) at .*torch_blocks\\.c:$L_OOM; free in segments 21\\.4 MiB, largest free block 15\\.0 MiB: fragmentation" \
	"the status line says the out-of-memory: the request, its line, fragmentation"
sleep 6	# longer than a message stays (5 s): the banner stays
expect_screen "OUT OF MEMORY in [0-9]+: cudaMalloc" "... and it stays"
tui_keys m
tui_wait 'LINE \(where it was allocated\)' 10
expect_screen_gone 'make_big' "the live Memory view: the 100 MiB block freed after the failure is not there"
tui_keys O
expect_screen "Memory of [0-9]+ FROZEN at the out-of-memory, [0-9]{2}:[0-9]{2}:[0-9]{2} \\([0-9]+ s ago\\)" \
	"O: the Memory view frozen at the out-of-memory, titled with its time"
expect_screen " 104857600 +1  .*torch_blocks\\.c:[0-9]+ \\(make_big\\)" \
	"... by line: the 100 MiB block live then, at make_big's line"
expect_screen "verdict: fragmentation" "... the verdict: fragmentation"
expect_screen "largest blocks:" "... the largest blocks"
tui_keys O
expect_screen_gone 'FROZEN at the out-of-memory' "O again: back to the live view"
tui_keys O
tui_wait 'FROZEN at the out-of-memory' 5
tui_keys Escape
expect_screen_gone 'FROZEN at the out-of-memory' "Esc: back to the live view"
[ -e "$TMP/s.pickle" ] && not_ok "no snapshot before S" || ok "no snapshot before S"
tui_keys S
for _ in $(seq 100); do [ -s "$TMP/s.pickle" ] && break; sleep 0.1; done
python3 -c 'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); assert len(d["segments"]) == 4, d' "$TMP/s.pickle" &&
	ok "S: the snapshot written, its 4 segments" || not_ok "S: the snapshot written, its 4 segments"
tui_keys q k
finish
