#!/usr/bin/env bash
# Outputs that fail, and outputs named twice (issue 33, part B):
#  1. A file system that fills during the run (a 64 KiB tmpfs, filled by the test once gputop
#     has started; root only): for each of --json, --folded, --timeline and --trace, in launch
#     mode, the file that was there keeps its old contents (one that was not stays absent), no
#     temporary file is left, gputop names the file and the error and exits with status 6
#     (not the program's 0, which the message gives). Attached, --json the same. Before, the
#     JSON was left half written and gputop exited 0.
#  2. A run that goes well: the file that was there is replaced whole, with its mode, only at
#     the end (while the program runs it still holds the old contents); no temporary file left.
#  3. One file named by two output options (--json F --timeline F, -o F --json F, ./F and F,
#     a/../F, a directory through a symbolic link, a hard link, --json-interval): exit status 2 at
#     once, said, nothing made, the program never runs. Two different files: accepted.
#  4. --stacks '' (an empty list) and --stacks 'allocs,' (an empty item): exit status 2, said.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin ring_loop simdrv/libcuda.so.1
need_gputop
export LD_LIBRARY_PATH=$SIMDRV RB_CALLS=1
N=300
EXPECTED="ring_loop: launches=$((2 * N)) calls=$((2 * N)) failures=0"

# listing DIR: its entries, hidden ones included (a temporary file is .NAME.XXXXXX).
listing() {
	ls -A "$1" | tr '\n' ' '
}

# --- 1. a file system that fills during the run ---------------------------------------------
FULL=$TMP/full
mkdir -p "$FULL"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=64k none "$FULL" 2>/dev/null; then
	trap 'st=$?; umount -l "$FULL" 2>/dev/null; (exit $st); cleanup' EXIT

	# fill_run NAME OLD GPUTOP_OPTIONS...: OLD (yes/no): an old file at $FULL/out first. gputop
	# launches ring_loop, which waits; the test fills the file system, then lets it run.
	fill_run() {
		local name=$1 old=$2
		shift 2
		rm -rf "${FULL:?}"/* "$FULL"/.[!.]* "$TMP/go"
		[ "$old" = yes ] && printf 'old contents\n' >"$FULL/out"
		RB_GO_FILE=$TMP/go spawn "$TMP/$name" "$GPUTOP" -q "$@" -- "$BIN/ring_loop" 1 $N
		local g=$SPAWNED_PID
		wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20 || bail "$name: the program said ready"
		dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null	# until ENOSPC
		touch "$TMP/go"
		wait_pid "$g" 60
	}

	for opt in --json --folded --timeline --trace; do
		for old in yes no; do
			w="$opt on a file system that fills, old file: $old"
			extra=()
			[ "$opt" = --folded ] && extra=(--stacks allocs --folded-metric allocated-bytes)
			fill_run fill "$old" "${extra[@]}" "$opt" "$FULL/out"
			expect_eq "$WAIT_STATUS" 6 "$w: exit status 6"
			expect_match "$(cat "$TMP/fill.err")" "^gputop: cannot write $opt file '$FULL/out': No space left on device \\(it (is left as it was|was not made)\\)$" \
				"$w: the file and the error said"
			expect_match "$(cat "$TMP/fill.err")" "^gputop: exit status 6: an output was not written \\([0-9]+ exited with status 0\\)$" \
				"$w: ... and the program's own status"
			if [ "$old" = yes ]; then
				expect_eq "$(cat "$FULL/out")" "old contents" "$w: the old file is left as it was"
				expect_eq "$(listing "$FULL")" "fill out " "$w: no temporary file left"
			else
				expect_eq "$(listing "$FULL")" "fill " "$w: no file made, no temporary file left"
			fi
			rb_drop_ready "$TMP/fill.out"
			expect_eq "$(tr '\n' '|' <"$TMP/fill.out")" "ring_loop: running|$EXPECTED|" "$w: the program ran as without gputop"
		done
	done

	# attached: --json
	can_attach_to_others || skip "this user may not ptrace other processes (Yama ptrace_scope)"
	rm -rf "${FULL:?}"/* "$TMP/go" "$TMP/idle"
	printf 'old contents\n' >"$FULL/out"
	RB_GO_FILE=$TMP/go RB_IDLE_FILE=$TMP/idle rb_spawn prog "$BIN/ring_loop" 1 $N
	rb_gputop_bg att -p "$TARGET" --json "$FULL/out"
	rb_wait_attached att
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
	touch "$TMP/go"
	wait_for_line "$TMP/prog.out" '^idle$' 60 || not_ok "attached: the program made its calls"
	kill -TERM "$GPUTOP_PID"
	wait_pid "$GPUTOP_PID" 60
	expect_eq "$WAIT_STATUS" 6 "attached, --json on a file system that fills: exit status 6"
	expect_match "$(cat "$TMP/att.err")" "^gputop: cannot write --json file '$FULL/out': No space left on device \\(it is left as it was\\)$" \
		"attached: the file and the error said"
	expect_eq "$(cat "$FULL/out")" "old contents" "attached: the old file is left as it was"
	expect_eq "$(listing "$FULL")" "fill out " "attached: no temporary file left"
	touch "$TMP/idle"
	wait_pid "$TARGET" 30
	expect_eq "$WAIT_STATUS" 0 "attached: the program ends well"
	umount "$FULL" && ok "the tmpfs is unmounted" || not_ok "the tmpfs is unmounted"
else
	note "part 1 not run: cannot mount a small tmpfs here (root only)"
fi

# --- 2. a run that goes well: replaced whole, at the end, with its mode ------------------------
D=$TMP/good
mkdir -p "$D"
for f in J F T TR; do printf 'old %s\n' "$f" >"$D/$f"; chmod 600 "$D/$f"; done
rm -f "$TMP/go"
RB_GO_FILE=$TMP/go spawn "$TMP/good" "$GPUTOP" -q --json "$D/J" --stacks allocs --folded "$D/F" \
	--folded-metric allocated-bytes --timeline "$D/T" --trace "$D/TR" -- "$BIN/ring_loop" 1 $N
G=$SPAWNED_PID
wait_for_line "$TMP/good.out" '^ready [0-9]+$' 20 || bail "the program said ready"
expect_eq "$(cat "$D/J" "$D/T")" "old J
old T" "while the program runs, the files hold their old contents"
touch "$TMP/go"
wait_pid "$G" 60
expect_eq "$WAIT_STATUS" 0 "a run that goes well: the program's status"
jq_eq "$D/J" '.launches' $((2 * N)) "--json: the new summary"
jq -e '.traceEvents | length > 600' "$D/T" >/dev/null && ok "--timeline: a whole new document" ||
	not_ok "--timeline: a whole new document"
expect_eq "$(grep -c 'cuLaunchKernel grid=' "$D/TR")" $N "--trace: every launch line"
expect_match "$(cat "$D/F")" 'cuMemAlloc_v2 256$' "--folded: the new stacks"
expect_eq "$(stat -c %a "$D/J" "$D/F" "$D/T" "$D/TR" | tr '\n' ' ')" "600 600 600 600 " "each file keeps its mode"
expect_eq "$(listing "$D")" "F J T TR " "no temporary file left"

# --- 3. one file named twice --------------------------------------------------------------------
D=$TMP/twice
mkdir -p "$D/sub" "$D/real"
ln -s real "$D/link"
printf 'kept\n' >"$D/H"
ln "$D/H" "$D/H2"
# twice WHAT ARGS...: gputop ARGS -- touch ran, from inside $D: exit 2, said, nothing made.
twice() {
	local what=$1 before
	shift
	before=$(listing "$D")
	(cd "$D" && timeout -k 5 30 "$GPUTOP" -q "$@" -- touch "$TMP/ran" >"$TMP/twice.out" 2>"$TMP/twice.err" </dev/null)
	expect_eq "$?" 2 "$what: exit status 2"
	expect_match "$(head -n 1 "$TMP/twice.err")" "^gputop: .* are the same file: give each output a file of its own$" "$what: said"
	expect_eq "$(listing "$D")" "$before" "$what: nothing made"
	[ -e "$TMP/ran" ] && not_ok "$what: the program never ran" || ok "$what: the program never ran"
	rm -f "$TMP/ran"
}
twice "--json F --timeline F" --json F --timeline F
expect_match "$(head -n 1 "$TMP/twice.err")" "^gputop: --json 'F' and --timeline 'F' are the same file" "... naming both options"
twice "-o F --json F" -o F --json F
twice "--json ./F --folded F" --json ./F --folded F
twice "--trace F --timeline sub/../F" --trace F --timeline sub/../F
twice "--json real/F --timeline link/F (a directory through a symbolic link)" --json real/F --timeline link/F
twice "--json H --folded H2 (a hard link)" --json H --folded H2
expect_eq "$(cat "$D/H")" kept "... the file is untouched"
twice "--json-interval 1 F --json F" --json-interval 1 F --json F
twice "-o $D/F --trace F (absolute and relative)" -o "$D/F" --trace F
(cd "$D" && timeout -k 5 30 "$GPUTOP" -q --json F --timeline sub/F --trace - -- touch "$TMP/ran" >/dev/null 2>&1 </dev/null)
expect_eq "$?" 0 "--json F --timeline sub/F --trace -: different files, accepted"
[ -s "$D/F" ] && [ -s "$D/sub/F" ] && ok "... both written" || not_ok "... both written"
rm -f "$TMP/ran"

# --- 4. --stacks with an empty list or item -------------------------------------------------------
for list in '' 'allocs,'; do
	timeout -k 5 30 "$GPUTOP" -q --stacks "$list" -- touch "$TMP/ran" >/dev/null 2>"$TMP/stacks.err" </dev/null
	expect_eq "$?" 2 "--stacks '$list': exit status 2"
	expect_match "$(head -n 1 "$TMP/stacks.err")" "^gputop: (--stacks '' is an empty list|invalid --stacks 'allocs,'): .*allocs, frees, syncs, launches, all or none" \
		"--stacks '$list': said"
	[ -e "$TMP/ran" ] && not_ok "--stacks '$list': the program never ran" || ok "--stacks '$list': the program never ran"
done
finish
