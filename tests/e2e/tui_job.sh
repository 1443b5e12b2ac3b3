#!/usr/bin/env bash
# Issue 34, item 4 and the straggler acceptance: the live picture of a job, on 4 ranks on the
# SIMULATED runtime and NCCL (tests/sim; NCCL_SIM_JOB makes each collective wait for every rank).
# tests/progs/py_job.py with PY_JOB_SLOW_MS=30: rank 1 sleeps 30 ms in Python before each
# collective (slow(), "@site slow"), the three others wait for it inside ncclAllReduce. gputop
# attaches to the running job:
#  - the TUI's Job view (j, in tmux): a row per rank; within 5 s of the attach, rank 1's row, and
#    only it, is marked "straggler: waits least"; the others' row shows ncclAllReduce; Enter on
#    rank 1's row opens its threads: its Python frames (slow at py_job.py's "@site slow" line)
#    and what the live picture cannot know;
#  - --json-interval 0.25: within 5 s of the attach a summary's `job` section marks rank 1's
#    process, alone, "waits least"; in every summary after it (3 s of them) rank 1 stays the one
#    straggler and no other rank carries any mark;
#  - the job runs on after each detach (its collectives go on growing).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin sim/libcudart.so.13 simnccl/libnccl.so.2
need_gputop
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "Debian's /usr/bin/python3.11 is not installed"
can_attach_to_others || skip "ptrace_scope forbids attaching to a process that is not a child"
PROG=$ROOT/tests/progs/py_job.py
N=4 ODD=1 ITER=1000000
L_SLOW=$(grep -n "# @site slow$" "$PROG" | cut -d: -f1)
ACCEPT_S=5	# the acceptance: the straggler marked within 5 s

# start_job DIR: N ranks, rank ODD slow, running (DIR/go made); their pids in JOB_PIDS.
start_job() {
	local d=$1 r
	mkdir -p "$d"
	JOB_PIDS=()
	for ((r = 0; r < N; r++)); do
		RANK=$r WORLD_SIZE=$N NCCL_SIM_JOB=$d/job PY_JOB_SLOW_MS=30 LD_LIBRARY_PATH=$SIM:$BIN/simnccl \
			spawn "$d/r$r" "$PY" "$PROG" "$SIM/libcudart.so.13" "$BIN/simnccl/libnccl.so.2" \
			$r $N $ITER $ODD $ITER "$d/go" "$d/stop"
		JOB_PIDS+=("$SPAWNED_PID")
	done
	for ((r = 0; r < N; r++)); do
		wait_for_line "$d/r$r.out" '^ready' 60 || bail "rank $r is ready: $(cat "$d/r$r.err")"
	done
	touch "$d/go"
}

# The collectives each rank has reached, from the simulated NCCL's shared counts, summed.
reached() {
	od -A n -t u8 -N $((8 * N)) -v "$1/job" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }'
}

# goes_on DIR WHAT: the job's collectives grow (it was let go and runs as before).
goes_on() {
	local d=$1 before i
	before=$(reached "$d")
	for ((i = 0; i < 600; i++)); do
		[ "$(reached "$d")" -gt $((before + N)) ] && { ok "$2: the job goes on after the detach"; return; }
		sleep 0.1
	done
	not_ok "$2: the job goes on after the detach (collectives $before, then $(reached "$d"))"
}

seconds_since() {
	awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'
}

# --- the TUI's Job view ----------------------------------------------------------------------------
D=$TMP/tui
start_job "$D"
ODD_PID=${JOB_PIDS[$ODD]}
pids=$(IFS=,; echo "${JOB_PIDS[*]}")
tui_gputop 120 30 -- -d 0.5 -p "$pids"
expect_screen 'Job' "the Job view has a tab"
tui_keys j
expect_screen "RANK.* +PID +NOW +.*WAIT +ODD ONE OUT" "j shows the Job view" 60
# Every rank attached: the picture has all of them (gputop attaches them one after another).
expect_screen "^ $N processes, $N with CUDA" "the view has the $N ranks" 60 || bail "gputop attached to the job"
t_attached=$(date +%s%N)
if tui_wait "^ +$ODD +$ODD_PID .*straggler: waits least" $ACCEPT_S; then
	ok "rank $ODD (pid $ODD_PID) marked the straggler within $ACCEPT_S s of the attach ($(seconds_since "$t_attached") s)"
else
	not_ok "rank $ODD (pid $ODD_PID) marked the straggler within $ACCEPT_S s of the attach"
	tui_show_screen
fi
expect_eq "$(grep -c 'straggler' <<<"$SCREEN")" 1 "one straggler on the screen"
for ((r = 0; r < N; r++)); do
	[ $r -eq $ODD ] && continue
	expect_screen "^ +$r +${JOB_PIDS[$r]} +ncclAllReduce\\(4096 bytes\\)" "rank $r: waiting in ncclAllReduce, with its bytes"
done
# Enter on rank ODD's row (sorted by rank: the second row).
tui_keys Home Down Enter
expect_screen "process $ODD_PID +rank $ODD " "Enter: the pane of rank $ODD's process"
expect_screen "slow at .*py_job.py:$L_SLOW \\[python\\]" "Enter: its thread's Python frames, at slow() (py_job.py:$L_SLOW)"
expect_screen "it waited [0-9]+% of the time, every other rank 20% more at least" "Enter: why it is the straggler"
expect_screen "native frames need a stop" "Enter: what the live picture cannot know, said"
tui_keys Escape
expect_screen_gone "Threads of the process" "any key closes the pane"
tui_keys q
tui_wait_status 60
expect_eq "$TUI_STATUS" 0 "q: gputop detaches, status 0"
goes_on "$D" "TUI"

# --- --json-interval's job section ------------------------------------------------------------------
D=$TMP/json
start_job "$D"
ODD_PID=${JOB_PIDS[$ODD]}
pids=$(IFS=,; echo "${JOB_PIDS[*]}")
LIVE=$D/live.json
spawn "$D/gputop" "$GPUTOP" --json-interval 0.25 "$LIVE" -p "$pids"
G=$SPAWNED_PID
for p in "${JOB_PIDS[@]}"; do
	wait_for_line "$D/gputop.err" "attached to $p" 60 || bail "gputop attached to $p: $(tail -5 "$D/gputop.err")"
done
# Reads every summary as it is rewritten: when rank ODD was first marked, then 3 s of summaries.
python3 - "$LIVE" "$ODD_PID" "$ACCEPT_S" >"$D/reader" <<'PY'
import json, sys, time
path, odd, accept = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
t0 = time.monotonic()
first = None
seen = wrong = 0
last = None
while True:
    now = time.monotonic() - t0
    if (first is None and now > accept + 25) or (first is not None and now > first + 3):
        break
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        time.sleep(0.02)
        continue
    job = doc.get("job")
    if not job or json.dumps(job, sort_keys=True) == last:
        time.sleep(0.02)
        continue
    procs = job["processes"]
    marked = [p["pid"] for p in procs if "waits least" in p["odd"]]
    if first is None and marked:
        first = now
        print("first %.2f marked %s shares %s" % (now, marked, [(p["pid"], p["wait_share"]) for p in procs]))
    if first is not None:
        seen += 1
        others = [(p["pid"], p["odd"]) for p in procs if p["pid"] != odd and p["odd"]]
        if marked != [odd] or others:
            wrong += 1
            print("wrong at %.2f: marked %s, others %s" % (now, marked, others))
    last = json.dumps(job, sort_keys=True)
    time.sleep(0.02)
print("result first=%s seen=%d wrong=%d" % ("%.2f" % first if first is not None else "none", seen, wrong))
PY
note "$(cat "$D/reader")"
first=$(sed -nE 's/^result first=([^ ]+) .*/\1/p' "$D/reader")
if [ -n "$first" ] && [ "$first" != none ] && awk -v f="$first" -v a=$ACCEPT_S 'BEGIN { exit !(f <= a) }'; then
	ok "--json-interval: rank $ODD (pid $ODD_PID) marked \"waits least\" within $ACCEPT_S s of the attach ($first s)"
else
	not_ok "--json-interval: rank $ODD (pid $ODD_PID) marked \"waits least\" within $ACCEPT_S s of the attach ($first)"
fi
expect_match "$(grep '^first' "$D/reader")" "marked \\[$ODD_PID\\] " "--json-interval: rank $ODD alone, when first marked"
expect_match "$(grep '^result' "$D/reader")" ' seen=([2-9]|[1-9][0-9]+) wrong=0$' \
	"--json-interval: 3 s of summaries after it, rank $ODD the one straggler and no other rank marked"
jq_eq "$LIVE" '[.job.live, .job.window_s, (.job.processes | length)]' "[true,10,$N]" \
	"--json-interval: the job section is the live picture, its window, the $N ranks"
jq_check "$LIVE" "[.job.processes[] | select(.pid != $ODD_PID) | .threads[].call | select(. != null) | .name] | index(\"ncclAllReduce\") != null" \
	"--json-interval: the others' call in flight, ncclAllReduce"
jq_eq "$LIVE" "[.job.processes[] | select(.pid == $ODD_PID) | .threads[].stack[]? | select(.line == $L_SLOW) | .function]" \
	'["slow"]' "--json-interval: rank $ODD's Python frame at slow() (py_job.py:$L_SLOW)"
kill -TERM "$G"
wait_pid "$G" 60
expect_eq "$WAIT_STATUS" 0 "--json-interval: SIGTERM detaches, status 0"
jq_eq "$LIVE" '.job' null "the last summary, at the end, has no live picture (no now to show)"
goes_on "$D" "--json-interval"
finish
