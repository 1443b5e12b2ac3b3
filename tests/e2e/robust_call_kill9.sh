#!/usr/bin/env bash
# Robustness (issue 17): gputop killed with SIGKILL while a thread it holds runs a function
# gputop called in it (probe/xol.c, xol_call: cuFuncGetName for a kernel made before the attach,
# --gpu-time's dlopen and start). The function returns to code in gputop's page that, gputop
# being gone, loads the thread's registers and stack pointer back and jumps to where it was; it
# returned to an int3 before, and the thread died of SIGTRAP. ring_loop on the SIMULATED driver,
# its cuFuncGetName made to take 2 s (SIMCUDA_NAME_MS) and to say when it starts: attached while
# it launches, gputop asks for the name of each kernel at its first launch; it is killed inside
# that call. The program must finish as without gputop: every launch made, status 0.
source "$(dirname "$0")/../lib.sh"
need_bin ring_loop simdrv/libcuda.so.1
need_gputop
can_attach_to_others || skip "this user may not ptrace other processes"

N=300000
touch "$TMP/go"
spawn "$TMP/prog" env LD_LIBRARY_PATH="$SIMDRV" RB_GO_FILE="$TMP/go" SIMCUDA_NAME_MS=2000 \
	SIMCUDA_NAME_MARK="$TMP/naming" "$BIN/ring_loop" 2 $N
PROG=$SPAWNED_PID
wait_for_line "$TMP/prog.out" '^ring_loop: running' 20 || bail "ring_loop runs"
[ -e "$TMP/naming" ] && bail "cuFuncGetName called before gputop"
"$GPUTOP" -p "$PROG" -b -d 100 >"$TMP/g.out" 2>"$TMP/g.err" </dev/null &
GP=$!
for _ in $(seq 1 400); do [ -e "$TMP/naming" ] && break; sleep 0.05; done
if [ -e "$TMP/naming" ]; then
	ok "gputop asked the driver for a kernel's name in a thread it holds"
else
	not_ok "gputop asked the driver for a kernel's name in a thread it holds (20 s)"
fi
kill -KILL "$GP" 2>/dev/null
wait "$GP" 2>/dev/null
wait_pid "$PROG" 120
expect_eq "$WAIT_STATUS" 0 "killed inside that call: the program ends with status 0 (no SIGTRAP)"
expect_eq "$(grep -c "^ring_loop: launches=$((4 * N)) calls=0 failures=0$" "$TMP/prog.out")" 1 \
	"and made every launch"
finish
