#!/usr/bin/env bash
# TUI, issue 35: an out-of-memory said on the status line until the session ends, and the key S
# writing --memory-snapshot's file. On the SIMULATED runtime and libc10_cuda.so: a 150 MiB device
# (SIMCUDA_MEM_LIMIT), torch_blocks asks 18 MiB when about 21 MiB are free in pieces of 15 MiB
# at most (fragmentation), catches the failure and lingers.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin torch_blocks sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
command -v python3 >/dev/null || skip "python3 is needed to read the pickle"
L_OOM=$(grep -n '/\* OOM \*/' "$ROOT/tests/progs/torch_blocks.c" | cut -d: -f1)

tui_gputop 220 30 LD_LIBRARY_PATH="$SIM:$BIN/simtorch" SIMCUDA_MEM_LIMIT=$((150 * 1048576)) -- -d 0.3 --stacks allocs \
	--memory-snapshot "$TMP/s.pickle" -- "$BIN/torch_blocks" --oom $((18 * 1048576)) --linger 60000
expect_screen "OUT OF MEMORY in [0-9]+: cudaMalloc of 18\\.0 MiB on GPU 0 failed \\(PyTorch's allocator gave up\\) at .*torch_blocks\\.c:$L_OOM; free in segments 21\\.4 MiB, largest free block 15\\.0 MiB: fragmentation" \
	"the status line says the out-of-memory: the request, its line, fragmentation"
sleep 6	# longer than a message stays (5 s): the banner stays
expect_screen "OUT OF MEMORY in [0-9]+: cudaMalloc" "... and it stays"
[ -e "$TMP/s.pickle" ] && not_ok "no snapshot before S" || ok "no snapshot before S"
tui_keys S
for _ in $(seq 100); do [ -s "$TMP/s.pickle" ] && break; sleep 0.1; done
python3 -c 'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); assert len(d["segments"]) == 4, d' "$TMP/s.pickle" &&
	ok "S: the snapshot written, its 4 segments" || not_ok "S: the snapshot written, its 4 segments"
tui_keys q k
finish
