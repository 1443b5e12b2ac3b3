#!/usr/bin/env bash
# TUI, issue 11 parts 3-4: the Communication view (c) and the figures by GPU (G), on the
# SIMULATED runtime, driver and NCCL. gputop launches nccl_job (one process driving two devices
# through ncclCommInitAll; it then waits for a stop file) in a tmux terminal of 120x34:
#  c: a row per NCCL operation with the calls and bytes nccl_job's own account gives, ranks
#     "0/2" and "1/2" not shown for one process of two ranks (its rank is "—"), the totals line
#     and the GPU x GPU matrix of the ring of ncclSend (GPU0 -> GPU1, GPU1 -> GPU0);
#  G: one row per GPU with its live memory and allocations; G again goes back; Tab leaves it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin nccl_job sim/libcudart.so.13 simdrv/libcuda.so.1 simnccl/libnccl.so.2
need_gputop

ACC=$TMP/account
STOP=$TMP/stop
tui_gputop 120 34 LD_LIBRARY_PATH="$SIM:$SIMDRV:$BIN/simnccl" SIMCUDA_DEVICES=2 NCCL_JOB_ACCOUNT="$ACC" \
	NCCL_JOB_STOP="$STOP" -- -d 0.5 -- "$BIN/nccl_job" all 3
deadline=$(($(date +%s) + TUI_WAIT))
while [ ! -s "$ACC" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
[ -s "$ACC" ] || { tui_show_screen; bail "nccl_job wrote its account under gputop"; }

expect_screen 'Comm' "the Comm view has a tab"
tui_keys c
expect_screen 'RANK[^ ]* +OPERATION +CALLS +BYTES' "c shows the Communication view"
# Every op of the account, with its calls (small counts: written as they are).
for op in AllReduce AllGather ReduceScatter Broadcast Reduce AlltoAll Send Recv; do
	calls=$(jq -r --arg op "$op" '.collectives[$op].calls' "$ACC")
	expect_screen "— +$op +$calls " "c: $op, $calls calls (the program's account)"
done
expect_screen 'NCCL: [0-9]+ calls, .*2 communicator\(s\); P2P: ' "c: the totals line, two communicators"
expect_screen 'FROM \\ TO +GPU0 +GPU1' "c: the P2P matrix's columns"
b01=$(jq -r '.p2p[] | select(.src_device == 0 and .dst_device == 1) | .bytes' "$ACC")
expect_screen "GPU0 +— +$(awk -v b="$b01" 'BEGIN { printf "%.1f KiB", b / 1024 }')" \
	"c: GPU0 -> GPU1 as the program sent ($b01 B)"
expect_screen 'GPU1 +[0-9.]+ KiB +—' "c: GPU1 -> GPU0"

tui_keys G
expect_screen 'GPU[^ ]* +LIVE +ALLOCS +LAUNCHES' "G shows the figures by GPU"
expect_screen '^ +0 +1\.00 MiB +2 ' "G: GPU 0, 1 MiB live, 2 allocations (the program's, its communicator's freed)"
expect_screen '^ +1 +1\.00 MiB +2 ' "G: GPU 1, 1 MiB live, 2 allocations"
tui_keys G
expect_screen 'RANK[^ ]* +OPERATION +CALLS +BYTES' "G again: back to the Communication view"
tui_keys G
expect_screen 'GPU[^ ]* +LIVE +ALLOCS' "G once more"
tui_keys Tab
expect_screen_gone 'GPU[^ ]* +LIVE +ALLOCS' "Tab leaves the figures by GPU"

touch "$STOP"
expect_screen 'program exited with status 0' "nccl_job ends when told"
tui_keys q
tui_wait_status 30
expect_eq "$TUI_STATUS" 0 "gputop exits with the program's status"
finish
