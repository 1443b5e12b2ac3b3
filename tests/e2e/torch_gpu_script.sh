#!/usr/bin/env bash
# Issue 27: scripts/gpu-torch-memory, the acceptance run the GPU machine makes, tried here without
# a GPU: tests/gpu/torch_memory.py runs over a STAND-IN torch (tests/sim/fake_torch: torch's API as
# far as the script uses it, tensors' memory from the SIMULATED libc10_cuda.so), so that the
# script's own steps (start, attach, report, detach, check, the table) and torch_memory.py's
# checks are exercised: every case but the paired-windows cost passes, and the table says so.
source "$(dirname "$0")/../lib.sh"
need_bin sim/libcudart.so.13 simtorch/libc10_cuda.so
need_gputop
command -v python3 >/dev/null || skip "no python3"

export GPU_TORCH_MEMORY_FORCE=1 PYTHONPATH=$ROOT/tests/sim/fake_torch LD_LIBRARY_PATH=$SIM \
	SIMTORCH_LIB=$BIN/simtorch/libc10_cuda.so GPUTOP GPU_TORCH_MEMORY_SETTLE=1 TORCH_MEMORY_QUIET=2 \
	CASES="eager expandable compile oracle quiet frozen kill9" OUT=$TMP/run
timeout 600 "$ROOT/scripts/gpu-torch-memory" >"$TMP/out" 2>&1
expect_eq "$?" 0 "the script passes on the stand-in (exit status 0)"
expect_match "$(cat "$TMP/out")" '^gpu-torch-memory: 66 passed, 0 failed' "its summary: every check passed"
for c in eager expandable compile oracle; do
	expect_match "$(cat "$TMP/out")" "^PASS +$c: live blocks = memory_allocated\\(\\) = [0-9]+" "$c: the exact live bytes check ran"
	expect_match "$(cat "$TMP/out")" "^PASS +$c: top Python line by live bytes: line [0-9]+, the big tensor's" "$c: the line check ran"
done
for c in quiet frozen; do	# the Blocks kept in place, no record of them (gputop frozen 2 s: frozen)
	expect_match "$(cat "$TMP/out")" "^PASS +$c: live blocks = memory_allocated\\(\\) = [0-9]+" "$c: the exact live bytes check ran"
done
expect_match "$(cat "$TMP/out")" "^PASS +oracle: \\(the oracle\\) _snapshot\\(\\)'s history" "oracle: the history check ran"
expect_match "$(cat "$TMP/out")" '^PASS +kill9: the loop ends well after gputop was killed with SIGKILL' "kill9 ran"
grep -E '^(FAIL|not ok)' "$TMP/out" | head -n 10 | sed 's/^/# /'
finish
