#!/usr/bin/env bash
# Robustness, seccomp (issue 17, part 6): gputop makes a traced program run mmap and munmap (its
# trampoline page); under a seccomp filter that forbids them the program would die of SIGSYS.
# The program is tests/progs/rb_seccomp.c: a filter that kills any anonymous executable mapping,
# then CUDA work in 4 threads that checks its own data; on the SIMULATED runtime.
#  1. root, attach: gputop reads the filter and runs it on the mmap it would make the program
#     run: refused, exit status 9, the filter and its answer named; the program is left untraced
#     and finishes its work, 5 trials; --trust-seccomp changes nothing (the filter is shown to
#     kill);
#  2. nobody, attach (the filter cannot be read): refused, exit 9, with what to do; the program
#     finishes. With --trust-seccomp gputop goes on and the program dies of SIGSYS, which the
#     option risks: gputop says so and ends at once (it never waits on one thread of a dead
#     program), 6 trials;
#  3. launch mode, root and nobody: the program starts under gputop's own (no) filter, installs
#     its own later, and is traced to its end with exact counts; detached (SIGTERM) once its
#     filter is on, it finishes (as nobody the unmapping is refused: the pages stay, harmless);
#  4. gputop itself under a filter: a W^X one (a child of gputop dies trying the calls): launch
#     refused before the program starts, attach refused; a benign one shared with the program, as
#     in a container: attach goes on and counts exactly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_seccomp rb_busy sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
P=$BIN/rb_seccomp
DONE='rb_seccomp: filter=kills-exec threads=4 iterations=200 failures=0 mismatches=0'
can_attach_to_others || skip "this user may not attach to other processes (ptrace_scope)"

# wx_spawn NAME [PREFIX...]: rb_seccomp 4 50 waiting for $TMP/NAME.go, started through PREFIX
# (e.g. setpriv ... env ...: they exec, so the pid is the program's); pid in TARGET.
wx_spawn() {
	local name=$1
	shift
	rm -f "$TMP/$name.go"
	spawn "$TMP/$name" "$@" env RB_GO_FILE="$TMP/$name.go" "$P" 4 50
	TARGET=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 30 || bail "$name: rb_seccomp said ready"
}

# wx_finishes NAME WHAT: the program is alive, untraced, and once let go finishes its work.
wx_finishes() {
	local name=$1 what=$2
	expect_running "$TARGET" "$what: the program is alive"
	expect_eq "$(awk '/^TracerPid:/ { print $2 }' "/proc/$TARGET/status" 2>/dev/null)" 0 "$what: and not traced"
	touch "$TMP/$name.go"
	wait_pid "$TARGET" 60
	expect_eq "$WAIT_STATUS" 0 "$what: it finishes, status 0"
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$DONE" "$what: its work and data are right"
}

# anon_exec_maps PID: anonymous read+execute mappings of 64 KiB (gputop's trampoline pages).
anon_exec_maps() {
	local range perms offset dev inode path n=0
	while read -r range perms offset dev inode path; do
		[ "$perms" == r-xp ] && [ "$inode" == 0 ] && [ -z "$path" ] &&
			[ $((16#${range#*-} - 16#${range%-*})) -eq 65536 ] && n=$((n + 1))
	done <"/proc/$1/maps"
	echo "$n"
}

# --- 1. root: the filter is read and run ------------------------------------------------------
rb_plain plain "$P" 4 50
expect_eq "$PLAIN_STATUS" 0 "without gputop: status 0"
expect_eq "$(grep -v '^ready' "$TMP/plain.plain")" "$DONE" "without gputop: its work and data are right"

if [ "$(id -u)" -eq 0 ]; then
	for i in 1 2 3 4 5; do
		wx_spawn root$i
		timeout -k 5 60 "$GPUTOP" -p "$TARGET" --timeout 10 >"$TMP/root$i.g.out" 2>"$TMP/root$i.g.err" </dev/null
		expect_eq "$?" 9 "root, trial $i: attach refused, exit status 9"
		wx_finishes root$i "root, trial $i"
	done
	expect_match "$(cat "$TMP/root1.g.err")" \
		"cannot trace $(awk '/^ready/ { print $2 }' "$TMP/root1.out"): its seccomp filter 1 of 1 \(newest first, [0-9]+ BPF instructions.*answers SECCOMP_RET_KILL_PROCESS to mmap\(PROT_READ\|PROT_EXEC, MAP_PRIVATE\|MAP_ANONYMOUS\)" \
		"root: the message names the filter, its answer and the call"
	expect_match "$(cat "$TMP/root1.g.err")" 'Nothing was changed in [0-9]+: it runs on' "root: ... and says the program runs on"
	wx_spawn trust
	timeout -k 5 60 "$GPUTOP" --trust-seccomp -p "$TARGET" --timeout 10 >/dev/null 2>"$TMP/trust.g.err" </dev/null
	expect_eq "$?" 9 "root, --trust-seccomp: still refused, the filter is shown to kill"
	wx_finishes trust "root, --trust-seccomp"
else
	note "part 1 not run: not root (gputop cannot read filters)"
fi

# --- 2. nobody: the filter cannot be read ---------------------------------------------------------
NB=$TMP/nb
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	NOGROUP=$(id -gn nobody)
	mkdir -p "$NB/sim"
	cp "$GPUTOP" "$P" "$NB/"
	cp "$SIM/libcudart.so.13" "$NB/sim/"
	chmod 755 "$TMP" "$NB" "$NB/sim" "$NB/gputop" "$NB/rb_seccomp"
	chmod 644 "$NB/sim/libcudart.so.13"
	chmod 777 "$TMP"
	NOBODY=(setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups --inh-caps=-all --bounding-set=-all
		env LD_LIBRARY_PATH="$NB/sim")
	P=$NB/rb_seccomp
	for i in 1 2; do
		wx_spawn nb$i "${NOBODY[@]}"
		timeout -k 5 60 "${NOBODY[@]}" "$NB/gputop" -p "$TARGET" --timeout 10 >/dev/null 2>"$TMP/nb$i.g.err" </dev/null
		expect_eq "$?" 9 "nobody, trial $i: attach refused, exit status 9"
		wx_finishes nb$i "nobody, trial $i"
	done
	expect_match "$(cat "$TMP/nb1.g.err")" 'runs under a seccomp filter gputop cannot read \(Seccomp: 2, Seccomp_filters: 1; gputop runs under none\)' \
		"nobody: the message says which filter and why it cannot be checked"
	expect_match "$(cat "$TMP/nb1.g.err")" 'hint: .*CAP_SYS_ADMIN.*--trust-seccomp' "nobody: ... and what to do"

	# --trust-seccomp: the program is killed (what the option risks); gputop must not hang.
	for i in 1 2 3 4 5 6; do
		wx_spawn nbt$i "${NOBODY[@]}"
		start=$(date +%s)
		timeout -k 5 60 "${NOBODY[@]}" "$NB/gputop" --trust-seccomp -p "$TARGET" --timeout 10 \
			>/dev/null 2>"$TMP/nbt$i.g.err" </dev/null
		status=$?
		expect_eq "$status" 1 "nobody, --trust-seccomp, trial $i: gputop ends, status 1 (not a timeout)"
		expect_match "$(cat "$TMP/nbt$i.g.err")" "$TARGET was killed by SIGSYS while gputop was attaching: a seccomp filter" \
			"nobody, --trust-seccomp, trial $i: gputop says how the program died"
		wait_pid "$TARGET" 30
		expect_eq "$WAIT_STATUS" 159 "nobody, --trust-seccomp, trial $i: the program died of SIGSYS and its parent reaped it"
		note "trial $i: gputop took $(($(date +%s) - start)) s"
	done
	P=$BIN/rb_seccomp
else
	note "part 2 not run: needs root, setpriv and a user nobody"
fi

# --- 3. launch mode -----------------------------------------------------------------------------------
check_counts() {
	expect_api "$1" cudaMalloc 201 0
	expect_api "$1" cudaFree 201 0
	expect_api "$1" cudaMemcpy 400 0
	expect_launch_api "$1" 200 cudaLaunchKernel cuLaunchKernel
}
rb_same launch 0 "$DONE" -- "$P" 4 50
check_counts "$TMP/launch.json"

# detached once the program's filter is on: it finishes without gputop
launch_detach() {
	local name=$1
	shift
	rm -f "$TMP/$name.go"
	spawn "$TMP/$name" "$@" env RB_GO_FILE="$TMP/$name.go" "$GPUTOP_RUN" -- "$P" 4 50
	local g=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 30 || bail "$name: rb_seccomp said ready"
	wait_for_line "$TMP/$name.err" 'probing' 30
	PROG=$(awk '/^ready/ { print $2; exit }' "$TMP/$name.out")
	kill -TERM "$g"
	wait_pid "$g" 30
	expect_eq "$WAIT_STATUS" 0 "$name: gputop detaches, status 0"
	MAPS_AFTER=$(anon_exec_maps "$PROG")
	touch "$TMP/$name.go"
	wait_gone "$PROG" 60
	expect_eq "$(grep -v '^ready' "$TMP/$name.out")" "$DONE" "$name: the program finishes its work, data right"
}
GPUTOP_RUN=$GPUTOP
launch_detach detach-root
[ "$(id -u)" -eq 0 ] && expect_eq "$MAPS_AFTER" 0 "detach-root: the trampoline pages are gone (the filter allows munmap)"

if [ -d "$NB" ] && [ -n "${NOBODY+x}" ]; then
	P=$NB/rb_seccomp
	mkdir -p "$NB/out" && chmod 777 "$NB/out"
	"${NOBODY[@]}" "$NB/gputop" -q --json "$NB/out/launch.json" -- "$P" 4 50 >"$TMP/nbl.out" 2>"$TMP/nbl.err" </dev/null
	expect_eq "$?" 0 "nobody, launch: status 0"
	expect_eq "$(grep -v '^ready' "$TMP/nbl.out")" "$DONE" "nobody, launch: the program's work and data are right"
	check_counts "$NB/out/launch.json"
	GPUTOP_RUN=$NB/gputop
	launch_detach detach-nobody "${NOBODY[@]}"
	expect_match "$(cat "$TMP/detach-nobody.err")" 'not making thread [0-9]+ run munmap: it runs under a seccomp filter gputop cannot read' \
		"detach-nobody: the unmapping is refused, and said"
	expect_eq "$([ "$MAPS_AFTER" -ge 1 ] && echo yes)" yes "detach-nobody: the trampoline pages stay ($MAPS_AFTER)"
	P=$BIN/rb_seccomp
fi

# --- 4. gputop under a filter itself --------------------------------------------------------------
"$P" --exec-under wx "$GPUTOP" -q -- "$BIN/rb_busy" busy 2 5 >"$TMP/own.out" 2>"$TMP/own.err" </dev/null
expect_eq "$?" 9 "gputop under a W^X filter, launch: refused, exit status 9"
expect_match "$(cat "$TMP/own.err")" 'gputop itself runs under a seccomp filter .*killed by SIGSYS.*it was not started' \
	"... saying so"
expect_eq "$(grep -c '^ready' "$TMP/own.out")" 0 "... and the program was not started"

wx_spawn ownattach
timeout -k 5 60 "$P" --exec-under wx "$GPUTOP" -p "$TARGET" --timeout 10 >/dev/null 2>"$TMP/ownattach.g.err" </dev/null
expect_eq "$?" 9 "gputop under a W^X filter, attach to a program under one: refused, exit 9"
expect_match "$(cat "$TMP/ownattach.g.err")" 'cannot read .*a child of gputop making them was killed by SIGSYS' "... saying why"
wx_finishes ownattach "gputop under a W^X filter, attach"

# A filter both run under (one each, the same depth), which allows the calls: a container's.
rm -f "$TMP/benign.go"
spawn "$TMP/benign" env RB_GO_FILE="$TMP/benign.go" "$P" --exec-under benign "$BIN/rb_busy" busy 2 5
TARGET=$SPAWNED_PID
wait_for_line "$TMP/benign.out" '^ready [0-9]+$' 30 || bail "benign: rb_busy said ready"
spawn "$TMP/benign-g" "$P" --exec-under benign "$GPUTOP" -p "$TARGET" --json "$TMP/benign.json"
G=$SPAWNED_PID
rb_wait_attached benign-g
touch "$TMP/benign.go"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "container-like filter: the program finishes, status 0"
wait_pid "$G" 30
expect_eq "$WAIT_STATUS" 0 "container-like filter: gputop traced it to its end, status 0"
expect_eq "$(grep -v '^ready' "$TMP/benign.out")" 'rb_busy: threads=2 iterations=10 failures=0 mismatches=0' \
	"container-like filter: the program's work is right"
expect_api "$TMP/benign.json" cudaMalloc 10 0
expect_api "$TMP/benign.json" cudaFree 10 0
expect_api "$TMP/benign.json" cudaMemcpy 20 0
expect_launch_api "$TMP/benign.json" 20 cudaLaunchKernel cuLaunchKernel
finish
