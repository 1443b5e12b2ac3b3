#!/usr/bin/env bash
# --gpu-time (issue 13 part 3): gputop loads libgputop-gpu.so into the program, which reads
# kernels', copies' and memsets' GPU time from CUPTI. Here CUPTI is the SIMULATED one
# (tests/bin/simcupti/libcupti.so.13, GPUTOP_CUPTI), fed by the SIMULATED driver: every run of
# ring_a lasts KA ns, of ring_b KB ns, every memset MS ns, one after another, so that each
# figure is known exactly (tests/progs/ring_loop.c, one thread: it is the thread gputop holds
# while CUPTI starts, so that not one launch goes by unrecorded).
#  1. Launch mode: exact GPU time per kernel (total, avg, min, max, count = launches), memsets'
#     GPU time, busy time = the sum (runs never overlap); the program's output and status as
#     without gputop; -b shows the GPU columns.
#  2. Attach mode, detached while the program idles: the same exact figures; on detach the
#     library flushes, disables, unsubscribes, finalizes CUPTI and unloads both libraries:
#     no file or executable mapping differs from before, no thread is left, the program goes on.
#     A CUPTI that leaves a thread running after cuptiFinalize stays loaded (said so): unloading
#     it would pull code from under that thread.
#  2c. gputop frozen (SIGSTOP) while the program makes 90,000 kernel runs and memsets, far more
#     than the ring of 8,192 records the library had before (it dropped the rest): the library
#     sums CUPTI's records in place, so every GPU-time figure is exact once gputop reads again.
#     (The program's thread then waits at its exit for gputop, which traces thread exits: not
#     asserted here.)
#  3. Another CUPTI subscriber (torch.profiler, Nsight...): said clearly, no GPU time, gputop
#     goes on with every other figure exact. Attached, the subscriber's CUPTI is the program's
#     own (preloaded here): gputop's library unloads itself, CUPTI stays as it was. (A CUPTI that
#     refuses and is not the program's stays loaded: tests/e2e/gputime_refused.sh.)
#  4. A CUPTI that cannot be loaded: a clear warning, no GPU time, the program unharmed.
#  5. Bad input: GPUTOP_CUPTI naming no file, or gputop's library missing: an error, exit 1,
#     before the program is started.
#  6. gputop killed (SIGKILL) while its library is loaded: the library finds itself untraced
#     and unloads itself; the program goes on and ends well.
#  7. exec and fork (tests/progs/rb_fork.c, the runtime over the driver): the old image's last
#     records are read at its execve (the library flushes CUPTI there), the new image gets the
#     library again; a forked child gets no GPU time, said once, and computes right.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin ring_loop rb_fork sim/libcudart.so.13 simdrv/libcuda.so.1 simcupti/libcupti.so.13
need_gputop
[ -f "$ROOT/build/libgputop-gpu.so" ] || skip "build/libgputop-gpu.so is not built (no CUPTI headers)"

# ours_mapped PID: the mappings of gputop's library and of CUPTI in the process, by the file's
# own name (libgputop-gpu.so*, libcupti*), never by its folders': a checkout in a folder named
# gputop maps the test programs from .../gputop/tests/bin.
ours_mapped() {
	awk '{ n = split($6, p, "/"); if (p[n] ~ /^(libgputop-gpu\.so|libcupti)/) print }' "/proc/$1/maps"
}

KA=1000000 KB=250000 MS=50000 N=300
export LD_LIBRARY_PATH=$SIMDRV GPUTOP_CUPTI=$BIN/simcupti/libcupti.so.13
export SIMCUPTI_KERNEL_NS=_Z6ring_aPi=$KA,_Z6ring_bPf=$KB SIMCUPTI_COPY_NS=$MS RB_CALLS=1

# gpu_time_exact JSON WHAT: ring_a's and ring_b's GPU time is N runs of KA and KB exactly,
# memsets' N of MS, and the busy time the sum of the kernels'.
gpu_time_exact() {
	local J=$1 w=$2
	jq_eq "$J" "$(kernel_row 'ring_a(int*)').gpu_time | [.count, .min_s, .max_s, .avg_s]" "[$N,0.001,0.001,0.001]" \
		"$w: ring_a's GPU time: $N runs of 1 ms"
	jq_eq "$J" "$(kernel_row 'ring_a(int*)').gpu_time.total_s * 1e9 | round" $((N * KA)) "$w: ring_a's total"
	jq_eq "$J" "$(kernel_row 'ring_b(float*)').gpu_time | [.count, .min_s, .max_s, .avg_s]" "[$N,0.00025,0.00025,0.00025]" \
		"$w: ring_b's GPU time: $N runs of 0.25 ms"
	jq_eq "$J" "$(kernel_row 'ring_b(float*)').gpu_time.total_s * 1e9 | round" $((N * KB)) "$w: ring_b's total"
	jq_eq "$J" '[.gpu_time.memset.count, .gpu_time.memset.bytes]' "[$N,$((N * 256))]" "$w: memsets' GPU records"
	jq_eq "$J" '.gpu_time.memset.gpu_s * 1e9 | round' $((N * MS)) "$w: memsets' GPU time"
	jq_eq "$J" '.gpu_time.busy_s * 1e9 | round' $((N * (KA + KB))) "$w: busy time = the kernels' (no overlap)"
	jq_eq "$J" '[.gpu_time.dropped_records, .gpu_time.unnamed_records]' '[0,0]' "$w: no record lost"
	jq_check "$J" '.gpu_busy > 0 and (.processes[0].gpu_busy == .gpu_busy)' "$w: gpu_busy, the process's too" '.gpu_busy'
}

# --- 1. launch mode ---
rb_same launch 0 "ring_loop: launches=$((2 * N)) calls=$((2 * N)) failures=0" --gpu-time -- "$BIN/ring_loop" 1 $N
J=$TMP/launch.json
jq_eq "$J" '.launches' $((2 * N)) "launch: $((2 * N)) launches counted"
gpu_time_exact "$J" launch
"$GPUTOP" -b -d 30 --gpu-time -- "$BIN/ring_loop" 1 $N >"$TMP/batch.out" 2>"$TMP/batch.err" </dev/null
expect_match "$(grep -E '^KERNEL' "$TMP/batch.out" | head -n 1)" 'GPU TIME +GPU AVG +GPU MIN +GPU MAX' "-b: the kernel table has the GPU columns"
expect_match "$(grep -E '^ring_a\(int\*\)' "$TMP/batch.out" | tail -n 1)" ' 300 ms +1\.00 ms +1\.00 ms +1\.00 ms' "-b: ring_a's GPU time"
expect_match "$(grep -E '^GPU busy' "$TMP/batch.out" | tail -n 1)" '^GPU busy: [0-9.]+% \(375 ms of kernels' "-b: the GPU busy line"
expect_match "$(grep -E '^GPU side' "$TMP/batch.out" | tail -n 1)" '^GPU side: memset 300 in 15\.0 ms \(' "-b: memsets' GPU side"
expect_match "$(cat "$TMP/batch.err")" "gputop: --gpu-time: CUPTI records kernels, copies and memsets of [0-9]+ \($BIN/simcupti/libcupti.so.13\)" "gputop says GPU time is on, and which CUPTI"

# --- 2. attach mode, then detach while the program idles ---
can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle SIMCUPTI_LOG=$TMP/cupti.log rb_spawn prog "$BIN/ring_loop" 1 $N
maps_of() { awk '$6 != "" || $2 ~ /x/ { print $1, $2, $6 }' "/proc/$1/maps"; }
maps_of "$TARGET" >"$TMP/maps.before"
threads_before=$(ls "/proc/$TARGET/task" | wc -l)
rb_gputop_bg attach -p "$TARGET" --gpu-time --json "$TMP/attach.json"
rb_wait_attached attach
touch "$TMP/go"
wait_for_line "$TMP/prog.out" '^idle$' 60 || bail "ring_loop ran its rounds"
if grep -q libgputop-gpu.so "/proc/$TARGET/maps" && grep -q libcupti.so.13 "/proc/$TARGET/maps"; then
	ok "attach: gputop's library and CUPTI are loaded in the program"
else
	not_ok "attach: gputop's library and CUPTI are loaded in the program"
fi
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "attach: gputop detaches on SIGTERM, status 0"
maps_of "$TARGET" >"$TMP/maps.after"
expect_file_eq "$TMP/maps.after" "$TMP/maps.before" "attach: after the detach, every file and executable mapping as before"
if [ -n "$(ours_mapped "$TARGET")" ]; then
	not_ok "attach: nothing of gputop's library or CUPTI is mapped"; ours_mapped "$TARGET" | sed 's/^/#   /'
else
	ok "attach: nothing of gputop's library or CUPTI is mapped"
fi
expect_eq "$(ls "/proc/$TARGET/task" | wc -l)" "$threads_before" "attach: the threads are the program's own again"
expect_eq "$(tr '\n' ' ' <"$TMP/cupti.log")" "subscribe enable enable enable disable disable disable unsubscribe finalize " \
	"attach: CUPTI subscribed, enabled, then disabled, unsubscribed, finalized"
J=$TMP/attach.json
jq_eq "$J" '.launches' $((2 * N)) "attach: $((2 * N)) launches counted"
gpu_time_exact "$J" attach
touch "$TMP/idle"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "attach: ring_loop ends well after the detach"
expect_eq "$(grep -c '^ring_loop: launches=600 calls=600 failures=0$' "$TMP/prog.out")" 1 "attach: all its calls succeeded"

# --- 2c. gputop frozen while the program makes more records than any ring held ---
# One thread: CUPTI starts in it, held at its first launch, so that no run goes by unrecorded
# (other threads would launch meanwhile). Frozen once CUPTI records: gputop holds no thread.
# Runs of 1 µs and 0.25 µs (the simulated stream's synchronize waits for its simulated work).
T4=1 N4=30000 KA4=1000 KB4=250 MS4=50
rm -f "$TMP/go" "$TMP/idle"
SIMCUPTI_KERNEL_NS=_Z6ring_aPi=$KA4,_Z6ring_bPf=$KB4 SIMCUPTI_COPY_NS=$MS4 \
	RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle rb_gputop_bg burst --gpu-time --json "$TMP/burst.json" -- "$BIN/ring_loop" $T4 $N4
wait_for_line "$TMP/burst.out" '^ready [0-9]+$' 30 || bail "burst: the program said ready"
touch "$TMP/go"
wait_for_line "$TMP/burst.err" 'CUPTI records' 30 || note "burst: gputop did not say CUPTI records"
kill -STOP "$GPUTOP_PID"
sleep 2	# the program's rounds take a quarter of a second
kill -CONT "$GPUTOP_PID"
touch "$TMP/idle"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "burst: the program and gputop end well, status 0"
expect_eq "$(grep -c "^ring_loop: launches=$((2 * T4 * N4)) calls=$((2 * T4 * N4)) failures=0$" "$TMP/burst.out")" 1 "burst: all its calls succeeded"
J=$TMP/burst.json
jq_eq "$J" "[$(kernel_row 'ring_a(int*)').gpu_time.count, $(kernel_row 'ring_b(float*)').gpu_time.count]" "[$((T4 * N4)),$((T4 * N4))]" \
	"burst: every kernel run has its GPU time"
jq_eq "$J" "[($(kernel_row 'ring_a(int*)').gpu_time.total_s * 1e9 | round), ($(kernel_row 'ring_b(float*)').gpu_time.total_s * 1e9 | round)]" \
	"[$((T4 * N4 * KA4)),$((T4 * N4 * KB4))]" "burst: their totals, exact"
jq_eq "$J" '[.gpu_time.memset.count, (.gpu_time.memset.gpu_s * 1e9 | round), (.gpu_time.busy_s * 1e9 | round), .gpu_time.dropped_records]' \
	"[$((T4 * N4)),$((T4 * N4 * MS4)),$((T4 * N4 * (KA4 + KB4))),0]" "burst: memsets, busy time, nothing dropped"

# --- 2b. a CUPTI that leaves a thread of its own running: it must stay loaded ---
rm -f "$TMP/go" "$TMP/idle"
RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle SIMCUPTI_LINGER=1 rb_spawn linger "$BIN/ring_loop" 1 $N
threads_before=$(ls "/proc/$TARGET/task" | wc -l)
rb_gputop_bg linger_g -p "$TARGET" --gpu-time --json "$TMP/linger.json"
rb_wait_attached linger_g
touch "$TMP/go"
wait_for_line "$TMP/linger.out" '^idle$' 60 || bail "ring_loop ran its rounds"
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "linger: gputop detaches, status 0"
expect_match "$(cat "$TMP/linger_g.err")" "gputop: warning: --gpu-time: libcupti and gputop's library stay loaded in $TARGET, idle .*: a thread made since CUPTI was loaded still runs" \
	"linger: said that libcupti stays, and why"
grep -q libcupti.so.13 "/proc/$TARGET/maps" && ok "linger: libcupti stays mapped" || not_ok "linger: libcupti stays mapped"
grep -q libgputop-gpu.so "/proc/$TARGET/maps" && ok "linger: gputop's library stays too (CUPTI holds its callbacks)" ||
	not_ok "linger: gputop's library stays too (CUPTI holds its callbacks)"
expect_eq "$(ls "/proc/$TARGET/task" | wc -l)" $((threads_before + 1)) "linger: its thread ended (the program's and CUPTI's lingering one are left)"
jq_eq "$TMP/linger.json" "$(kernel_row 'ring_a(int*)').gpu_time.count" $N "linger: the GPU time is all there"
touch "$TMP/idle"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "linger: ring_loop ends well, CUPTI's thread still running"

# --- 3. another CUPTI subscriber ---
SIMCUPTI_OTHER_SUBSCRIBER='torch.profiler (simulated)' rb_same other 0 "ring_loop: launches=$((2 * N)) calls=$((2 * N)) failures=0" \
	--gpu-time -- "$BIN/ring_loop" 1 $N
expect_match "$(cat "$TMP/other.err")" 'gputop: warning: --gpu-time: another CUPTI subscriber \(torch\.profiler, Nsight\.\.\.\) is present in [0-9]+: CUPTI for torch\.profiler \(simulated\): no GPU time' \
	"other subscriber: said, naming it"
jq_eq "$TMP/other.json" '[.launches, .gpu_time, .gpu_busy, ([.kernels[].gpu_time] | unique)]' "[$((2 * N)),null,null,[null]]" \
	"other subscriber: every launch counted, no GPU time"

# ... attached: once it has said so, gputop's library unloads itself, gputop attached or not;
# the other subscriber's CUPTI, loaded by the program, stays as it was
rm -f "$TMP/go" "$TMP/idle"
RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle SIMCUPTI_OTHER_SUBSCRIBER=nsys LD_PRELOAD=$GPUTOP_CUPTI \
	rb_spawn other2 "$BIN/ring_loop" 1 $N
cupti_before=$(ours_mapped "$TARGET")
grep -q libcupti <<<"$cupti_before" || bail "other subscriber, attached: the program has CUPTI loaded (LD_PRELOAD)"
rb_gputop_bg other2_g -p "$TARGET" --gpu-time
rb_wait_attached other2_g
touch "$TMP/go"
wait_for_line "$TMP/other2.out" '^idle$' 60 || bail "ring_loop ran its rounds"
wait_for_line "$TMP/other2_g.err" 'another CUPTI subscriber' 30 || not_ok "other subscriber, attached: said"
for _ in $(seq 1 200); do [ "$(ours_mapped "$TARGET")" != "$cupti_before" ] || break; sleep 0.05; done
[ "$(ours_mapped "$TARGET")" != "$cupti_before" ] && not_ok "other subscriber, attached: gputop's library unloaded at once" ||
	ok "other subscriber, attached: gputop's library unloaded at once, the program's CUPTI as before, gputop still attached"
running "$GPUTOP_PID" && ok "other subscriber, attached: gputop goes on" || not_ok "other subscriber, attached: gputop goes on"
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 30
touch "$TMP/idle"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "other subscriber, attached: ring_loop ends well"

# --- 4. a CUPTI that cannot be loaded ---
printf 'not a library\n' >"$TMP/libcupti.so.13"
GPUTOP_CUPTI=$TMP/libcupti.so.13 rb_same nocupti 0 "ring_loop: launches=$((2 * N)) calls=$((2 * N)) failures=0" \
	--gpu-time -- "$BIN/ring_loop" 1 $N
expect_match "$(cat "$TMP/nocupti.err")" "gputop: warning: --gpu-time: [0-9]+ could not load CUPTI: .*libcupti\.so\.13.*: no GPU time" \
	"unloadable CUPTI: a clear warning"
jq_eq "$TMP/nocupti.json" '[.launches, .gpu_time]' "[$((2 * N)),null]" "unloadable CUPTI: launches counted, no GPU time"

# --- 5. bad input ---
GPUTOP_CUPTI=$TMP/no/such/libcupti.so "$GPUTOP" --gpu-time -- touch "$TMP/ran" >"$TMP/bad.out" 2>"$TMP/bad.err" </dev/null
expect_eq "$?" 1 "GPUTOP_CUPTI naming no file: exit 1"
expect_match "$(cat "$TMP/bad.err")" "^gputop: GPUTOP_CUPTI=$TMP/no/such/libcupti.so: No such file or directory" "... said so"
[ -e "$TMP/ran" ] && not_ok "... the program was not started" || ok "... the program was not started"
mkdir -p "$TMP/alone" && cp "$GPUTOP" "$TMP/alone/gputop"
"$TMP/alone/gputop" --gpu-time -- touch "$TMP/ran" >"$TMP/bad.out" 2>"$TMP/bad.err" </dev/null
expect_eq "$?" 1 "gputop's library missing: exit 1"
expect_match "$(head -n 1 "$TMP/bad.err")" "^gputop: --gpu-time: $TMP/alone/libgputop-gpu.so is missing" "... said so"
[ -e "$TMP/ran" ] && not_ok "... the program was not started" || ok "... the program was not started"

# --- 7. exec and fork (before 6, which needs attaching) ---
LD_LIBRARY_PATH=$SIM:$SIMDRV SIMCUPTI_KERNEL_NS=$KA rb_same exec 0 "rb_fork: failures=0 mismatches=0\nrb_fork: child status=0\nrb_fork: failures=0 mismatches=0" \
	--gpu-time -- "$BIN/rb_fork" exec "$BIN/rb_fork" fork 2
jq_eq "$TMP/exec.json" '.processes[0].kernels[0] | [.name, .launches, .gpu_time.count, (.gpu_time.total_s * 1e9 | round)]' \
	"[\"fork_kernel\",5,5,$((5 * KA))]" "exec: 2 runs before the exec and 3 after, each with its GPU time"
jq_eq "$TMP/exec.json" '.processes[1].kernels[0] | [.launches, .gpu_time]' '[3,null]' "fork: the child's 3 launches, no GPU time"

# --- 6. gputop killed while its library is loaded ---
rm -f "$TMP/go" "$TMP/idle"
RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle rb_spawn prog2 "$BIN/ring_loop" 1 $N
rb_gputop_bg kill9 -p "$TARGET" --gpu-time
rb_wait_attached kill9
touch "$TMP/go"
wait_for_line "$TMP/prog2.out" '^idle$' 60 || bail "ring_loop ran its rounds"
grep -q libgputop-gpu.so "/proc/$TARGET/maps" || bail "gputop's library was loaded"
kill -KILL "$GPUTOP_PID"
for _ in $(seq 1 200); do grep -q libgputop-gpu.so "/proc/$TARGET/maps" || break; sleep 0.05; done
if [ -n "$(ours_mapped "$TARGET")" ]; then
	not_ok "kill -9: the library unloaded itself (10 s)"
else
	ok "kill -9: the library found itself untraced and unloaded itself, CUPTI too"
fi
touch "$TMP/idle"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "kill -9: ring_loop ends well"
finish
