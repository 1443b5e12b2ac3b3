#!/usr/bin/env bash
# Outputs checked before the run, and one exit (issue 25 part 6, issue 24 part 4): every file
# the command line names (--json, --trace, --folded, --timeline, -o) is opened and proven
# writable before anything runs, and a session that never starts removes the files it made.
#  1. --listen on a port in use with --folded, --timeline, --json, --trace and -o: exit 6, the
#     program never runs, none of the five files is left; a file that was there keeps its
#     contents;
#  2. each output into a file of /proc (/proc/version, which answers EIO to a write, and
#     /proc/self/comm, which a write would rename) or /sys: exit 6 at once, said, the program
#     never runs (it exited 0 and the trace was lost before);
#  3. a full file system (a 4 KiB tmpfs, where this machine lets root mount one): exit 6 at
#     once, "No space left on device", nothing left there;
#  4. a program that cannot be run (exit 5) and an attach that fails (exit 3): the files made
#     for the session are removed.
source "$(dirname "$0")/../lib.sh"
need_gputop

# A port of 127.0.0.1 that is in use for as long as this script runs.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(600)' >"$TMP/port" &
SPAWNED+=($!)
wait_for_line "$TMP/port" '^[0-9]+$' 30 || bail "a port is held for the test"
BUSY=$(cat "$TMP/port")

# run_refused NAME ARGS...: gputop ARGS -- touch $TMP/ran (30 s at most); STATUS, ERR.
run_refused() {
	local name=$1
	shift
	rm -f "$TMP/ran"
	timeout -k 5 30 "$GPUTOP" -q "$@" -- touch "$TMP/ran" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
	STATUS=$?
	ERR=$(cat "$TMP/$name.err")
}

# none_left WHAT FILE...: none of the files exists.
none_left() {
	local what=$1 f left=()
	shift
	for f in "$@"; do
		[ -e "$f" ] && left+=("$(basename "$f")")
	done
	[ ${#left[@]} -eq 0 ] && ok "$what: no file left" || not_ok "$what: no file left (left: ${left[*]})"
}

# --- 1. --listen fails: nothing is left ------------------------------------------------------
D=$TMP/listen
mkdir -p "$D"
run_refused listen --listen "127.0.0.1:$BUSY" --folded "$D/F" --timeline "$D/T" --json "$D/J" \
	--trace "$D/TR" -o "$D/O"
expect_eq "$STATUS" 6 "--listen on a port in use: exit status 6"
expect_match "$ERR" "cannot listen on '127.0.0.1:$BUSY': Address already in use" "... saying why"
[ -e "$TMP/ran" ] && not_ok "... the program was not run" || ok "... the program was not run"
none_left "--listen on a port in use" "$D/F" "$D/T" "$D/J" "$D/TR" "$D/O"
# the acceptance's own line
run_refused listen2 --listen "$BUSY" --folded "$D/F" --timeline "$D/T"
expect_eq "$STATUS" 6 "gputop --listen PORT_IN_USE --folded F --timeline T: exit status 6"
none_left "gputop --listen PORT_IN_USE --folded F --timeline T" "$D/F" "$D/T"
printf 'kept\n' >"$D/J"
run_refused listen3 --listen "$BUSY" --json "$D/J" --folded "$D/F"
expect_eq "$STATUS" 6 "--listen fails with an existing --json file: exit status 6"
expect_eq "$(cat "$D/J")" kept "... the existing file keeps its contents"
none_left "... and the --folded file it made is gone" "$D/F"

# --- 2. files of /proc and /sys ------------------------------------------------------------------
comm_before=$(cat /proc/self/comm)
for opt in --json --trace --folded --timeline -o; do
	for f in /proc/version /proc/self/comm /sys/kernel/mm/transparent_hugepage/enabled; do
		[ -e "$f" ] || continue
		run_refused proc "$opt" "$f"
		expect_eq "$STATUS" 6 "$opt $f: exit status 6"
		expect_match "$ERR" "cannot write $opt file '$f': a file of /(proc|sys)" "$opt $f: said at once"
		[ -e "$TMP/ran" ] && not_ok "$opt $f: the program was not run" || ok "$opt $f: the program was not run"
	done
done
expect_eq "$(cat /proc/self/comm)" "$comm_before" "nothing was written into a /proc file"

# --- 3. a full file system -------------------------------------------------------------------------
FULL=$TMP/full
mkdir -p "$FULL"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=4k tmpfs "$FULL" 2>/dev/null; then
	dd if=/dev/zero of="$FULL/fill" bs=4k count=4 2>/dev/null
	for opt in --json --trace --timeline; do
		run_refused full "$opt" "$FULL/out"
		expect_eq "$STATUS" 6 "$opt on a full file system: exit status 6"
		expect_match "$ERR" "cannot write $opt file '$FULL/out': No space left on device" "$opt: said at once"
		none_left "$opt on a full file system" "$FULL/out"
	done
	umount "$FULL"
else
	note "part 3 not run: cannot mount a small tmpfs here"
fi

# --- 4. other starts that fail: the files made are removed ------------------------------------------
D=$TMP/fail
mkdir -p "$D"
timeout -k 5 30 "$GPUTOP" -q --json "$D/J" --folded "$D/F" --timeline "$D/T" --trace "$D/TR" -o "$D/O" \
	-- /nonexistent/program >/dev/null 2>"$TMP/noprog.err" </dev/null
expect_eq "$?" 5 "a program that does not exist: exit status 5"
none_left "a program that does not exist" "$D/J" "$D/F" "$D/T" "$D/TR" "$D/O"
nopid=999999
while kill -0 "$nopid" 2>/dev/null; do nopid=$((nopid - 1)); done
timeout -k 5 30 "$GPUTOP" -q -p "$nopid" --json "$D/J" --folded "$D/F" --timeline "$D/T" --trace "$D/TR" \
	>/dev/null 2>"$TMP/nopid.err" </dev/null
expect_eq "$?" 3 "no such process: exit status 3"
none_left "no such process" "$D/J" "$D/F" "$D/T" "$D/TR"
finish
