#!/usr/bin/env bash
# test: alone (it compares the program's rate with gputop against its rate without)
# Issue 33, part 1: harmless in containers. A program in other namespaces than gputop's,
# attached from outside by the PID gputop sees (a hostPID DaemonSet, a shell on the node), on
# the SIMULATED libraries. Needs root (unshare); skipped without.
#  1. Another PID namespace (unshare -p -f --mount-proc: the program is PID 1 there, its
#     threads 2, 3...; gettid() there is not the tid gputop traces). rb_progress (1 thread of
#     cudaMalloc, cudaMemcpy H2D, cudaLaunchKernel, cudaMemcpy D2H, cudaFree, as fast as it
#     goes; the runtime over the driver, so the first launch parks in the launch ring to have
#     its kernel named):
#     a. NS_ATTACHES attaches (3 here; NS_ATTACHES=10 by hand), every second one under
#        --no-int3: attached before the program starts, which makes progress while attached
#        (it froze before: its parked thread was never found) and ends by itself while
#        traced; its status and output as without gputop; every count of gputop's JSON equals
#        what the program says it did (its "total" line).
#     b. Its rate (rounds a second by its own clock, over windows of K intervals of 100 ms,
#        the median of W windows a phase), paced as a real program is (RB_PAUSE_US=100: ~4500
#        rounds, 22000 CUDA calls a second, the order of PyTorch's training loop), attached, is
#        at least 0.9 of its untraced rate (measured: 0.97-1.07). The untraced rate: the slower
#        of the phase before the attach and the one after the detach, the same process moments
#        apart (a busy 2-CPU machine changes pace from minute to minute: a run minutes earlier
#        would compare the load, not gputop). Attached: from 1.5 s after the attach on, past
#        the attach's own cost (unpaced: 31000-41000 rounds/s in the second after it, 45000
#        from then on). Unpaced (225000 calls a second, each recorded by a stub; gputop's
#        drains take a tenth of a CPU of 2 shared ones) the ratio measured 0.64-0.93, in
#        gputop's own PID namespace as in another: the calls' cost, not the namespaces'.
#        The detach puts back every byte of the libraries' code and takes gputop's pages
#        away; the program goes on and ends normally.
#     c. Python (python3.11, tests/progs/py_loop.py): --stacks allocs gives the Python frames
#        (CPython's native thread id is the program's gettid()).
#     d. --gpu-time (the simulated CUPTI, ring_loop as in gputime.sh part 2): the library
#        stays loaded while gputop is there (TracerPid reads 0 in the program's /proc: it
#        unloaded itself at once before) and the GPU time is exact; detached: nothing of it
#        stays. gputop killed (SIGKILL): the library unloads itself once gputop's beat has
#        stood still 10 s, and the program goes on.
#  2. Another mount namespace (unshare -m): libcudart.so.13 reachable only at a folder that
#     exists as such inside (a tmpfs mounted over it, the library copied there), attached from
#     outside: (a) nothing at that path in gputop's view: the CUDA library is found (gputop
#     said "no CUDA library ... waiting for one to load" before); (b) the toolkit's real
#     libcudart.so.13 at that path in gputop's view, other code at the same offsets: gputop
#     reads the program's file, not its own (before, it planted probes at the real library's
#     offsets in the simulated one). Figures exact in both.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_progress ring_loop sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop
unshare -p -f --kill-child --mount-proc true 2>/dev/null || skip "unshare -p -f --mount-proc is not allowed here (root needed)"

K=10	# intervals of 100 ms in a window
W=5	# windows in a phase
NS_ATTACHES=${NS_ATTACHES:-3}
WANT_OUT=$'rb_progress: running\nrb_progress: threads=1 rounds=many failures=0 mismatches=0'

# median_rate FILE FROM: the median rate (rounds a second, by the program's time stamps) of
# the W windows of K intervals from progress line FROM on.
median_rate() {
	awk -v a="$2" -v k="$K" -v w="$W" '$1 == "progress" { t[NR] = $2; n[NR] = $3 }
		END { for (i = 0; i < w; i++) { s = a + i * k; e = s + k; r[i] = (n[e] - n[s]) / (t[e] - t[s])
			for (j = i; j > 0 && r[j - 1] > r[j]; j--) { x = r[j]; r[j] = r[j - 1]; r[j - 1] = x } }
		      printf "%.0f\n", r[int(w / 2)] }' "$1"
}

# ns_spawn NAME CMD...: CMD as PID 1 of a new PID namespace (with its own /proc), in the
# background; waits for its "ready" line. unshare's pid (its status is the program's) in
# TARGET_WAIT, the program's pid as gputop sees it in TARGET.
ns_spawn() {
	local name=$1
	shift
	spawn "$TMP/$name" unshare -p -f --kill-child --mount-proc "$@"
	TARGET_WAIT=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20 || bail "$name: the program said ready"
	TARGET=$(pgrep -P "$TARGET_WAIT")
	expect_eq "$(awk '$1 == "NSpid:" { print $NF }' "/proc/$TARGET/status")" 1 "$name: the program is PID 1 in its own namespace, $TARGET here"
}

# code_of PID OUT: the code of the simulated libraries in PID (their executable mappings).
code_of() {
	local range perms name
	: >"$2"
	while read -r range perms name; do
		[[ $perms == r-xp && $name == */sim*/libcud* ]] || continue
		dd if="/proc/$1/mem" bs=4096 skip=$((16#${range%-*} / 4096)) \
			count=$(((16#${range#*-} - 16#${range%-*}) / 4096)) 2>/dev/null >>"$2"
	done < <(awk '{ print $1, $2, $6 }' "/proc/$1/maps")
}

# exec_maps PID: its executable mappings.
exec_maps() {
	awk '$2 ~ /x/ { print $1, $2, $6 }' "/proc/$1/maps"
}

# exact_counts JSON TOTAL WHAT: rb_progress's calls, TOTAL rounds of them.
exact_counts() {
	local F=$1 n=$2 w=$3
	jq_eq "$F" "[$(api_row cudaMalloc).calls, $(api_row cudaFree).calls, $(api_row cudaMemcpy).calls]" \
		"[$n,$n,$((2 * n))]" "$w: cudaMalloc, cudaFree, cudaMemcpy as the program made them"
	jq_eq "$F" '[.launches, (.kernels | map(.launches) | add)]' "[$n,$n]" "$w: its $n launches"
	jq_eq "$F" '[.api[] | select(.errors > 0)] | length' 0 "$w: no error"
	note "$w: lost records (recorded or not, every call is counted): $(jq '.cost.lost_records' "$F")"
}

# --- 1a. attaches by the host's PID ----------------------------------------------------------
export LD_LIBRARY_PATH=$SIM:$SIMDRV RB_LAUNCH=1
for i in $(seq 1 "$NS_ATTACHES"); do
	name=a$i opts=()
	[ $((i % 2)) -eq 0 ] && opts=(--no-int3) name=a$i-no-int3
	rm -f "$TMP/go" "$TMP/stop" "$TMP/$name.progress"
	ns_spawn "$name" env RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop" RB_PROGRESS_FILE="$TMP/$name.progress" \
		"$BIN/rb_progress" 1 0
	rb_gputop_bg "$name-g" -p "$TARGET" --json "$TMP/$name.json" "${opts[@]}"
	rb_wait_attached "$name-g"
	touch "$TMP/go"
	# progress while attached: 20000 rounds (it froze after its first launch before)
	deadline=$(($(date +%s) + 20))
	while [ "$(awk 'END { print $3 + 0 }' "$TMP/$name.progress" 2>/dev/null)" -lt 20000 ] && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.1
	done
	got=$(awk 'END { print $3 + 0 }' "$TMP/$name.progress" 2>/dev/null)
	if [ "$got" -ge 20000 ]; then
		ok "$name: the program makes progress while attached ($got rounds)"
	else
		not_ok "$name: the program makes progress while attached (only $got rounds in 20 s)"
		for t in /proc/"$TARGET"/task/*; do
			echo "#   thread ${t##*/}: $(awk '$1 == "NSpid:" { print "NSpid", $2, $3 }' "$t/status") $(cat "$t/wchan" 2>/dev/null)"
		done
	fi
	touch "$TMP/stop"
	wait_pid "$TARGET_WAIT" 30
	expect_eq "$WAIT_STATUS" 0 "$name: the program exits 0 while traced"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$WANT_OUT" "$name: its output, as without gputop"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "$name: gputop ends with the program, status 0"
	rb_no_trap "$TMP/$name-g.err" "$name"
	total=$(awk '$1 == "total" { print $3 }' "$TMP/$name.progress")
	jq_eq "$TMP/$name.json" '.exit_status' 0 "$name: the JSON has its exit"
	exact_counts "$TMP/$name.json" "$total" "$name"
done

# --- 1b. its rate, attached and not; the detach -------------------------------------------------
P=$TMP/rate.progress
rm -f "$TMP/go" "$TMP/stop" "$P"
touch "$TMP/go"
ns_spawn rate env RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop" RB_PROGRESS_FILE="$P" RB_PAUSE_US=100 \
	"$BIN/rb_progress" 1 0
wait_for_line "$TMP/rate.out" '^rb_progress: running$' 20 || note "rate: the program did not say running"
before=$(($(lines "$P") + 2))
wait_lines "$P" $((before + W * K)) 30 || bail "rate: progress lines without gputop"
code_of "$TARGET" "$TMP/rate.code.before"
exec_maps "$TARGET" >"$TMP/rate.maps.before"
rb_gputop_bg rate-g -p "$TARGET" --json "$TMP/rate.json"
rb_wait_attached rate-g
attached=$(($(lines "$P") + 15))	# past the attach's own cost
wait_lines "$P" $((attached + W * K)) 30 || bail "rate: progress lines with gputop attached"
kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 30
expect_eq "$WAIT_STATUS" 0 "rate: gputop detaches on SIGTERM, status 0"
expect_match "$(cat "$TMP/rate-g.err")" "detached from $TARGET" "rate: gputop says it detached"
code_of "$TARGET" "$TMP/rate.code.after"
[ -s "$TMP/rate.code.before" ] && cmp -s "$TMP/rate.code.before" "$TMP/rate.code.after" &&
	ok "rate: detached, every byte of the libraries' code as before" ||
	not_ok "rate: detached, every byte of the libraries' code as before"
exec_maps "$TARGET" >"$TMP/rate.maps.after"
expect_file_eq "$TMP/rate.maps.after" "$TMP/rate.maps.before" "rate: detached, the executable mappings as before (gputop's pages gone)"
after=$(($(lines "$P") + 2))
wait_lines "$P" $((after + W * K)) 30 || bail "rate: progress lines after the detach"
r_before=$(median_rate "$P" "$before") r_attached=$(median_rate "$P" "$attached") r_after=$(median_rate "$P" "$after")
r_untraced=$((r_before < r_after ? r_before : r_after))
note "rate: rounds a second (medians of $W windows of $K intervals): before $r_before, attached $r_attached, after the detach $r_after"
if [ "$r_untraced" -gt 0 ] && [ $((r_attached * 10)) -ge $((r_untraced * 9)) ]; then
	ok "rate: attached, at least 0.9 of its untraced rate ($r_attached vs $r_untraced)"
else
	not_ok "rate: attached, at least 0.9 of its untraced rate ($r_attached vs $r_untraced)"
fi
expect_running "$TARGET" "rate: the program runs on after the detach"
touch "$TMP/stop"
wait_pid "$TARGET_WAIT" 30
expect_eq "$WAIT_STATUS" 0 "rate: the program exits 0"
expect_eq "$(grep -v '^ready' "$TMP/rate.out")" "$WANT_OUT" "rate: its output, as without gputop"
jq_check "$TMP/rate.json" "$(api_row cudaMalloc).calls > 0 and .exit_status == null" "rate: calls counted while attached, the program outlived the session"

# --- 1c. Python frames --------------------------------------------------------------------------
PY=/usr/bin/python3.11
if [ -x "$PY" ]; then
	rm -f "$TMP/stop"
	PROG=$ROOT/tests/progs/py_loop.py
	line=$(grep -n '@site grow$' "$PROG" | cut -d: -f1) loop=$(grep -n '@site loop$' "$PROG" | cut -d: -f1)
	ns_spawn py env LD_LIBRARY_PATH="$SIM" "$PY" "$PROG" "$SIM/libcudart.so.13" "$TMP/stop"
	rb_gputop_bg py-g -p "$TARGET" --stacks allocs --json "$TMP/py.json" -b -d 0.5 -n 4
	rb_wait_attached py-g
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "py: gputop detaches after -n 4, status 0"
	jq_eq "$TMP/py.json" '[.memory.leaks[0].stack[] | select(.python) | [.function, (.file | split("/") | last), .line]][0:2]' \
		"[[\"grow\",\"py_loop.py\",$line],[\"<module>\",\"py_loop.py\",$loop]]" \
		"py: a leak's Python frames: grow <- <module>, with lines"
	touch "$TMP/stop"
	wait_pid "$TARGET_WAIT" 30
	expect_eq "$WAIT_STATUS" 0 "py: the program exits 0"
	expect_eq "$(grep -v '^ready' "$TMP/py.out")" "py_loop: ok" "py: its output"
else
	note "no $PY here: Python frames in another PID namespace not tested"
fi

# --- 1d. --gpu-time ------------------------------------------------------------------------------
if [ -f "$ROOT/build/libgputop-gpu.so" ] && [ -f "$BIN/simcupti/libcupti.so.13" ]; then
	N=300
	ours_mapped() {
		awk '{ n = split($6, p, "/"); if (p[n] ~ /^(libgputop-gpu\.so|libcupti)/) print }' "/proc/$1/maps"
	}
	rm -f "$TMP/go" "$TMP/idle"
	ns_spawn gt env LD_LIBRARY_PATH="$SIMDRV" RB_GO_FILE="$TMP/go" RB_IDLE_FILE="$TMP/idle" \
		SIMCUPTI_KERNEL_NS=_Z6ring_aPi=1000000 "$BIN/ring_loop" 1 $N
	GPUTOP_CUPTI=$BIN/simcupti/libcupti.so.13 rb_gputop_bg gt-g -p "$TARGET" --gpu-time --json "$TMP/gt.json"
	rb_wait_attached gt-g
	touch "$TMP/go"
	wait_for_line "$TMP/gt.out" '^idle$' 60 || bail "gt: ring_loop ran its rounds"
	sleep 1	# the library looks for gputop every 250 ms: it unloaded itself within that before
	[ -n "$(ours_mapped "$TARGET")" ] && ok "gt: gputop's library and CUPTI stay loaded while gputop is there" ||
		not_ok "gt: gputop's library and CUPTI stay loaded while gputop is there"
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 60
	expect_eq "$WAIT_STATUS" 0 "gt: gputop detaches, status 0"
	jq_eq "$TMP/gt.json" "$(kernel_row 'ring_a(int*)').gpu_time | [.count, (.total_s * 1e9 | round)]" "[$N,$((N * 1000000))]" \
		"gt: ring_a's GPU time: $N runs of 1 ms"
	[ -z "$(ours_mapped "$TARGET")" ] && ok "gt: after the detach nothing of it is mapped" ||
		not_ok "gt: after the detach nothing of it is mapped"
	touch "$TMP/idle"
	wait_pid "$TARGET_WAIT" 30
	expect_eq "$WAIT_STATUS" 0 "gt: ring_loop ends well"

	# gputop killed: the library goes once gputop's beat stood still 10 s
	rm -f "$TMP/go" "$TMP/stop"
	ns_spawn gk env LD_LIBRARY_PATH="$SIMDRV" RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop" RB_PAUSE_US=1000 \
		"$BIN/ring_loop" 1 0
	touch "$TMP/go"
	GPUTOP_CUPTI=$BIN/simcupti/libcupti.so.13 rb_gputop_bg gk-g -p "$TARGET" --gpu-time
	rb_wait_attached gk-g
	wait_for_line "$TMP/gk-g.err" 'CUPTI records kernels' 20 || note "gk: gputop did not say CUPTI records"
	kill -KILL "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 10
	killed=$(date +%s)
	while [ -n "$(ours_mapped "$TARGET")" ] && [ $(($(date +%s) - killed)) -lt 30 ]; do
		sleep 0.2
	done
	gone=$(($(date +%s) - killed))
	[ -z "$(ours_mapped "$TARGET")" ] && ok "gk: gputop killed, its library unloaded itself ($gone s)" ||
		not_ok "gk: gputop killed, its library unloaded itself (still mapped after 30 s)"
	expect_running "$TARGET" "gk: the program runs on"
	touch "$TMP/stop"
	wait_pid "$TARGET_WAIT" 30
	expect_eq "$WAIT_STATUS" 0 "gk: ring_loop ends well"
	expect_match "$(grep '^ring_loop: launches' "$TMP/gk.out")" 'failures=0$' "gk: every call succeeded"
else
	note "no build/libgputop-gpu.so or simulated CUPTI: --gpu-time in another PID namespace not tested"
fi

# --- 2. another mount namespace -------------------------------------------------------------------
# mount_ns NAME: rb_progress in a new mount namespace whose $TMP/nslib is a tmpfs holding the
# simulated libcudart.so.13 (the only one it can load), attached before it starts.
mount_ns() {
	local name=$1 P=$TMP/$1.progress
	rm -f "$TMP/go" "$TMP/stop" "$P"
	spawn "$TMP/$name" unshare -m --propagation private sh -c \
		'mount -t tmpfs none "$1" && cp "$2" "$1/" && shift 2 && exec "$@"' sh "$TMP/nslib" "$SIM/libcudart.so.13" \
		env LD_LIBRARY_PATH="$TMP/nslib" RB_LAUNCH=1 RB_GO_FILE="$TMP/go" RB_STOP_FILE="$TMP/stop" \
		RB_PROGRESS_FILE="$P" "$BIN/rb_progress" 1 0
	TARGET=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20 || bail "$name: the program said ready"
	expect_eq "$(awk '$6 ~ /libcudart/ { print $6; exit }' "/proc/$TARGET/maps")" "$TMP/nslib/libcudart.so.13" \
		"$name: the program maps its libcudart.so.13 from $TMP/nslib"
	rb_gputop_bg "$name-g" -p "$TARGET" --json "$TMP/$name.json"
	rb_wait_attached "$name-g"
	expect_match "$(cat "$TMP/$name-g.err")" 'probing [0-9]+ CUDA functions in libcudart.so.13$' "$name: gputop finds the CUDA library, every probe planted"
	touch "$TMP/go"
	wait_lines "$P" 5 20
	touch "$TMP/stop"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "$name: the program exits 0 while traced"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$WANT_OUT" "$name: its output, as without gputop"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "$name: gputop ends with the program, status 0"
	rb_no_trap "$TMP/$name-g.err" "$name"
	exact_counts "$TMP/$name.json" "$(awk '$1 == "total" { print $3 }' "$P")" "$name"
}

mkdir -p "$TMP/nslib"
mount_ns mnt-none
if [ -f "$REAL/libcudart.so.13" ]; then
	cp "$REAL/libcudart.so.13" "$TMP/nslib/"
	mount_ns mnt-other
else
	note "no $REAL/libcudart.so.13: another file at the program's path in gputop's view not tested"
fi

finish
