#!/usr/bin/env bash
# Kernels registered but not launched make no rows (tests/progs/registered_kernels.c on the
# SIMULATED libcudart.so.13). A PyTorch rank registers ~21,000 kernels as libtorch_cuda.so loads
# and launches a few hundred; gputop traced the registrations when it was there first (launch
# mode, an attach before CUDA was loaded) and made a row in the figures for every one, so each
# snapshot (the TUI's and -b's every refresh, --json, /metrics) copied, merged and sorted ~21,000
# rows a process under the figures' lock: -b's last figures and --json took 141 and 258 ms at
# the end of a 4-rank job on H100s. Now a registered name waits, as read, for its kernel's first
# launch. Checked: the 10 launched kernels of 5,000 registered, by their demangled names and
# counts, and the snapshot --json was made from holds 10 kernel rows (GPUTOP_DEBUG says how many).
source "$(dirname "$0")/../lib.sh"
need_bin registered_kernels sim/libcudart.so.13
need_gputop

export LD_LIBRARY_PATH=$SIM
N=5000	# below the calls' ring's 16,384 records: none dropped, whenever gputop drains
L=10
WANT="registered_kernels: registered=$N launched=$L launches=55 failures=0"

rm -f "$TMP/go"
spawn "$TMP/g" env GPUTOP_DEBUG=1 "$GPUTOP" --json "$TMP/k.json" -- "$BIN/registered_kernels" $N $L "$TMP/go"
gputop=$SPAWNED_PID
# Registered once gputop probes the runtime (it must see them to name the launches).
wait_for_line "$TMP/g.err" 'probing [0-9]+ CUDA functions in libcudart' 30 || bail "gputop probes the simulated runtime"
touch "$TMP/go"
wait_pid "$gputop" 60
expect_eq "$WAIT_STATUS" 0 "gputop exits with the program's status"
expect_eq "$(prog_lines "$TMP/g.out" registered_kernels)" "$WANT" "the program's output"

F=$TMP/k.json
jq_eq "$F" '.launches' 55 "55 launches"
jq_eq "$F" '.kernels | length' $L "$L kernels listed"
for i in 0 1 2 3 4 5 6 7 8 9; do
	expect_kernel "$F" "$(printf 'kernel%05d(float*, int)' $i)" $((i + 1)) '[1,1,1]' '[32,1,1]'
done
rows=$(sed -nE 's/.*--json: [0-9]+ processes, ([0-9]+) kernel rows.*/\1/p' "$TMP/g.err")
expect_eq "$rows" $L "the snapshot holds a row for each launched kernel only ($N registered)"
finish
