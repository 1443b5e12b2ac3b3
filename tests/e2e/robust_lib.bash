# tests/e2e/robust_lib.bash — helpers for the robustness tests (tests/e2e/robust_*.sh): run a
# program without gputop and under it, and compare output and exit status exactly. Source it
# after lib.sh; it is not a test itself (tests/run only runs *.sh). The programs are
# tests/progs/rb_*.c; they run on the SIMULATED CUDA runtime (tests/sim) unless said otherwise.

RB_LIMIT=${RB_LIMIT:-60}	# seconds any one program or gputop run may take

# rb_plain NAME CMD...: runs CMD without gputop; stdout in $TMP/NAME.plain, stderr in
# $TMP/NAME.plain.err, exit status in PLAIN_STATUS.
rb_plain() {
	local name=$1
	shift
	timeout -k 5 "$RB_LIMIT" "$@" >"$TMP/$name.plain" 2>"$TMP/$name.plain.err" </dev/null
	PLAIN_STATUS=$?
	note "without gputop: $* -> status $PLAIN_STATUS"
}

# rb_traced NAME [GPUTOP_OPTIONS...] -- CMD...: runs gputop -q --json $TMP/NAME.json OPTIONS --
# CMD (launch mode); the program's stdout (gputop writes nothing there without -b) in
# $TMP/NAME.traced, gputop's and the program's stderr in $TMP/NAME.err, status TRACED_STATUS.
rb_traced() {
	local name=$1
	shift
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	rm -f "$TMP/$name.json"
	timeout -k 5 "$RB_LIMIT" "$GPUTOP" -q --json "$TMP/$name.json" "${opts[@]}" -- "$@" \
		>"$TMP/$name.traced" 2>"$TMP/$name.err" </dev/null
	TRACED_STATUS=$?
	note "under gputop: $* -> status $TRACED_STATUS"
}

# rb_same NAME STATUS EXPECTED_OUTPUT [GPUTOP_OPTIONS...] -- CMD...: runs CMD without and with
# gputop. Checks: without gputop it exits with STATUS and prints exactly EXPECTED_OUTPUT (lines
# separated by \n; the program works); with gputop, the same output and the same status, a JSON
# summary, and no SIGTRAP anywhere. The JSON is $TMP/NAME.json. A "ready <pid>" line is left
# out of both outputs (the pid differs from run to run).
rb_same() {
	local name=$1 status=$2 expected=$3
	shift 3
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	rb_plain "$name" "$@"
	rb_drop_ready "$TMP/$name.plain"
	if [ -n "$expected" ]; then
		printf '%b\n' "$expected" >"$TMP/$name.expected"
	else
		: >"$TMP/$name.expected"
	fi
	expect_eq "$PLAIN_STATUS" "$status" "$name: without gputop, status $status"
	expect_file_eq "$TMP/$name.plain" "$TMP/$name.expected" "$name: without gputop, the expected output"
	rb_traced "$name" "${opts[@]}" -- "$@"
	rb_drop_ready "$TMP/$name.traced"
	expect_eq "$TRACED_STATUS" "$PLAIN_STATUS" "$name: under gputop, the same status (gputop exits with it)"
	expect_file_eq "$TMP/$name.traced" "$TMP/$name.plain" "$name: under gputop, the same output"
	rb_no_trap "$TMP/$name.err" "$name"
	if jq -e 'type == "object"' "$TMP/$name.json" >/dev/null 2>&1; then
		ok "$name: a JSON summary"
	else
		not_ok "$name: a JSON summary in $TMP/$name.json"
		tail -n 5 "$TMP/$name.err" | sed 's/^/#   stderr: /'
	fi
}

# rb_drop_ready FILE: removes the "ready <pid>" line the programs print first.
rb_drop_ready() {
	sed -i '/^ready [0-9]*$/d' "$1"
}

# rb_no_trap FILE WHAT: nothing in FILE says a SIGTRAP killed anything.
rb_no_trap() {
	if grep -Eiq 'trace/breakpoint trap|SIGTRAP|signal 5\b' "$1"; then
		not_ok "$2: no SIGTRAP anywhere"
		grep -Ei 'trace/breakpoint trap|SIGTRAP|signal 5\b' "$1" | head -n 5 | sed 's/^/#   /'
	else
		ok "$2: no SIGTRAP anywhere"
	fi
}

# known_issue STATUS WHAT DETAIL: a check of a limitation or bug reported and not fixed yet
# (outside this test's reach). Passes either way; says "ok" when it holds, "# KNOWN ISSUE" when
# it does not, so that the log shows the day it gets fixed.
known_issue() {
	if [ "$1" -eq 0 ]; then
		ok "$2 (was a known issue: now fixed)"
	else
		note "KNOWN ISSUE (not a failure of this test): $2: $3"
	fi
}

# rb_spawn NAME CMD...: starts CMD in the background (stdout $TMP/NAME.out, stderr
# $TMP/NAME.err) and waits until it prints "ready <pid>"; pid in TARGET.
rb_spawn() {
	local name=$1
	shift
	spawn "$TMP/$name" "$@"
	TARGET=$SPAWNED_PID
	wait_for_line "$TMP/$name.out" '^ready [0-9]+$' 20 || bail "$name: the program said ready"
}

# rb_gputop_bg NAME GPUTOP_ARGS...: gputop in the background with SIGINT, SIGQUIT and SIGHUP
# at their defaults (bash starts background commands with SIGINT and SIGQUIT ignored, and
# gputop keeps an inherited SIG_IGN); stdout $TMP/NAME.out, stderr $TMP/NAME.err, pid in
# GPUTOP_PID.
rb_gputop_bg() {
	local name=$1
	shift
	spawn "$TMP/$name" env --default-signal=INT,QUIT,HUP "$GPUTOP" "$@"
	GPUTOP_PID=$SPAWNED_PID
}

# rb_wait_attached NAME: waits for gputop's "attached" line in $TMP/NAME.err.
rb_wait_attached() {
	if wait_for_line "$TMP/$1.err" 'attached to' 20; then
		ok "$1: gputop attached"
	else
		not_ok "$1: gputop attached"
		tail -n 10 "$TMP/$1.err" | sed 's/^/#   stderr: /'
	fi
}

# proc_state PID: the state letter of /proc/PID/stat (R S D T t Z ...), empty if gone.
proc_state() {
	awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null
}

# wait_gone PID SECONDS: waits until PID (not our child: e.g. a program left by gputop) has
# ended; 0 when it did.
wait_gone() {
	local deadline=$(($(date +%s) + $2))
	while running "$1" && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.05
	done
	! running "$1"
}

# lines FILE: how many lines FILE has now (a program's progress lines).
lines() {
	wc -l <"$1" 2>/dev/null || echo 0
}

# wait_lines FILE N SECONDS: until FILE has N lines.
wait_lines() {
	local deadline=$(($(date +%s) + $3))
	while [ "$(lines "$1")" -lt "$2" ] && [ "$(date +%s)" -lt "$deadline" ]; do
		sleep 0.05
	done
	[ "$(lines "$1")" -ge "$2" ]
}

# rb_storm NAME MODE HOW CMD...: one run of a storm program (tests/progs/exact_storm.c,
# torch_storm.c: "ready <pid>", then GO.1, a first half, "half", GO.2, the rest; GO is the
# storm's last argument, $TMP/NAME.go) with gputop made late on purpose: MODE frozen (SIGSTOP
# 2 s while the second half runs) or starved (a busy loop on every CPU, the whole run); HOW
# launch (gputop -q --json $TMP/NAME.json -- CMD) or attach (--json -p, before GO.1; gputop is
# ended once the program has). The program's output is in STORM_OUT; both exit statuses are
# checked.
rb_storm() {
	local name=$1 mode=$2 how=$3 go=$TMP/$1.go busy=() i prog
	shift 3
	rm -f "$go.1" "$go.2"
	if [ "$mode" = starved ]; then
		for ((i = 0; i < $(nproc); i++)); do
			(while :; do :; done) &
			busy+=($!)
		done
	fi
	if [ "$how" = launch ]; then
		rb_gputop_bg "$name" -q --json "$TMP/$name.json" -- "$@" "$go"
		STORM_OUT=$TMP/$name.out
		wait_for_line "$STORM_OUT" '^ready [0-9]+$' 30 || not_ok "$name: the program started"
		touch "$go.1"
	else
		spawn "$TMP/$name.prog" "$@" "$go"
		prog=$SPAWNED_PID
		STORM_OUT=$TMP/$name.prog.out
		wait_for_line "$STORM_OUT" '^ready [0-9]+$' 30 || not_ok "$name: the program started"
		rb_gputop_bg "$name" --json "$TMP/$name.json" -p "$(awk '/^ready/ { print $2 }' "$STORM_OUT")"
		rb_wait_attached "$name"
		touch "$go.1"
	fi
	wait_for_line "$STORM_OUT" '^half$' 60 || not_ok "$name: the first half ran"
	if [ "$mode" = frozen ]; then
		kill -STOP "$GPUTOP_PID"
		touch "$go.2"
		sleep 2
		kill -CONT "$GPUTOP_PID"
	else
		touch "$go.2"
	fi
	if [ "$how" = launch ]; then
		wait_pid "$GPUTOP_PID" 120
		expect_eq "$WAIT_STATUS" 0 "$name: gputop exits 0"
	else
		wait_pid "$prog" 120
		expect_eq "$WAIT_STATUS" 0 "$name: the program exits 0"
		kill -INT "$GPUTOP_PID"
		wait_pid "$GPUTOP_PID" 60
		expect_eq "$WAIT_STATUS" 0 "$name: gputop exits 0"
	fi
	for i in "${busy[@]}"; do kill "$i" 2>/dev/null; wait "$i" 2>/dev/null; done
}
