#!/usr/bin/env bash
# Robustness, a fuzz-ish test (issue 5, acceptance 2): 300 argument vectors drawn at random
# (fixed seed: the same 300 every run) from valid and invalid options, values, files and
# programs, each run under a time limit. gputop must never crash (no status above 128 that is
# not the traced program's own), never hang (it ends within its --timeout, or at the latest
# soon after the SIGTERM that `timeout` sends 4 s in, which detaches: it gets 10 s more for
# that, far more than a detach needs on a loaded machine, which a gputop ignoring the SIGTERM
# still runs out of; `timeout` then kills it and it counts as a hang), and exit only with a
# status listed in src/cli.h (0-8) or the traced program's own. A CUDA program (SIMULATED
# runtime) that the vectors attach to again and again must finish with exactly its normal output.
# FUZZ_SEED and FUZZ_RUNS override the seed and the count.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin no_cuda rb_signals rb_busy sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
RUNS=${FUZZ_RUNS:-300}
RANDOM=${FUZZ_SEED:-5150}

# The program the vectors attach to.
export RB_STOP_FILE=$TMP/stop RB_COUNT_FILE=$TMP/count
rb_spawn target "$BIN/rb_signals" loop
unset RB_STOP_FILE RB_COUNT_FILE
printf 'not a program\n' >"$TMP/notexec"
ln -s "$TMP/elsewhere" "$TMP/link"
mkdir -p "$TMP/out"

OPTIONS=(-p -b -d -n --json --trace -o --timeout --max-overhead --no-color -q -h -V -- --bogus -x
	--pid --delay --iterations --output --quiet -bq -qb -pp -d0 -n1 --json= --pid= --timeout=0.5
	--max-overhead=5 -)
VALUES=(0 -1 1 2 3 0.01 0.05 0.3 abc "" 1e400 nan inf -0 0x10 99999999999 9223372036854775807 50 99.9
	100 "$TARGET" "$TARGET" "$TARGET" "$$" 1 2 999999 "$TMP/out/f.json" "$TMP/out/t.txt"
	/nonexistent/x.json "$TMP" "$TMP/link" /dev/null - "$TMP/notexec")
PROGRAMS=("$BIN/no_cuda --seconds 0.2" "$BIN/rb_busy busy 1 5" "$BIN/rb_signals usr1 3" /bin/true
	/nonexistent "$TMP/notexec" "sh -c exit_3" "$BIN/no_cuda --seconds 0.2")

# pick ARRAY_NAME: a random element in PICK (no $(...): a subshell would not advance RANDOM).
pick() {
	local -n arr=$1
	PICK=${arr[RANDOM % ${#arr[@]}]}
}

# One vector in ARGV: a few random options and values, and often "--" and a program.
make_argv() {
	ARGV=()
	local n=$((RANDOM % 6)) i r p
	# a fifth start from a valid attach, so that some vectors get past the command line
	((RANDOM % 100 < 20)) && ARGV=(-p "$TARGET" --timeout 0.1)
	for ((i = 0; i < n; i++)); do
		r=$((RANDOM % 100))
		if ((r < 80)); then
			pick OPTIONS
			ARGV+=("$PICK")
			# an option that takes a value gets one, most of the time
			case $PICK in
			-p | -d | -n | --json | --trace | -o | --timeout | --max-overhead | --pid | --delay | \
				--iterations | --output)
				((RANDOM % 100 < 85)) && pick VALUES && ARGV+=("$PICK") ;;
			esac
		elif ((r < 95)); then
			pick VALUES
			ARGV+=("$PICK")
		else
			pick PROGRAMS
			ARGV+=("$PICK")
		fi
	done
	if ((RANDOM % 100 < 45)); then
		pick PROGRAMS
		p=$PICK
		((RANDOM % 3)) && ARGV+=(--)
		if [ "$p" == "sh -c exit_3" ]; then
			ARGV+=(sh -c 'exit 3')
		else
			read -r -a words <<<"$p"
			ARGV+=("${words[@]}")
		fi
	fi
}

# Run from $TMP: a random "-o abc" or "--json 1" creates its file in the current folder.
cd "$TMP" || bail "cd $TMP"
crashes=0 hangs=0 undocumented=0 slow=0
declare -A seen
start=$(date +%s)
for ((run = 1; run <= RUNS; run++)); do
	make_argv
	t0=$(date +%s%N)
	timeout --preserve-status -s TERM -k 10 4 "$GPUTOP" "${ARGV[@]}" \
		>"$TMP/fuzz.out" 2>"$TMP/fuzz.err" </dev/null
	status=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	seen[$status]=$((${seen[$status]:-0} + 1))
	what="run $run: gputop $(printf '%q ' "${ARGV[@]}")-> $status (${ms} ms)"
	# 137: killed 10 s after the SIGTERM; past 19 s, not even the SIGKILL ended it at once
	if [ "$status" -eq 137 ] || [ "$ms" -gt 19000 ]; then
		hangs=$((hangs + 1))
		echo "# HANG $what"
	elif [ "$status" -gt 128 ]; then
		crashes=$((crashes + 1))
		echo "# CRASH $what"
		tail -n 3 "$TMP/fuzz.err" | sed 's/^/#   /'
	elif [ "$status" -gt 8 ]; then
		undocumented=$((undocumented + 1))
		echo "# UNDOCUMENTED $what"
	fi
	if grep -Eq 'Sanitizer|core dumped|Segmentation|Aborted|double free|corrupted' "$TMP/fuzz.err"; then
		crashes=$((crashes + 1))
		echo "# CRASH MESSAGE $what"
	fi
	[ "$ms" -gt 4500 ] && slow=$((slow + 1))
	if ! running "$TARGET"; then
		not_ok "the attached program survives every vector (gone after: $what)"
		break
	fi
done
note "$RUNS vectors in $(($(date +%s) - start)) s; statuses: $(for s in "${!seen[@]}"; do printf '%s:%s ' "$s" "${seen[$s]}"; done)"
note "$slow runs ended only at the SIGTERM (a live attach with no --timeout: a clean detach)"
expect_eq "$crashes" 0 "no crash"
expect_eq "$hangs" 0 "no hang"
expect_eq "$undocumented" 0 "every status documented (0-8) or the program's own"
expect_eq "$(awk '/^TracerPid:/ { print $2 }' "/proc/$TARGET/status")" 0 "the target is left untraced"
# It still runs: its loop count grows (polled: on a loaded machine it may get no CPU for a while;
# one that was stopped or left at a breakpoint never counts on).
c1=$(cat "$TMP/count")
deadline=$(($(date +%s) + 20))
while [ "$(cat "$TMP/count")" -le "$c1" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
c2=$(cat "$TMP/count")
if [ "$c2" -gt "$c1" ]; then ok "the target still runs ($c1 -> $c2 loops)"; else not_ok "the target still runs (still $c2 loops, state $(proc_state "$TARGET"))"; fi
touch "$TMP/stop"
wait_pid "$TARGET" 20
expect_eq "$WAIT_STATUS" 0 "the target, attached to again and again, exits 0"
expect_eq "$(grep -v '^ready' "$TMP/target.out")" 'rb_signals: loop done failures=0' "... with its normal output"
rb_no_trap "$TMP/target.err" target
finish
