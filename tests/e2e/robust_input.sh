#!/usr/bin/env bash
# Robustness, bad input (issue 5), beyond tests/e2e/errors.sh (which has: no arguments, -p abc,
# -p 0, -p -5, --bogus, -d abc, -p with a program, a PID that does not exist, gputop's own PID, a
# missing or non-executable program, --json/--trace into a missing folder, no CUDA in attach
# mode, nobody attaching to root). Each case: one clear "gputop: ..." line (a hint may follow)
# and its documented exit status (src/cli.h, man/gputop.1: 2 usage, 3 no such process or not
# traceable, 4 not permitted, 5 program not found or not executable, 6 output file, 7 no CUDA,
# 8 already traced), never a hang; where a process is named, it is left untouched.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin no_cuda rb_busy sim/libcudart.so.13
need_gputop

# try NAME STATUS REGEX WHAT ARGS...: gputop ARGS (20 s at most) exits with STATUS, its first
# stderr line starts with "gputop: " and the message matches REGEX (case-insensitive).
try() {
	local name=$1 status=$2 regex=$3 what=$4
	shift 4
	timeout -k 5 20 "$GPUTOP" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
	local got=$?
	expect_eq "$got" "$status" "$what: exit status $status"
	local first
	first=$(head -n 1 "$TMP/$name.err")
	if [[ $first == "gputop: "* ]] && grep -Eiq -- "$regex" "$TMP/$name.err"; then
		ok "$what: says /$regex/"
	else
		not_ok "$what: one \"gputop: \" line saying /$regex/"
		head -n 4 "$TMP/$name.err" | sed 's/^/#   stderr: /'
	fi
}

# --- the command line: 2 -----------------------------------------------------------------------
try p_junk 2 "invalid PID '12x'" "-p 12x" -p 12x
try p_space 2 "invalid PID ' 5'" "-p ' 5'" -p ' 5'
try p_plus 2 "invalid PID" "-p +5" -p +5
try p_big 2 "invalid PID" "-p 99999999999" -p 99999999999
try p_empty 2 "invalid PID" "-p ''" -p ''
try p_missing 2 "needs an argument" "-p without a value" -p
try d_zero 2 "invalid delay '0'" "-d 0" -d 0 -- true
try d_negative 2 "invalid delay '-1'" "-d -1" -d -1 -- true
try d_nan 2 "invalid delay" "-d nan" -d nan -- true
try d_inf 2 "invalid delay" "-d inf" -d inf -- true
try d_empty 2 "invalid delay" "--delay=" --delay= -- true
try n_zero 2 "invalid iteration count" "-n 0" -n 0 -- true
try n_abc 2 "invalid iteration count" "-n abc" -n abc -- true
try n_huge 2 "invalid iteration count" "-n 99999999999999999999" -n 99999999999999999999 -- true
try t_zero 2 "invalid timeout" "--timeout 0" --timeout 0 -- true
try t_negative 2 "invalid timeout" "--timeout -1" --timeout -1 -- true
try o_zero 2 "invalid overhead" "--max-overhead 0" --max-overhead 0 -- true
try o_100 2 "invalid overhead" "--max-overhead 100" --max-overhead 100 -- true
try unknown_short 2 "unknown option '-x'" "-x" -x -- true
try unknown_long 2 "unknown option '--frobnicate'" "--frobnicate" --frobnicate
try json_missing 2 "needs an argument" "--json without a value" --json
try o_attach 2 "launch mode" "-o with -p" -o "$TMP/o.txt" -p 1
try nothing 2 "nothing to trace" "-- alone" --

# -n so large that seconds x refreshes overflow: accepted, and it means "until the end"
timeout -k 5 20 "$GPUTOP" -q -n 9223372036854775807 -- sleep 0.5 >/dev/null 2>"$TMP/n_max.err" </dev/null
expect_eq "$?" 0 "-n 9223372036854775807: runs to the program's end (no overflow into an instant timeout)"

# --- programs: 5 ---------------------------------------------------------------------------------
try prog_empty 5 "cannot run ''" "an empty program name" -- ''
try prog_dir 5 "Is a directory" "a directory as the program" -- /tmp
try prog_path 5 "No such file" "a program not in PATH" -- gputop-no-such-program-here
printf '\x7fELF garbage' >"$TMP/badelf"
chmod 755 "$TMP/badelf"
try prog_badelf 5 "exec format error" "an executable file that is not a program" -- "$TMP/badelf"

# --- processes: 3 (and 4, 8) --------------------------------------------------------------------
# a zombie: sleep 0 exits and its parent (now sleep 60, after exec) never reaps it. (60 s, ended
# at the script's end: a few seconds could run out on a loaded machine before gputop looks.)
sh -c 'sleep 0 & echo $! >"$0"; exec sleep 60' "$TMP/zombie.pid" &
ZPARENT=$!
SPAWNED+=("$ZPARENT")
deadline=$(($(date +%s) + 20))
while [ "$(date +%s)" -lt "$deadline" ]; do
	z=$(cat "$TMP/zombie.pid" 2>/dev/null)
	[ -n "$z" ] && [ "$(proc_state "$z")" == Z ] && break
	sleep 0.02
done
try zombie 3 "zombie" "a zombie" -p "$z"

# a kernel thread: the first process in /proc whose flags have PF_KTHREAD (none in some containers)
kthread=
for f in /proc/[0-9]*/stat; do
	flags=$(awk '{ sub(/.*\) /, ""); print $7 }' "$f" 2>/dev/null)
	if [ -n "$flags" ] && (((flags & 0x00200000) != 0)); then
		kthread=$(basename "$(dirname "$f")")
		break
	fi
done
if [ -n "$kthread" ]; then
	try kthread 3 "kernel thread" "a kernel thread (PID $kthread)" -p "$kthread"
else
	note "no kernel thread visible here (a PID namespace): that case is not run"
fi

# a thread of a process, not the process
export LD_LIBRARY_PATH=$SIM RB_STOP_FILE=$TMP/stop-threaded
rb_spawn threaded "$BIN/rb_busy" busy 2 0
deadline=$(($(date +%s) + 20))
while [ "$(date +%s)" -lt "$deadline" ]; do
	tid=$(ls "/proc/$TARGET/task" | grep -vx "$TARGET" | head -n 1)
	[ -n "$tid" ] && break
	sleep 0.02
done
try thread 3 "thread of process $TARGET" "a thread's id (not the process's)" -p "$tid"
touch "$TMP/stop-threaded"
wait_pid "$TARGET" 20
unset RB_STOP_FILE

# a live process whose main thread has exited (pthread_exit): the kernel lets nobody attach to
# that thread; refused with the reason, not called a zombie
need_bin rb_threads
RB_STOP_FILE=$TMP/stop-main SIMCUDA_SYNC_HOOK=rb_threads_hook rb_spawn mainexit "$BIN/rb_threads" main-exit
try mainexit 3 "main thread has exited" "a process whose main thread has exited" -p "$TARGET"
touch "$TMP/stop-main"
wait "$TARGET"	# (not wait_pid: lib.sh's running() takes a zombie main thread for the end)
expect_eq "$?" 0 "that process ends normally"

if can_attach_to_others; then
	# already traced: by strace, by another gputop; the program is left as it was
	rm -f "$TMP/stop"
	export RB_STOP_FILE=$TMP/stop
	rb_spawn traced "$BIN/rb_busy" busy 1 0
	if command -v strace >/dev/null; then
		spawn "$TMP/strace" strace -qq -o /dev/null -p "$TARGET"
		STRACE=$SPAWNED_PID
		deadline=$(($(date +%s) + 20))
		while [ "$(date +%s)" -lt "$deadline" ]; do
			[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$TARGET/status")" != 0 ] && break
			sleep 0.05
		done
		try strace 8 "already traced by [0-9]+ \(strace\)" "a process under strace" -p "$TARGET"
		expect_match "$(cat "$TMP/strace.err")" 'only one tracer' "under strace: the hint says to detach the other"
		kill -INT "$STRACE"
		wait_pid "$STRACE" 10
	else
		note "strace is not installed: that case is not run"
	fi
	rb_gputop_bg first -p "$TARGET"
	rb_wait_attached first
	try second 8 "already traced by [0-9]+ \(gputop\)" "a process under another gputop" -p "$TARGET"
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 30
	expect_eq "$WAIT_STATUS" 0 "the first gputop detaches normally"

	# --json that cannot be written, refused before anything touches the program
	try json_proc 6 "cannot write --json file" "--json into /proc (cannot be created)" -p "$TARGET" --json /proc/gputop-test.json
	mkfifo "$TMP/fifo"
	try json_fifo 6 "not a regular file" "--json to a FIFO (no wait for a reader)" -p "$TARGET" --json "$TMP/fifo"
	try trace_fifo 6 "not a regular file" "--trace to a FIFO" -p "$TARGET" --trace "$TMP/fifo"
	try json_dir 6 "Is a directory" "--json to a directory" -p "$TARGET" --json "$TMP"
	ln -s "$TMP/json-target" "$TMP/json-link"
	try json_link 6 "symbolic link" "--json to a symbolic link" -p "$TARGET" --json "$TMP/json-link"
	[ ! -e "$TMP/json-target" ] && ok "--json to a symbolic link: nothing created where it points" ||
		not_ok "--json to a symbolic link: nothing created where it points"
	for n in json_proc json_fifo trace_fifo json_dir json_link; do
		grep -q 'attached' "$TMP/$n.err" && not_ok "$n: gputop never attached"
	done
	expect_eq "$(awk '/^TracerPid:/ { print $2 }' "/proc/$TARGET/status")" 0 "the program was left untraced"
	touch "$TMP/stop"
	wait_pid "$TARGET" 20
	expect_eq "$WAIT_STATUS" 0 "the program named in all these refusals ends normally"
	expect_eq "$(grep -v '^ready' "$TMP/traced.out")" 'rb_busy: threads=1 iterations=many failures=0 mismatches=0' \
		"... with its normal output"
	unset RB_STOP_FILE
fi

# --- no CUDA ever: 7 with a message (launch mode; errors.sh has attach mode) --------------------
# (The program runs until told to stop, not for a few seconds that a slow start on a loaded
# machine could outlast: it would then end before gputop's timeout, and gputop with it, status 0.)
# (--timeout 3: a program gputop starts is said to have no CUDA yet only 2 s into the session.)
try nocuda_launch 7 "never loaded a CUDA library" "launch mode, no CUDA before --timeout 3" \
	--timeout 3 -- "$BIN/no_cuda" --seconds 100 --stop "$TMP/stop-nocuda"
expect_match "$(cat "$TMP/nocuda_launch.err")" 'waiting for one to load' "launch, no CUDA: it said it was waiting"
try nocuda_n 7 "never loaded a CUDA library" "launch mode, no CUDA before -n 2 -d 0.3" \
	-n 2 -d 0.3 -- "$BIN/no_cuda" --seconds 100 --stop "$TMP/stop-nocuda"
try nocuda_bn 7 "never loaded a CUDA library" "launch mode, no CUDA before -b -n 2 -d 0.3" \
	-b -n 2 -d 0.3 -- "$BIN/no_cuda" --seconds 100 --stop "$TMP/stop-nocuda"
touch "$TMP/stop-nocuda"	# the programs, left running by the detach, end

# --- not permitted: 4, as an ordinary user -------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$TMP"
	cp "$GPUTOP" "$TMP/gputop-copy"
	chmod 755 "$TMP/gputop-copy"
	timeout -k 5 20 setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all \
		"$TMP/gputop-copy" -p 1 >"$TMP/pid1.out" 2>"$TMP/pid1.err" </dev/null
	expect_eq "$?" 4 "PID 1 as nobody: exit status 4"
	expect_match "$(head -n 1 "$TMP/pid1.err")" '^gputop: cannot attach to 1: Operation not permitted' \
		"PID 1 as nobody: the message"
	expect_match "$(cat "$TMP/pid1.err")" 'hint: .*(CAP_SYS_PTRACE|ptrace_scope).*gputop -- PROGRAM' \
		"PID 1 as nobody: a hint (CAP_SYS_PTRACE / ptrace_scope, launch mode)"
else
	note "PID 1 as an ordinary user: needs root, setpriv and user nobody; not run"
fi
finish
