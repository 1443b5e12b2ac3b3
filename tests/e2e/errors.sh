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
# A long option mistyped: the nearest said (issue 26, part 6).
expect_error jsn 2 "unknown option '--jsn'" "--jsn" --jsn x.json -- true
expect_match "$ERR" 'hint: did you mean --json\?' "--jsn: did you mean --json?"
expect_error chidlren 2 'did you mean --children\?' "--chidlren (two letters swapped)" --chidlren -p 1
expect_error dash_json 2 "unknown option '-json'.*" "-json (one dash)" -json x.json -- true
expect_match "$ERR" 'did you mean --json\?' "-json: did you mean --json?"
expect_error tim 2 "ambiguous option '--tim'" "--tim (an abbreviation of four options)" --tim 1 -- true
expect_match "$ERR" 'could be --timeout, --timeline, --timeline-max-mb, --timeline-compact' "--tim: the options it could be"
expect_error batch_arg 2 "option '--batch' takes no argument" "--batch=1" --batch=1 -- true
expect_error compact_alone 2 'timeline-compact is for --timeline' "--timeline-compact without --timeline" \
	--timeline-compact -- true
try far --frobnicate -- true
expect_match "$ERR" "unknown option '--frobnicate'" "--frobnicate: unknown option"
grep -q 'did you mean' <<<"$ERR" && not_ok "--frobnicate: no far-fetched suggestion" || ok "--frobnicate: no far-fetched suggestion"

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
expect_match "$ERR" 'not an executable' "program not executable: says 'not an executable'"
# gputop -- README.md (issue 26, part 6): a file here that is no program is "not an
# executable", not "No such file or directory" (execvp looks for README.md in PATH only).
mkdir -p "$TMP/here"
printf '# a README\n' >"$TMP/here/README.md"
printf '#!/bin/sh\nexit 0\n' >"$TMP/here/myprog"
chmod 755 "$TMP/here/myprog"
(cd "$TMP/here" && timeout -k 5 30 "$GPUTOP" -b -- README.md) >"$TMP/readme.out" 2>"$TMP/readme.err" </dev/null
expect_eq "$?" 5 "gputop -- README.md: exit status 5"
expect_match "$(cat "$TMP/readme.err")" "^gputop: cannot run 'README.md': not an executable$" \
	"gputop -- README.md: not an executable"
grep -q 'No such file' "$TMP/readme.err" && not_ok "gputop -- README.md: not 'No such file'" ||
	ok "gputop -- README.md: not 'No such file'"
(cd "$TMP/here" && timeout -k 5 30 "$GPUTOP" -b -- myprog) >"$TMP/myprog.out" 2>"$TMP/myprog.err" </dev/null
expect_eq "$?" 5 "gputop -- myprog (executable here, not in PATH): exit status 5"
expect_match "$(cat "$TMP/myprog.err")" "not found in PATH" "gputop -- myprog: not found in PATH"
expect_match "$(cat "$TMP/myprog.err")" "hint: .*gputop -- \./myprog" "gputop -- myprog: the hint gives ./myprog"

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
	# -b -n: the count of tables runs out as --timeout does (issue 36: it exited 0, silently).
	expect_error nocudalib_n 7 'never loaded a CUDA library' "attach to a program without CUDA, -b -n 3 -d 0.2" \
		-p "$target" -b -n 3 -d 0.2
	expect_running "$target" "no CUDA, -b -n: the program still runs"
	touch "$TMP/stop-nocuda"
	wait_pid "$target" 30
	expect_eq "$WAIT_STATUS" 0 "no CUDA: the program ends normally, status 0"
	expect_match "$(cat "$TMP/nocuda.out")" '^no_cuda: done$' "no CUDA: the program finished its work"
	grep -q -- '--children' <<<"$ERR" && not_ok "no CUDA, no descendants: no --children hint" ||
		ok "no CUDA, no descendants: no --children hint"

	# A process with no CUDA whose child has it (a launcher, a shell): the hint names
	# --children (issue 26, part 6).
	spawn "$TMP/parent" env LD_LIBRARY_PATH="$SIM" bash -c \
		'"$1" --go "$2" & wait' parent "$BIN/wait_then_work" "$TMP/go-child"
	parent=$SPAWNED_PID
	wait_for_line "$TMP/parent.out" '^ready [0-9]+$' 30 || bail "the child of the parent said ready"
	child=$(awk '/^ready/ { print $2; exit }' "$TMP/parent.out")
	expect_error children_hint 7 'cuda' "attach to a parent without CUDA whose child has it, --timeout 1" \
		-p "$parent" -b --timeout 1
	expect_match "$ERR" "hint: 1 of its descendants uses CUDA \($child\): --children traces them \(gputop -p $parent --children\)" \
		"the hint names the child with CUDA and --children"
	touch "$TMP/go-child"
	wait_pid "$parent" 30
	expect_eq "$WAIT_STATUS" 0 "the parent and its child end normally"
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
