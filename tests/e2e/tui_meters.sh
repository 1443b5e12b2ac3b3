#!/usr/bin/env bash
# TUI: the GPUs' meters and the memory gputop did not see (issue 13), with the SIMULATED NVML
# (tests/bin/simnvml: figures from files this test writes, and from the simulated runtime's
# allocations, with a simulated CUDA context of 300 MiB). gputop -p attaches to hold_memory,
# which allocated 768 KiB before the attach and allocates 1 MiB after it, in tmux (160x30):
#  - under the header: a meter line per GPU (util bar, memory bar, temperature, power, SM clock,
#    PCIe, name), then the process's own device memory and SM utilization;
#  - the views still show (tabs, Overview) below the meters;
#  - Leaks: the row of what gputop did not see, process = seen + before attach;
#  - the meters follow the devices file (a figure changed there shows up);
#  - q detaches; the program finishes as without gputop.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin hold_memory sim/libcudart.so.13 simnvml/libnvidia-ml.so.1
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"

NV=$TMP/nvml
mkdir -p "$NV"
device() {	# UTIL TEMP: GPU0's line of the devices file, written whole (rename)
	printf '%s\n' "NVIDIA H100 80GB HBM3 (simulated)|GPU-5113-0000|$1|12|42949672960|85899345920|$2|250000|1980|1000|2000" >"$NV/devices.tmp"
	mv "$NV/devices.tmp" "$NV/devices"
}
device 37 45
export LD_LIBRARY_PATH=$SIM SIMNVML_DIR=$NV SIMNVML_CONTEXT_BYTES=314572800 SIMNVML_SM_UTIL=61

spawn "$TMP/held" "$BIN/hold_memory" --before 786432 --after 1048576 --go "$TMP/go" --stop "$TMP/stop"
prog=$SPAWNED_PID
wait_for_line "$TMP/held.out" '^ready' "$TUI_WAIT" || bail "hold_memory is ready"
tui_gputop 160 30 GPUTOP_NVML="$BIN/simnvml/libnvidia-ml.so.1" GPUTOP_NVML_POLL_MS=100 \
	SIMNVML_DIR="$NV" -- -d 0.3 -p "$prog"
expect_screen "PID $prog" "the TUI is up"
touch "$TMP/go"
wait_for_line "$TMP/held.out" '^allocated$' "$TUI_WAIT" || bail "hold_memory allocated after the attach"
expect_screen 'GPU0 \[\|+ +37%\] Mem\[\|+ *40\.0 GiB/80\.0 GiB\]' "GPU0's utilization and memory bars"
expect_screen 'GPU0 .* 45°C  250 W  SM 1980 MHz  PCIe tx 1\.02 MB/s rx 2\.05 MB/s  NVIDIA H100' \
	"GPU0's temperature, power, SM clock, PCIe and name"
expect_screen "PID $prog on GPU0: 302 MiB device memory, SM 61%" "the process's device memory and SM utilization"
expect_screen 'Overview +Leaks +Memory +Kernels +Bandwidth +API' "the view tabs below the meters"
expect_screen 'GPU memory +1\.00 MiB' "the Overview below them"
tui_keys l
expect_screen 'Live since the attach: 1 allocations; 1\.00 MiB device' "leaks: what gputop saw"
expect_screen 'GPU memory \(NVML\): 302 MiB = 1\.00 MiB seen allocated \+ 301 MiB allocated before gputop attached' \
	"leaks: the row of what gputop did not see, adding up"
expect_screen 'ADDRESS +SIZE' "leaks: the table follows"
device 93 71
expect_screen 'GPU0 \[\|+ *93%\] .* 71°C ' "the meters follow NVML"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "q detaches, gputop exits 0"
touch "$TMP/stop"
wait_pid "$prog" 30
expect_eq "$WAIT_STATUS" 0 "hold_memory exits 0"
expect_eq "$(tail -n 1 "$TMP/held.out")" "hold_memory: ok" "hold_memory's results are as without gputop"
finish
