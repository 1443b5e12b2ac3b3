#!/usr/bin/env bash
# GPU meters and the memory gputop did not see (issue 13 parts 1-2), with the SIMULATED NVML
# (tests/bin/simnvml/libnvidia-ml.so.1: figures from $SIMNVML_DIR, written here and by the
# simulated runtime as it allocates, with a simulated CUDA context of CONTEXT bytes).
#  1. Attached to hold_memory, which allocated BEFORE bytes before the attach and AFTER bytes
#     after it: -b shows each GPU's meters and the process's memory; --json has devices[] with
#     the figures of the devices file, and memory.process: device_bytes = CONTEXT + BEFORE +
#     AFTER = seen_bytes (AFTER) + unseen_bytes (CONTEXT + BEFORE), named "before attached".
#  2. Launched: the whole difference is the CUDA context (named so), peak kept after the exit.
#  3. No driver (no library; a library whose nvmlInit fails): said once on stderr, no meters,
#     .devices == [], the program's results unchanged. GPUTOP_NVML=0: nothing said.
#  4. A driver that hangs (the simulated NVML stops answering): gputop still ends when the
#     program does, says so, and exits with the program's status.
#  5. PID namespaces (unshare -Urpf, where allowed): a program in a namespace of its own, which
#     the simulated NVML names by its inner PID, is matched through NSpid; gputop inside a
#     namespace, where NVML names only PIDs it cannot see, says that it cannot match.
source "$(dirname "$0")/../lib.sh"
need_bin hold_memory sim/libcudart.so.13 simnvml/libnvidia-ml.so.1
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"

CONTEXT=314572800 BEFORE=777777 AFTER=1048576
NV=$TMP/nvml
mkdir -p "$NV"
printf '%s\n' 'NVIDIA H100 80GB HBM3 (simulated)|GPU-5113-0000|37|12|12884901888|85899345920|45|123456|1980|1000|2000|1000000|2000000' \
	'Second GPU (simulated)|GPU-5113-0001|-|-|-|-|-|-|-|-|-' >"$NV/devices"
export LD_LIBRARY_PATH=$SIM SIMNVML_DIR=$NV SIMNVML_CONTEXT_BYTES=$CONTEXT SIMNVML_SM_UTIL=61
export GPUTOP_NVML=$BIN/simnvml/libnvidia-ml.so.1 GPUTOP_NVML_POLL_MS=100

# --- 1. attached to a process holding memory allocated before the attach ---
spawn "$TMP/held" "$BIN/hold_memory" --before $BEFORE --after $AFTER --go "$TMP/go" --stop "$TMP/stop"
prog=$SPAWNED_PID
wait_for_line "$TMP/held.out" '^ready' 30 || bail "hold_memory is ready"
spawn "$TMP/attach" "$GPUTOP" -p "$prog" -b -d 0.2 --json "$TMP/attach.json"
gputop=$SPAWNED_PID
wait_for_line "$TMP/attach.err" "attached to $prog" 30 || bail "gputop attached"
touch "$TMP/go"
wait_for_line "$TMP/held.out" '^allocated$' 30 || bail "hold_memory allocated after the attach"
expect_line() {	# FILE REGEX WHAT: a line of FILE matches, polled
	if wait_for_line "$1" "$2" 30; then ok "$3"; else not_ok "$3"; echo "#   no line matches: $2"; tail -n 30 "$1" | sed 's/^/#   /'; fi
}
expect_line "$TMP/attach.out" '^GPU memory \(NVML\): 302 MiB = 1\.00 MiB seen allocated \+ 301 MiB allocated before gputop attached' \
	"-b: the process's memory = seen + the row of what gputop did not see"
expect_line "$TMP/attach.out" '^GPU0 NVIDIA H100 80GB HBM3 \(simulated\): util 37%, mem 12\.0 GiB/80\.0 GiB, 45.C, 123 W, SM 1980 MHz, PCIe tx 1\.02 MB/s rx 2\.05 MB/s, NVLink tx 1\.02 GB/s rx 2\.05 GB/s$' \
	"-b: the meters of GPU0 (NVLink's rates from its counters)"
expect_line "$TMP/attach.out" '^GPU1 Second GPU \(simulated\): util (—|-), mem (—|-)$' "-b: GPU1 says what it does not tell"
expect_line "$TMP/attach.out" "^PID $prog on GPU0: 302 MiB device memory, SM 61%$" "-b: the process's line"
kill -TERM "$gputop"
wait_pid "$gputop" 30
expect_eq "$WAIT_STATUS" 0 "gputop detaches on SIGTERM, status 0"
J=$TMP/attach.json
jq_eq "$J" '.devices | length' 2 "json: two devices"
jq_eq "$J" '.devices[0] | del(.nvlink_tx_bytes_per_s, .nvlink_rx_bytes_per_s)' '{"index":0,
	"name":"NVIDIA H100 80GB HBM3 (simulated)","uuid":"GPU-5113-0000",
	"utilization_pct":37,"memory_utilization_pct":12,"memory_used_bytes":12884901888,
	"memory_total_bytes":85899345920,"temperature_c":45,"power_w":123.456,"sm_clock_mhz":1980,
	"pcie_tx_bytes_per_s":1024000,"pcie_rx_bytes_per_s":2048000}' "json: GPU0's figures are NVML's"
# NVLink: rates from two readings of KiB counters that the simulated NVML truncates to whole KiB
jq_range "$J" '.devices[0].nvlink_tx_bytes_per_s' 1022976000 1025024000 "json: GPU0's NVLink tx rate (1,000,000 KiB/s, 0.1%)"
jq_range "$J" '.devices[0].nvlink_rx_bytes_per_s' 2045952000 2050048000 "json: GPU0's NVLink rx rate (2,000,000 KiB/s, 0.1%)"
jq_eq "$J" '.devices[1] | [.utilization_pct, .memory_used_bytes, .temperature_c, .power_w, .sm_clock_mhz, .nvlink_tx_bytes_per_s]' \
	'[null,null,null,null,null,null]' "json: what GPU1 does not tell is null"
jq_eq "$J" '.nvml' null "json: NVML was there"
jq_eq "$J" '.memory.process.device_bytes' $((CONTEXT + BEFORE + AFTER)) "json: the process's device memory (NVML)"
jq_eq "$J" '.memory.process.seen_bytes' $AFTER "json: what gputop saw allocated"
jq_eq "$J" '.memory.process.unseen_bytes' $((CONTEXT + BEFORE)) "json: the rest was allocated before the attach (context included)"
jq_check "$J" '.memory.process | .device_bytes == .seen_bytes + .unseen_bytes' "json: seen + unseen add up"
jq_check "$J" '.memory.process.unseen | startswith("allocated before gputop attached")' "json: the row is named" '.memory.process.unseen'
jq_eq "$J" '.memory.process.context_made_while_traced' false "json: the context was there before the attach"
jq_eq "$J" '.memory.process.sm_utilization_pct' 61 "json: the process's SM utilization"
touch "$TMP/stop"
wait_pid "$prog" 30
expect_eq "$WAIT_STATUS" 0 "hold_memory exits 0"
expect_eq "$(cat "$TMP/held.out" | tail -n 1)" "hold_memory: ok" "hold_memory's results are as without gputop"

# --- 2. launched: the context is made while gputop watches ---
rm -f "$TMP/stop"
touch "$TMP/go"
spawn "$TMP/launch" "$GPUTOP" -b -d 0.2 --json "$TMP/launch.json" -- "$BIN/hold_memory" --before 4096 --after 8192 \
	--go "$TMP/go" --stop "$TMP/stop"
gputop=$SPAWNED_PID
expect_line "$TMP/launch.out" '^GPU memory \(NVML\): 300 MiB = 12\.0 KiB seen allocated \+ 300 MiB the CUDA context.s own memory' \
	"launch: the difference is named the CUDA context"
touch "$TMP/stop"
wait_pid "$gputop" 30
expect_eq "$WAIT_STATUS" 0 "launch: gputop exits with the program's status 0"
expect_line "$TMP/launch.out" '^PID [0-9]+: no CUDA context on a GPU \(its peak: 300 MiB device memory\)$' \
	"launch: the summary gives the process's peak once it has left the GPU"
J=$TMP/launch.json
jq_eq "$J" '.memory.process.peak_device_bytes' $((CONTEXT + 4096 + 8192)) "launch json: the process's peak device memory"
jq_eq "$J" '.memory.process.device_bytes' null "launch json: none left after the exit"
jq_check "$J" '.memory.process.why | test("no CUDA context")' "launch json: says why" '.memory.process.why'
jq_eq "$J" '.memory.process.context_made_while_traced' true "launch json: the context was made while traced"

# --- 3. no driver ---
run_nodriver() {	# NAME: hold_memory launched under gputop -b, the environment as set
	rm -f "$TMP/stop"
	touch "$TMP/stop"
	run_gputop_json "$TMP/$1.json" -b -d 0.2 -- "$BIN/hold_memory" --before 4096 --after 4096 --go "$TMP/go" --stop "$TMP/stop"
	expect_eq "$GPUTOP_STATUS" 0 "$1: gputop runs on, status 0"
	expect_eq "$(grep -c 'hold_memory: ok' "$GPUTOP_OUT")" 1 "$1: the program's results are unchanged"
	expect_eq "$(grep -c '^GPU' "$GPUTOP_OUT")" 0 "$1: no meters in -b"
	jq_eq "$TMP/$1.json" '.devices' '[]' "$1: json has no devices"
	jq_eq "$TMP/$1.json" '.memory.process.device_bytes' null "$1: the process's device memory is not known"
}
GPUTOP_NVML=$TMP/none/libnvidia-ml.so.1 run_nodriver nolib
expect_eq "$(grep -c 'no GPU meters: .*libnvidia-ml.so.1 not found' "$GPUTOP_ERR")" 1 "nolib: said once on stderr"
jq_check "$TMP/nolib.json" '.nvml | test("not found")' "nolib: json says why" '.nvml'
SIMNVML_DIR= run_nodriver noinit
expect_eq "$(grep -c 'no GPU meters: NVML cannot start: Driver Not Loaded' "$GPUTOP_ERR")" 1 "noinit: said once on stderr"
GPUTOP_NVML=0 run_nodriver off
expect_eq "$(grep -c 'GPU meters' "$GPUTOP_ERR")" 0 "off: GPUTOP_NVML=0 says nothing"

# --- 4. NVML hangs ---
rm -f "$TMP/stop"
spawn "$TMP/hang" "$GPUTOP" -b -d 0.2 -- "$BIN/hold_memory" --before 4096 --after 4096 --go "$TMP/go" --stop "$TMP/stop"
gputop=$SPAWNED_PID
expect_line "$TMP/hang.out" '^PID [0-9]+ on GPU0: ' "hang: the meters are up"
rm -f "$NV/hanging"
touch "$NV/hang"	# from the next poll on, NVML never answers
wait_for_line "$NV/hanging" '^hanging$' 30 || bail "a poll of the simulated NVML hangs"
touch "$TMP/stop"
wait_pid "$gputop" 30
rm -f "$NV/hang"
expect_eq "$WAIT_STATUS" 0 "hang: gputop ends with the program, status 0"
expect_eq "$(grep -c 'NVML did not answer' "$TMP/hang.err")" 1 "hang: it says so"
expect_eq "$(grep -c 'hold_memory: ok' "$TMP/hang.out")" 1 "hang: the program's results are unchanged"

# --- 5. PID namespaces ---
unshare -Urpf --mount-proc true 2>/dev/null || { note "no unshare -Urpf here: PID namespaces not checked"; finish; }
rm -f "$TMP/go" "$TMP/stop" "$NV"/proc.*
spawn "$TMP/ns" unshare -Urpf --mount-proc "$BIN/hold_memory" --before $BEFORE --after $AFTER --go "$TMP/go" --stop "$TMP/stop"
wait_for_line "$TMP/ns.out" '^ready' 30 || bail "hold_memory is ready in its namespace"
prog=$(awk '{ print $1 }' "/proc/$SPAWNED_PID/task/$SPAWNED_PID/children" 2>/dev/null)
[ -n "$prog" ] || { touch "$TMP/go" "$TMP/stop"; note "no /proc/PID/task/TID/children: PID namespaces not checked"; finish; }
note "hold_memory: $(head -n 1 "$TMP/ns.out") in its namespace, $prog here; $(grep NSpid "/proc/$prog/status")"
touch "$TMP/go"
wait_for_line "$TMP/ns.out" '^allocated$' 30 || bail "hold_memory allocated"
spawn "$TMP/nsattach" "$GPUTOP" -p "$prog" -b -d 0.2 --json "$TMP/ns.json"
gputop=$SPAWNED_PID
expect_line "$TMP/nsattach.out" "^PID $prog on GPU0: 302 MiB device memory" "namespace: matched through NSpid"
kill -TERM "$gputop"
wait_pid "$gputop" 30
jq_eq "$TMP/ns.json" '.memory.process.device_bytes' $((CONTEXT + BEFORE + AFTER)) "namespace: its device memory in --json"
touch "$TMP/stop"

# gputop in a namespace of its own; NVML names only a process of another namespace.
rm -f "$TMP/stop" "$NV"/proc.*
echo "0 1000 0" >"$NV/proc.4242420.foreign"
mkdir -p "$TMP/elsewhere"
spawn "$TMP/inside" unshare -Urpf --mount-proc "$GPUTOP" -b -d 0.2 --json "$TMP/inside.json" -- \
	env SIMNVML_DIR="$TMP/elsewhere" "$BIN/hold_memory" --before 4096 --after 4096 --go "$TMP/go" --stop "$TMP/stop"
gputop=$SPAWNED_PID
expect_line "$TMP/inside.out" "^PID [0-9]+: NVML names processes by another PID namespace's IDs: cannot match this one$" \
	"inside a namespace: says it cannot match"
touch "$TMP/stop"
wait_pid "$gputop" 30
expect_eq "$WAIT_STATUS" 0 "inside a namespace: gputop exits with the program's 0"
jq_check "$TMP/inside.json" '.memory.process.why | test("another PID namespace")' "inside a namespace: --json says why" '.memory.process.why'
finish
