#!/usr/bin/env bash
# --no-int3: gputop plants no int3 in the program's code — the only probe bytes that a kill -9
# of gputop, in the instant before its watchdog restores them, can turn into a SIGTRAP (issue 17).
# dlopen_late loads the SIMULATED runtime and driver after it started; gputop finds them without
# the dynamic linker's hook (its maps, looked at every 100 ms), and while the program waits
# with both loaded, tests/e2e/int3_scan.py reads the first byte of every function the runtime,
# the driver and libc export: no int3 with --no-int3; without it, at least one (libc's execve,
# watched so that the last records are read before an exec), which shows that the scan sees them.
# The calls made after that are counted exactly, through the stubs.
source "$(dirname "$0")/../lib.sh"
need_bin dlopen_late sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop

export LD_LIBRARY_PATH=$SIM:$SIMDRV
MiB=1048576

# run NAME GPUTOP_OPTS...: launch mode; sets INT3 (the scan's count) and leaves NAME.json.
run() {
	local name=$1 pid
	shift
	rm -f "$TMP/$name.go2"
	touch "$TMP/go"
	spawn "$TMP/$name.gputop" "$GPUTOP" "$@" -b -d 0.2 --json "$TMP/$name.json" -o "$TMP/$name.prog" \
		-- "$BIN/dlopen_late" --go "$TMP/go" --loaded-go "$TMP/$name.go2"
	local gputop=$SPAWNED_PID
	wait_for_line "$TMP/$name.prog" '^loaded$' 30 || bail "$name: the program loaded the libraries"
	wait_for_line "$TMP/$name.gputop.err" 'probing [0-9]+ CUDA functions in libcuda' 30 ||
		bail "$name: gputop probed the driver loaded after the start"
	wait_for_line "$TMP/$name.gputop.err" 'probing [0-9]+ CUDA functions in libcudart' 30 ||
		bail "$name: gputop probed the runtime loaded after the start"
	pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$TMP/$name.prog")
	python3 "$ROOT/tests/e2e/int3_scan.py" "$pid" libcudart.so.13 libcuda.so.1 libc.so.6 >"$TMP/$name.scan" ||
		bail "$name: the scan of the program's memory"
	INT3=$(sed -n 's/^int3 \([0-9]*\) of.*/\1/p' "$TMP/$name.scan")
	note "$name: $(head -n 4 "$TMP/$name.scan" | tr '\n' ' ')"
	touch "$TMP/$name.go2"
	wait_pid "$gputop" 60
	expect_eq "$WAIT_STATUS" 0 "$name: gputop exits with the program's status"
	expect_match "$(cat "$TMP/$name.prog")" 'dlopen_late: ok mallocs=3 frees=1 launches=4' "$name: the program's own check"
}

run plain
[ "${INT3:-0}" -ge 1 ] && ok "without --no-int3 the scan finds gputop's int3 ($INT3)" ||
	not_ok "without --no-int3 the scan finds gputop's int3 (it found ${INT3:-none})"

run noint3 --no-int3
expect_eq "$INT3" 0 "--no-int3: no int3 at any exported function of the runtime, the driver and libc"
F=$TMP/noint3.json
expect_api "$F" cudaMalloc 3 0
expect_api "$F" cudaFree 1 0
jq_eq "$F" '.launches' 4 "--no-int3: 4 launches, through the ring"
expect_kernel "$F" 'late_kernel' 4 '[2,1,1]' '[64,1,1]'
jq_eq "$F" '.memory.live_bytes' $((2 * MiB)) "--no-int3: 2 MiB live"
jq_check "$F" '[.api[] | select(.calls > 0) | .stops_per_call] | all(. == 0)' \
	"--no-int3: every call counted went through a stub (no stop per call)"
expect_match "$(cat "$TMP/noint3.gputop.err")" 'not probed: each would need an int3' \
	"--no-int3: gputop says which functions it left unprobed"

"$GPUTOP" --no-int3 --trace - -- true >/dev/null 2>"$TMP/trace.err"
expect_eq "$?" 2 "--no-int3 with --trace: refused, status 2"
expect_match "$(cat "$TMP/trace.err")" 'no-int3' "--no-int3 with --trace: the error names the conflict"
finish
