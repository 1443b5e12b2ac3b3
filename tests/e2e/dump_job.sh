#!/usr/bin/env bash
# Issue 34: gputop --dump -p PIDS, on a job of 4 ranks on the SIMULATED runtime and NCCL
# (tests/sim; NCCL_SIM_JOB makes each collective wait until every rank has reached it, as
# NCCL's do). tests/progs/py_job.py: rank 1 waits in Python (straggle(), at the line marked
# "@site straggle") before its 100th collective, so the three others wait inside their 100th
# ncclAllReduce.
#  - watched (--dump --timeout, ended by SIGTERM once the job is stuck): the dump names rank 1
#    as the odd one out (behind, not waiting, another line), its Python function and line; the
#    others' call in flight (ncclAllReduce, AllReduce of 4096 bytes, from the call stub's record)
#    and its age (within the time they were seen stuck), each one's collectives since the attach
#    (99; the others one more in flight), the ranks from the environment; text and --json agree;
#    NCCL's own counter found by value (the first 30 steps end with 20 ms of quiet, every 10th
#    asks ncclCommCount; the simulated communicator keeps, as NCCL 2.28's, its count of
#    AllReduces in seqNumber[], past its first MiB, among fields that move with it): at that
#    field's offset, each rank's
#    3 warm-up collectives made before the attach included, and the positions taken from it;
#  - attached to the job already stuck (--dump alone): the others' call named from their stacks,
#    said to be entered before the attach, with no made-up age or count; NCCL's counter not
#    read, and why;
#  - after each dump the job goes on and ends as without gputop: the same lines, status 0;
#  - --children of a launcher (bash) of the ranks: the ranks traced, the launcher (no CUDA) never
#    the odd one out;
#  - bad input: --dump without -p, with -b: exit 2.
source "$(dirname "$0")/../lib.sh"
need_bin sim/libcudart.so.13 simnccl/libnccl.so.2
need_gputop
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "Debian's /usr/bin/python3.11 is not installed"
can_attach_to_others || skip "ptrace_scope forbids attaching to a process that is not a child"
PROG=$ROOT/tests/progs/py_job.py
export LD_LIBRARY_PATH=$SIM:$BIN/simnccl
N=4 ITER=150 ODD=1 AT=100 WARM=3
export PY_JOB_WARM=$WARM	# collectives before any attach: NCCL's counter has them
L_STRAGGLE=$(grep -n "# @site straggle$" "$PROG" | cut -d: -f1)
L_ALLREDUCE=$(grep -n "# @site allreduce$" "$PROG" | cut -d: -f1)

# start_job DIR: N ranks (RANK and WORLD_SIZE in their environment, as torchrun sets them),
# each ready (its communicator made) and waiting for DIR/go; their pids in JOB_PIDS.
start_job() {
	local d=$1 r
	mkdir -p "$d"
	JOB_PIDS=()
	for ((r = 0; r < N; r++)); do
		RANK=$r WORLD_SIZE=$N NCCL_SIM_JOB=$d/job spawn "$d/r$r" "$PY" "$PROG" "$SIM/libcudart.so.13" \
			"$BIN/simnccl/libnccl.so.2" $r $N $ITER $ODD $AT "$d/go" "$d/stop"
		JOB_PIDS+=("$SPAWNED_PID")
	done
	for ((r = 0; r < N; r++)); do
		wait_for_line "$d/r$r.out" '^ready' 60 || bail "rank $r is ready: $(cat "$d/r$r.err")"
	done
}

# The collectives each rank has reached (warm-up included), from the
# simulated NCCL's shared counts.
reached() {
	od -A n -t u8 -N $((8 * N)) -v "$1/job" 2>/dev/null | tr -s ' \n' ' '
}

# stuck DIR: waits until the odd rank waits in straggle() and every other rank is inside its
# collective number AT (it has counted itself there). 1 after 60 s.
stuck() {
	local d=$1 want i
	want=$(for ((i = 0; i < N; i++)); do [ $i -eq $ODD ] && printf ' %d' $((WARM + AT - 1)) || printf ' %d' $((WARM + AT)); done)
	wait_for_line "$d/r$ODD.out" '^straggling' 60 || return 1
	for ((i = 0; i < 1200; i++)); do
		[ "$(reached "$d")" = "$want " ] && return 0
		sleep 0.05
	done
	note "reached: $(reached "$d"), wanted$want"
	return 1
}

# end_job DIR WHAT: lets the odd rank go on; each rank ends with status 0; their lines in DIR/lines.
end_job() {
	local d=$1 what=$2 r bad=0
	touch "$d/stop" "$d/go"
	for ((r = 0; r < N; r++)); do
		wait_pid "${JOB_PIDS[$r]}" 120
		[ "$WAIT_STATUS" -eq 0 ] || { bad=1; note "rank $r: status $WAIT_STATUS: $(cat "$d/r$r.err")"; }
	done
	[ $bad -eq 0 ] && ok "$what: every rank exits with status 0" || not_ok "$what: every rank exits with status 0"
	cat "$d"/r?.out | grep '^py_job:' >"$d/lines"
}

# --- without gputop: what the job prints -------------------------------------------------------
start_job "$TMP/plain"
end_job "$TMP/plain" "without gputop"
expect_eq "$(wc -l <"$TMP/plain/lines")" $N "without gputop: a line per rank"
expect_eq "$(grep -c "collectives=$ITER " "$TMP/plain/lines")" $N "without gputop: $ITER collectives each"

# --- watched: attached before the job runs, the picture taken once it is stuck ------------------
# Each of the first 30 steps ends with 20 ms in Python: quiet moments, where NCCL's counter is
# looked for; every 10th asks the communicator's size (the simulated NCCL's count of calls, equal
# to NCCL's counter until then, parts from it).
D=$TMP/w
PY_JOB_STEP_MS=20 PY_JOB_QUERY=10 start_job "$D"
pids=$(IFS=,; echo "${JOB_PIDS[*]}")
spawn "$D/gputop" "$GPUTOP" --dump --timeout 300 --json "$D/dump.json" -p "$pids"
G=$SPAWNED_PID
for p in "${JOB_PIDS[@]}"; do
	wait_for_line "$D/gputop.err" "attached to $p" 60 || bail "gputop attached to $p: $(tail -5 "$D/gputop.err")"
done
t_go=$(date +%s%N)
touch "$D/go"
stuck "$D" || bail "the job is stuck at collective $AT"
sleep 0.5
t_dump=$(date +%s%N)
kill -TERM "$G"
wait_pid "$G" 60
expect_eq "$WAIT_STATUS" 0 "--dump: exit status 0 (ended by SIGTERM: the picture then)"
stuck_s=$(awk -v a="$t_go" -v b="$t_dump" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
F=$D/dump.json
ODD_PID=${JOB_PIDS[$ODD]}
jq_eq "$F" '.job.processes | length' $N "$N processes in the job section"
jq_eq "$F" '[.job.processes[] | select(.odd | length > 0) | .pid]' "[$ODD_PID]" "the odd one out: rank $ODD's process, alone"
P="$(jq --argjson p "$ODD_PID" '.job.processes[] | select(.pid == $p)' "$F" >"$F.odd"; echo "$F.odd")"
jq_eq "$P" '.odd' '["behind","not waiting","another line","waits least"]' \
	"rank $ODD: behind, not waiting, at another line, waited least"
jq_eq "$P" '[.python.function, (.python.file | split("/") | last), .python.line]' "[\"straggle\",\"py_job.py\",$L_STRAGGLE]" \
	"rank $ODD: its Python function and line (straggle, py_job.py:$L_STRAGGLE)"
jq_eq "$P" '[.rank, .nranks, .collectives, .in_collective, .waiting]' "[$ODD,$N,$((AT - 1)),false,false]" \
	"rank $ODD: rank from its environment, $((AT - 1)) collectives since the attach, none in flight, not waiting"
jq_eq "$P" '[.threads[].call | select(. != null)] | length' 0 "rank $ODD: no thread in a CUDA or NCCL call"
jq '[.job.processes[] | select(.odd | length == 0)]' "$F" >"$F.others"
jq_eq "$F.others" '[.[].rank] | sort' "$(seq -s, 0 $((N - 1)) | sed "s/\b$ODD,\?//; s/,$//; s/^/[/; s/$/]/")" \
	"the others: the other ranks"
jq_eq "$F.others" '[.[] | [.collectives, .in_collective, .position, .waiting]] | unique' "[[$((AT - 1)),true,$((WARM + AT)),true]]" \
	"the others: $((AT - 1)) collectives since the attach, the ${AT}th in flight, waiting; position $((WARM + AT)) (NCCL's counter)"
# NCCL's counter: found by value among fields that move with the collectives (tests/sim/nccl.c),
# the warm-up collectives before the attach included; the field the simulated NCCL says.
OFFSET=$(sed -n 's/^counter_offset //p' "$D/r0.out")
jq_eq "$F" "[.job.processes[] | [.nccl_counter, .nccl_counter_offset, .nccl_counter_why_not]] | sort" \
	"[[$((WARM + AT - 1)),$OFFSET,null]$(for ((i = 1; i < N; i++)); do printf ',[%d,%d,null]' $((WARM + AT)) "$OFFSET"; done)]" \
	"NCCL's counter of each rank, found at seqNumber[AllReduce]'s offset ($OFFSET): $WARM warm-up collectives + the ones since the attach (+1 inside)"
jq_eq "$F.others" '[.[] | [.python.function, .python.line]] | unique' "[[\"main\",$L_ALLREDUCE]]" \
	"the others: at their ncclAllReduce line (main, py_job.py:$L_ALLREDUCE)"
jq_eq "$F.others" '[.[].threads[].call | select(. != null) | [.name, .op, .bytes, .source, .before_attach]] | unique' \
	'[["ncclAllReduce","AllReduce",4096,"call stub",false]]' \
	"the others: inside ncclAllReduce (AllReduce, 4096 bytes), from the call stub's record"
jq_eq "$F.others" '[.[].threads[].call | select(. != null)] | length' $((N - 1)) "the others: one call in flight each"
jq_check "$F.others" "[.[].threads[].call | select(. != null) | .age_s] | all(. > 0 and . <= $stuck_s)" \
	"the others: the call's age, within the $stuck_s s since the job was let go"
jq_check "$F.others" '[.[].threads[] | select(.call != null) | .stack[0:4][].function] | index("ncclAllReduce") != null' \
	"the others: ncclAllReduce on the waiting thread's stack"
jq_check "$F" '.job.processes | all(.held_ms > 0 and .picture_ms > 0)' "each process: how long it was held, said"
jq_check "$F.others" "[.[].wait_share] | all(. > $(jq '.wait_share' "$P") + 0.2)" \
	"the others waited a larger share of the watched time (+0.2 at least) than rank $ODD" \
	'[.[] | {pid, wait_share, watched_s}]'
note "held (ms): $(jq -c '[.job.processes[] | .held_ms | floor]' "$F")"
# The text says the same.
T=$D/gputop.out
expect_eq "$(grep -c 'ODD ONE OUT' "$T")" 1 "text: one odd one out"
expect_match "$(grep -A2 "^process $ODD_PID " "$T")" "ODD ONE OUT: behind \\(collective $((WARM + AT - 1)), others up to $((WARM + AT))\\)" \
	"text: under rank $ODD's process"
expect_match "$(grep -A1 "^process $ODD_PID " "$T")" "Python: straggle \\(.*py_job.py:$L_STRAGGLE\\)" "text: rank $ODD's Python line"
expect_eq "$(grep -c "^process .*  NCCL's counter $((WARM + AT)),  collectives $((AT - 1)) since the attach" "$T")" $((N - 1)) \
	"text: NCCL's counter said beside the count since the attach"
expect_eq "$(grep -cE 'in ncclAllReduce\(AllReduce 4096 bytes, comm 0x[0-9a-f]+\) for [0-9.]+ s \[call stub\]' "$T")" $((N - 1)) \
	"text: the others' call in flight, with its age"
expect_match "$(tail -n1 "$T")" "^held:( [0-9]+ [0-9.]+ ms \\(picture [0-9.]+ ms\\);){$N}$" "text: the last line, how long each was held"
end_job "$D" "watched"
expect_file_eq "$D/lines" "$TMP/plain/lines" "watched: the job's lines are as without gputop"

# --- a straggler at every step (PY_JOB_SLOW_MS=30 on rank 1), watched 3 s while the job runs ------
D=$TMP/slow
PY_JOB_SLOW_MS=30 AT=100000 start_job "$D"
pids=$(IFS=,; echo "${JOB_PIDS[*]}")
spawn "$D/gputop" "$GPUTOP" --dump --timeout 3 --json "$D/dump.json" -p "$pids"
G=$SPAWNED_PID
for p in "${JOB_PIDS[@]}"; do
	wait_for_line "$D/gputop.err" "attached to $p" 60 || bail "gputop attached to $p"
done
touch "$D/go"
wait_pid "$G" 120
expect_eq "$WAIT_STATUS" 0 "slow rank: --dump --timeout 3 exits 0"
F=$D/dump.json
ODD_PID=${JOB_PIDS[$ODD]}
jq_eq "$F" '[.job.processes[] | select(.odd | index("waits least")) | .pid]' "[$ODD_PID]" \
	"slow rank: rank $ODD, sleeping 30 ms a step, is the one that waits least, alone"
jq_check "$F" '.job.processes | all(.watched_s >= 2.5 and .wait_share != null)' "slow rank: each rank's share of ~3 s watched" \
	'[.job.processes[] | {pid, odd, wait_share, watched_s}]'
expect_eq "$(grep -c 'waits least' "$D/gputop.out")" 1 "slow rank: said once in the text"
end_job "$D" "slow rank"
expect_file_eq "$D/lines" "$TMP/plain/lines" "slow rank: the job's lines are as without gputop"

# --- attached to the job once it is stuck ----------------------------------------------------------
D=$TMP/s
start_job "$D"
touch "$D/go"
stuck "$D" || bail "the job is stuck at collective $AT"
pids=$(IFS=,; echo "${JOB_PIDS[*]}")
t0=$(date +%s%N)
"$GPUTOP" --dump --json "$D/dump.json" -p "$pids" >"$D/gputop.out" 2>"$D/gputop.err" </dev/null
expect_eq "$?" 0 "--dump of a stuck job: exit status 0"
note "--dump of $N processes took $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s"
F=$D/dump.json
ODD_PID=${JOB_PIDS[$ODD]}
jq_eq "$F" '[.job.processes[] | select(.odd | length > 0) | .pid]' "[$ODD_PID]" "stuck: the odd one out, rank $ODD"
jq_eq "$F" "[.job.processes[] | select(.pid == $ODD_PID) | .python.line]" "[$L_STRAGGLE]" "stuck: rank $ODD's line"
jq_eq "$F" '[.job.processes[].collectives] | unique' '[0]' "stuck: no collective returned since the attach (none made up)"
jq_eq "$F" '[.job.processes[] | [.nccl_counter, .nccl_counter_why_not]] | unique' '[[null,"no collective seen since the attach"]]' \
	"stuck: NCCL's counter not read, and why (none seen since the attach)"
expect_eq "$(grep -c "NCCL's counter: not read (no collective seen since the attach): counted since the attach" "$D/gputop.out")" $N \
	"stuck: said so in the text"
jq_eq "$F" "[.job.processes[] | select(.pid != $ODD_PID) | .threads[].call | select(. != null) | [.name, .source, .before_attach, .age_s]] | unique" \
	'[["ncclAllReduce","stack",true,null]]' "stuck: the others in ncclAllReduce, from their stacks, entered before the attach, age unknown"
expect_eq "$(grep -c 'in ncclAllReduce, entered before gputop attached' "$D/gputop.out")" $((N - 1)) "stuck: said so in the text"
end_job "$D" "stuck"
expect_file_eq "$D/lines" "$TMP/plain/lines" "stuck: the job's lines are as without gputop"

# --- --children of a launcher: the ranks under it, the launcher itself no rank ------------------------
D=$TMP/l
mkdir -p "$D"
LAUNCH='for ((r = 0; r < $1; r++)); do RANK=$r WORLD_SIZE=$1 NCCL_SIM_JOB=$2/job "$3" "$4" "$5" "$6" $r $1 $7 $8 $9 "$2/go" "$2/stop" >"$2/r$r.out" & done; wait'
spawn "$D/launcher" bash -c "$LAUNCH" launcher $N "$D" "$PY" "$PROG" "$SIM/libcudart.so.13" "$BIN/simnccl/libnccl.so.2" $ITER $ODD $AT
L=$SPAWNED_PID
for ((r = 0; r < N; r++)); do
	wait_for_line "$D/r$r.out" '^ready' 60 || bail "rank $r under the launcher is ready"
done
touch "$D/go"
stuck "$D" || bail "the job under the launcher is stuck at collective $AT"
"$GPUTOP" --dump --children --json "$D/dump.json" -p "$L" >"$D/gputop.out" 2>"$D/gputop.err" </dev/null
expect_eq "$?" 0 "--dump --children of the launcher: exit status 0"
ODD_PID=$(sed -n 's/^ready //p' "$D/r$ODD.out")
jq_eq "$D/dump.json" '.job.processes | length' $((N + 1)) "--children: the launcher and its $N ranks"
jq_eq "$D/dump.json" '[.job.processes[] | select(.odd | length > 0) | .pid]' "[$ODD_PID]" \
	"--children: the odd one out is rank $ODD, not the launcher (no CUDA: no rank)"
touch "$D/stop"
wait_pid "$L" 120
expect_eq "$WAIT_STATUS" 0 "--children: the launcher and its ranks end, status 0"
cat "$D"/r?.out | grep '^py_job:' >"$D/lines"
expect_file_eq "$D/lines" "$TMP/plain/lines" "--children: the job's lines are as without gputop"

# --- bad input ------------------------------------------------------------------------------------
"$GPUTOP" --dump -- true >/dev/null 2>"$TMP/bad.err"
expect_eq "$?" 2 "--dump without -p: exit 2"
expect_match "$(cat "$TMP/bad.err")" "--dump is for attach mode" "--dump without -p: says why"
"$GPUTOP" --dump -b -p 1 >/dev/null 2>"$TMP/bad.err"
expect_eq "$?" 2 "--dump with -b: exit 2"
finish
