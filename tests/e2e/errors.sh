#!/usr/bin/env bash
# Acceptance 6: every error case gives a clear message ("gputop: ...") and its exit status
# (man/gputop.1, EXIT STATUS: 2 usage, 3 no such process, 4 not permitted, 5 program not found
# or not executable, 6 output file cannot be written, 7 no CUDA library before --timeout), and
# leaves nothing behind in the program.
source "$(dirname "$0")/../lib.sh"
need_bin no_cuda
need_gputop

# try NAME ARGS...: runs gputop ARGS (30 s at most); status in STATUS, stderr in ERR.
try() {
	local name=$1
	shift
	note "gputop $*"
	timeout -k 5 30 "$GPUTOP" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
	STATUS=$?
	ERR=$(cat "$TMP/$name.err")
}

# expect_error NAME STATUS REGEX WHAT ARGS...: gputop ARGS exits with STATUS and its stderr has a
# "gputop: " line and matches REGEX (case-insensitive; "" = anything).
expect_error() {
	local name=$1 status=$2 regex=$3 what=$4
	shift 4
	try "$name" "$@"
	expect_eq "$STATUS" "$status" "$what: exit status $status"
	if grep -q '^gputop: ' <<<"$ERR"; then
		ok "$what: a gputop: message"
	else
		not_ok "$what: a message starting with \"gputop: \" on stderr"
		printf '%s\n' "$ERR" | head -n 5 | sed 's/^/#   stderr: /'
	fi
	if [ -n "$regex" ]; then
		if grep -Eiq -- "$regex" <<<"$ERR"; then
			ok "$what: the message says /$regex/"
		else
			not_ok "$what: the message says /$regex/"
			printf '%s\n' "$ERR" | head -n 5 | sed 's/^/#   stderr: /'
		fi
	fi
}

# --- usage errors: 2 ------------------------------------------------------------------------
expect_error noargs 2 '' "no arguments"
expect_error p_abc 2 '' "-p abc" -p abc
expect_error p_zero 2 '' "-p 0" -p 0
expect_error p_negative 2 '' "-p -5" -p -5
expect_error bogus 2 'bogus' "unknown option" --bogus
expect_error delay 2 '' "-d abc" -d abc -- true
expect_error both 2 '' "-p and a program both" -p 1 -- true

# --- no such process: 3 -----------------------------------------------------------------------
nopid=999999
while kill -0 "$nopid" 2>/dev/null; do nopid=$((nopid - 1)); done
expect_error nopid 3 'no such process' "-p $nopid (no such process)" -p "$nopid"

# gputop asked to trace itself: refused at once (3 or 4), never a hang.
timeout -k 5 30 sh -c 'exec "$0" -p $$' "$GPUTOP" >"$TMP/self.out" 2>"$TMP/self.err" </dev/null
STATUS=$?
if [ "$STATUS" -eq 3 ] || [ "$STATUS" -eq 4 ]; then
	ok "-p <gputop's own pid>: refused, status $STATUS"
else
	not_ok "-p <gputop's own pid>: refused with status 3 or 4 (got $STATUS)"
	head -n 5 "$TMP/self.err" | sed 's/^/#   stderr: /'
fi

# --- program not found or not executable: 5 ---------------------------------------------------
expect_error missing 5 '/nonexistent' "missing program" -b -- /nonexistent
printf 'not a program\n' >"$TMP/notexec"
chmod 644 "$TMP/notexec"
expect_error notexec 5 'notexec' "program not executable" -b -- "$TMP/notexec"

# --- output file cannot be written: 6, before anything runs -----------------------------------
expect_error json 6 '/nonexistent-dir/x.json' "--json into a missing folder" \
	-b --json /nonexistent-dir/x.json -- touch "$TMP/ran-json"
[ ! -e "$TMP/ran-json" ] && ok "--json error: the program never ran" ||
	not_ok "--json error: the program never ran"
expect_error trace 6 '/nonexistent-dir/t.txt' "--trace into a missing folder" \
	-b --trace /nonexistent-dir/t.txt -- touch "$TMP/ran-trace"
[ ! -e "$TMP/ran-trace" ] && ok "--trace error: the program never ran" ||
	not_ok "--trace error: the program never ran"

# --- no CUDA library in the process before --timeout: 7; the program runs on -------------------
if can_attach_to_others; then
	# It runs until told to stop (not for a few seconds, which a slow attach on a loaded
	# machine could outlast: "still runs" would then fail).
	spawn "$TMP/nocuda" "$BIN/no_cuda" --seconds 100 --stop "$TMP/stop-nocuda"
	target=$SPAWNED_PID
	wait_for_line "$TMP/nocuda.out" '^ready [0-9]+$' 30 || bail "no_cuda said ready"
	expect_error nocudalib 7 'cuda' "attach to a program without CUDA, --timeout 1" \
		-p "$target" -b --timeout 1
	expect_match "$ERR" '[Ww]ait' "no CUDA: the message says gputop waited for a CUDA library"
	expect_running "$target" "no CUDA: the program still runs"
	touch "$TMP/stop-nocuda"
	wait_pid "$target" 30
	expect_eq "$WAIT_STATUS" 0 "no CUDA: the program ends normally, status 0"
	expect_match "$(cat "$TMP/nocuda.out")" '^no_cuda: done$' "no CUDA: the program finished its work"
else
	note "no-CUDA attach part not run: this user may not ptrace other processes"
fi

# --- not permitted: 4, with a hint ---------------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	nobody_gputop=$GPUTOP
	if ! as_nobody "$nobody_gputop" --version >/dev/null 2>&1; then
		# nobody cannot reach the build folder: a copy it can run (with any bundled libraries)
		chmod 755 "$TMP"
		cp -r "$(dirname "$GPUTOP")" "$TMP/gputop-build"
		chmod -R a+rX "$TMP/gputop-build"
		nobody_gputop=$TMP/gputop-build/$(basename "$GPUTOP")
	fi
	if as_nobody "$nobody_gputop" --version >/dev/null 2>&1; then
		spawn "$TMP/rootproc" "$BIN/no_cuda" --seconds 10
		target=$SPAWNED_PID
		wait_for_line "$TMP/rootproc.out" '^ready [0-9]+$' 30 || bail "no_cuda said ready"
		note "as nobody: gputop -p $target"
		timeout -k 5 30 setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$nobody_gputop" -p "$target" -b >"$TMP/perm.out" 2>"$TMP/perm.err" </dev/null
		STATUS=$?
		ERR=$(cat "$TMP/perm.err")
		expect_eq "$STATUS" 4 "not permitted (nobody attaching to a root process): exit status 4"
		expect_match "$ERR" '^gputop: ' "not permitted: a gputop: message"
		expect_match "$ERR" 'ptrace_scope|CAP_SYS_PTRACE' "not permitted: a hint (ptrace_scope / CAP_SYS_PTRACE)"
		expect_running "$target" "not permitted: the program still runs"
	else
		note "permission part not run: user nobody cannot run gputop"
	fi
else
	note "permission part not run: needs root (to start a process nobody may not trace), setpriv and user nobody"
fi
finish
