# tests/lib.sh — helpers for the end-to-end scripts in tests/e2e (source it; bash only).
# Every check prints "ok - what" or "not ok - what" (with details on "# " lines); a script ends
# with `finish`, which exits 1 if any check failed. `skip "reason"` exits 77 (tests/run: SKIP).
# Processes started with `spawn` are killed (by their pid) when the script exits.
# The programs' CUDA library is chosen with LD_LIBRARY_PATH: $SIM (simulated runtime),
# $SIM:$SIMDRV (simulated runtime over the simulated driver), $SIMDRV (driver only), $REAL.
set -u

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
GPUTOP=${GPUTOP:-$ROOT/build/gputop}
BIN=$ROOT/tests/bin
SIM=$BIN/sim
SIMDRV=$BIN/simdrv
CUDA=${CUDA:-/usr/local/cuda}
REAL=$CUDA/lib64
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gputop-$TEST_NAME.XXXXXX")
export GPUTOP BIN SIM SIMDRV REAL TMP

CHECKS=0
FAILED=0
SPAWNED=()

# --- verdicts ---------------------------------------------------------------------------------

ok() {
	CHECKS=$((CHECKS + 1))
	echo "ok - $*"
}

not_ok() {
	CHECKS=$((CHECKS + 1))
	FAILED=$((FAILED + 1))
	echo "not ok - $*"
}

# note "text": a comment in the log.
note() {
	echo "# $*"
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# Fails the whole script at once (after a check that makes the rest meaningless).
bail() {
	not_ok "$*"
	echo "# giving up: the checks below this one depend on it"
	finish
}

finish() {
	if [ "$FAILED" -gt 0 ]; then
		echo "# $FAILED of $CHECKS checks failed"
		exit 1
	fi
	echo "# all $CHECKS checks passed"
	exit 0
}

cleanup() {
	local status=$? i pid
	# newest first: a gputop detaches before the program it traces is ended
	for ((i = ${#SPAWNED[@]} - 1; i >= 0; i--)); do
		pid=${SPAWNED[i]}
		if running "$pid"; then
			kill -TERM "$pid" 2>/dev/null
			sleep 0.2
			kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
		fi
	done
	if [ -n "${KEEP_TMP:-}" ]; then
		echo "# kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$status"
}
trap cleanup EXIT

# --- checks -----------------------------------------------------------------------------------

# expect_eq ACTUAL EXPECTED WHAT (the expect_* checks return 1 when they fail)
expect_eq() {
	if [ "$1" == "$2" ]; then
		ok "$3 ($1)"
	else
		not_ok "$3"
		echo "#   expected: $2"
		echo "#   actual:   $1"
		return 1
	fi
}

# expect_match TEXT EXTENDED-REGEX WHAT
expect_match() {
	if grep -Eq -- "$2" <<<"$1"; then
		ok "$3"
	else
		not_ok "$3"
		echo "#   expected to match: $2"
		printf '%s\n' "$1" | head -n 20 | sed 's/^/#   actual: /'
		return 1
	fi
}

# expect_file_eq FILE_ACTUAL FILE_EXPECTED WHAT: the same text, or a diff.
expect_file_eq() {
	if cmp -s "$1" "$2"; then
		ok "$3"
	else
		not_ok "$3"
		diff -u "$2" "$1" | head -n 40 | sed 's/^/#   /'
		return 1
	fi
}

# A compact rendering of a JSON value for messages (cut at 600 characters).
json_short() {
	local s
	s=$(jq -c "$2" "$1" 2>&1)
	[ ${#s} -gt 600 ] && s="${s:0:600}..."
	printf '%s' "$s"
}

# jq_check FILE 'boolean jq expression' 'description' [SHOW]: ok when the expression gives true.
# On failure shows the expression, what it gave, and the value of the jq path SHOW if given.
jq_check() {
	local file=$1 expr=$2 what=$3 result
	result=$(jq -e "$expr" "$file" 2>&1)
	if [ $? -eq 0 ] && [ "$result" == "true" ]; then
		ok "$what"
		return 0
	fi
	not_ok "$what"
	echo "#   expression: $expr"
	echo "#   gave:       $(printf '%s' "$result" | tr '\n' ' ' | cut -c1-600)"
	[ $# -ge 4 ] && echo "#   actual:     $4 = $(json_short "$file" "$4")"
	return 1
}

# jq_range FILE 'jq path' LOW HIGH 'description': LOW <= value <= HIGH (numbers).
jq_range() {
	local file=$1 path=$2 low=$3 high=$4 what=$5 actual
	actual=$(json_short "$file" "$path")
	if jq -e "($path) as \$v | (\$v | type) == \"number\" and \$v >= $low and \$v <= $high" \
		"$file" >/dev/null 2>&1; then
		ok "$what ($path = $actual)"
		return 0
	fi
	not_ok "$what"
	echo "#   path:     $path"
	echo "#   expected: between $low and $high"
	echo "#   actual:   $actual"
	return 1
}

# jq_eq FILE 'jq path' EXPECTED-JSON 'description': the value at path equals EXPECTED.
jq_eq() {
	local file=$1 path=$2 expected=$3 what=$4 actual
	if ! actual=$(jq -c "$path" "$file" 2>&1); then
		not_ok "$what"
		echo "#   jq $path: $actual"
		return 1
	fi
	if jq -e -n --argjson a "${actual:-null}" --argjson e "$expected" '$a == $e' >/dev/null 2>&1; then
		ok "$what ($path = $actual)"
		return 0
	fi
	not_ok "$what"
	echo "#   path:     $path"
	echo "#   expected: $expected"
	echo "#   actual:   $(printf '%s' "$actual" | tr '\n' ' ' | cut -c1-600)"
	return 1
}

# The row of one API function: api_row NAME → a jq filter giving that object (null if absent).
api_row() {
	printf '(.api | map(select(.name == "%s")) | .[0])' "$1"
}

# expect_api FILE NAME CALLS ERRORS [LAST_CODE LAST_NAME]: one row of the API table. The last
# error may be given in the JSON as its number or its name (e.g. 35 or cudaErrorInsufficientDriver).
expect_api() {
	local row
	row=$(api_row "$2")
	jq_eq "$1" "$row.calls" "$3" "$2: $3 calls"
	jq_eq "$1" "$row.errors" "$4" "$2: $4 errors"
	if [ $# -ge 6 ]; then
		jq_check "$1" "$row.last_error | (. == $5 or . == \"$6\")" "$2: last error $5 ($6)"
	fi
}

# expect_launch_api FILE CALLS NAME...: launch rows. A launch may be counted at the runtime or at
# the driver layer (gputop disarms one layer's launch probes when the other counts them), so the
# CALLS are summed over the NAMEs given (e.g. cudaLaunchKernel cuLaunchKernel): each launch
# counted once. Launch probes may skip the return: errors must be 0 or null (not known).
expect_launch_api() {
	local file=$1 calls=$2 sum="0" errs="0" name
	shift 2
	for name in "$@"; do
		sum="$sum + ($(api_row "$name").calls // 0)"
		errs="$errs + ($(api_row "$name").errors // 0)"
	done
	jq_eq "$file" "$sum" "$calls" "$* together: $calls calls"
	jq_eq "$file" "$errs" 0 "$*: no error"
}

# The row of one kernel, by demangled name.
kernel_row() {
	printf '(.kernels | map(select(.name == "%s")) | .[0])' "$1"
}

# expect_kernel FILE NAME LAUNCHES GRID BLOCK: GRID/BLOCK as JSON arrays, e.g. '[4,2,1]'.
expect_kernel() {
	local row
	row=$(kernel_row "$2")
	jq_eq "$1" "$row.launches" "$3" "kernel $2: $3 launches"
	jq_eq "$1" "$row.grid" "$4" "kernel $2: last grid $4"
	jq_eq "$1" "$row.block" "$5" "kernel $2: last block $5"
}

# The transfer row of one direction (H2D, D2H, D2D, H2H).
xfer_row() {
	printf '(.transfers | map(select(.kind == "%s")) | .[0])' "$1"
}

# expect_xfer FILE KIND CALLS BYTES: all copies of that direction, sync and async together.
expect_xfer() {
	local row
	row=$(xfer_row "$2")
	jq_eq "$1" "($row.calls // 0)" "$3" "$2: $3 copies"
	jq_eq "$1" "($row.bytes // 0)" "$4" "$2: $4 bytes"
}

# --- running things ---------------------------------------------------------------------------

need_gputop() {
	command -v jq >/dev/null || bail "jq is installed (scripts/install-deps installs it)"
	[ -x "$GPUTOP" ] || bail "gputop is built at $GPUTOP (make)"
}

# need_bin NAME...: skip the test when a test program was not built (e.g. no nvcc).
need_bin() {
	local b
	for b in "$@"; do
		[ -x "$BIN/$b" ] || skip "tests/bin/$b is not built (make -C tests; nvcc needed for some)"
	done
}

# run_plain OUT_PREFIX PROG ARGS...: runs a program without gputop (stdout OUT_PREFIX.out,
# stderr OUT_PREFIX.err); its exit status in PLAIN_STATUS.
run_plain() {
	local prefix=$1
	shift
	"$@" >"$prefix.out" 2>"$prefix.err" </dev/null
	PLAIN_STATUS=$?
	note "ran without gputop: $* -> status $PLAIN_STATUS"
}

# run_gputop_json OUT.json -- GPUTOP_ARGS...: runs gputop (environment as the caller's), with
# stdout in $GPUTOP_OUT and stderr in $GPUTOP_ERR; its exit status in GPUTOP_STATUS. Checks that
# a valid JSON summary was written to OUT.json.
RUNS=0
run_gputop_json() {
	local json=$1
	shift
	[ "${1:-}" == "--" ] && shift
	RUNS=$((RUNS + 1))
	GPUTOP_OUT=$TMP/gputop.$RUNS.out
	GPUTOP_ERR=$TMP/gputop.$RUNS.err
	rm -f "$json"
	note "running: gputop --json $json $*"
	"$GPUTOP" --json "$json" "$@" >"$GPUTOP_OUT" 2>"$GPUTOP_ERR" </dev/null
	GPUTOP_STATUS=$?
	note "gputop exit status $GPUTOP_STATUS"
	if [ -s "$json" ] && jq -e 'type == "object"' "$json" >/dev/null 2>&1; then
		ok "gputop wrote a JSON summary"
		return 0
	fi
	not_ok "gputop wrote a JSON summary to $json"
	tail -n 15 "$GPUTOP_ERR" | sed 's/^/#   stderr: /'
	return 1
}

# expect_refused WHAT STATUS MESSAGE-REGEX GPUTOP-ARGS...: gputop exits STATUS saying so (its
# stderr matches MESSAGE-REGEX), and the program it was to launch (touch $TMP/ran) was not run.
expect_refused() {
	local what=$1 status=$2 regex=$3
	shift 3
	rm -f "$TMP/ran"
	"$GPUTOP" "$@" -- touch "$TMP/ran" >"$TMP/err.out" 2>"$TMP/err.err"
	expect_eq "$?" "$status" "$what: exit status $status"
	expect_match "$(cat "$TMP/err.err")" "$regex" "$what: says why"
	[ -e "$TMP/ran" ] && not_ok "$what: the program was not run" || ok "$what: the program was not run"
}

# The lines a program printed itself (they start with "NAME:"), from a file of mixed output.
prog_lines() {
	grep -E "^$2:" "$1"
}

# spawn OUT_PREFIX PROG ARGS...: starts a process in the background (stdout OUT_PREFIX.out,
# stderr OUT_PREFIX.err); its pid in SPAWNED_PID; killed at exit if still running.
spawn() {
	local prefix=$1
	shift
	"$@" >"$prefix.out" 2>"$prefix.err" </dev/null &
	SPAWNED_PID=$!
	SPAWNED+=("$SPAWNED_PID")
}

# wait_for_line FILE REGEX TIMEOUT_SECONDS: 0 once a line of FILE matches, 1 on timeout.
wait_for_line() {
	local file=$1 regex=$2 deadline
	deadline=$(($(date +%s%N) + ${3%.*} * 1000000000))
	while [ "$(date +%s%N)" -lt "$deadline" ]; do
		grep -Eq -- "$regex" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	grep -Eq -- "$regex" "$file" 2>/dev/null
}

# wait_pid PID TIMEOUT_SECONDS: waits for a child started with spawn; its status in WAIT_STATUS
# (124 if it was still running after TIMEOUT_SECONDS; it is then killed).
wait_pid() {
	local pid=$1 deadline
	deadline=$(($(date +%s%N) + $2 * 1000000000))
	while running "$pid" && [ "$(date +%s%N)" -lt "$deadline" ]; do
		sleep 0.05
	done
	if running "$pid"; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		WAIT_STATUS=124
		return 1
	fi
	wait "$pid"
	WAIT_STATUS=$?
	return 0
}

# running PID: the process exists and has not ended (an ended child stays a zombie until
# waited for, and still answers kill -0). One read of its state: a kill -0 then a read of
# /proc/PID/stat raced with bash reaping the zombie in between (bash reaps any child while it
# waits for the read's subshell; a traced child's zombie is handed to it only once the tracer
# has reaped it), and the missing file read as "running".
running() {
	local state
	state=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# expect_running PID WHAT
expect_running() {
	if running "$1"; then ok "$2"; else not_ok "$2"; fi
}

# True when this user may attach to a process that is not its own child (attach tests).
can_attach_to_others() {
	local scope
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
	[ "$scope" -eq 0 ] && return 0
	[ "$scope" -lt 3 ] && [ "$(id -u)" -eq 0 ] && return 0
	return 1
}
