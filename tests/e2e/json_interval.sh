#!/usr/bin/env bash
# Issue 14, item 2: --json-interval SECONDS FILE rewrites the summary atomically. While
# rb_progress (SIMULATED runtime, a launch per round) runs under gputop --json-interval 0.05, a
# reader opens and parses FILE as fast as it can: every read is a whole, valid summary of this
# process, the summaries change (it is rewritten) and their launch counts never go down. At the
# end FILE holds the final summary (exit status, the program's own rounds, as --json FILE says)
# and nothing else is left in its directory. Then the errors: a FILE that cannot be written this
# way ends gputop before the program is run (exit status 6), bad arguments give exit status 2.
source "$(dirname "$0")/../lib.sh"
need_bin rb_progress sim/libcudart.so.13
need_gputop
export LD_LIBRARY_PATH=$SIM
mkdir -p "$TMP/out"
LIVE=$TMP/out/live.json

RB_LAUNCH=1 RB_STOP_FILE=$TMP/stop RB_PROGRESS_FILE=$TMP/progress spawn "$TMP/gputop" \
	"$GPUTOP" -q --json-interval 0.05 "$LIVE" --json "$TMP/end.json" -o "$TMP/prog.out" -- \
	"$BIN/rb_progress" 2 0
GPUTOP_PID=$SPAWNED_PID
wait_for_line "$TMP/progress" '^progress [0-9.]+ [1-9]' 60 || bail "the program makes progress"
# It runs until the stop file exists: should this script end early, it is killed too (lib.sh).
SPAWNED+=("$(sed -nE 's/^ready ([0-9]+)$/\1/p' "$TMP/prog.out" | head -n 1)")

# The reader: 3 s of open + parse, as fast as it goes.
python3 - "$LIVE" "$GPUTOP_PID" >"$TMP/reader" <<'PY'
import json, sys, time
path, end = sys.argv[1], time.monotonic() + 3
reads = bad = changes = down = 0
last_text, last_launches, pids = None, -1, set()
while time.monotonic() < end:
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        bad += 1
        continue
    reads += 1
    try:
        doc = json.loads(text)
    except ValueError:
        bad += 1
        continue
    pids.add(doc["pid"])
    if text != last_text:
        changes += 1
        last_text = text
    if doc["launches"] < last_launches:
        down += 1
    last_launches = doc["launches"]
print(f"reads={reads} bad={bad} changes={changes} down={down} pids={len(pids)} launches={last_launches}")
PY
result=$(cat "$TMP/reader")
note "reader: $result"
expect_match "$result" ' bad=0 ' "every read of FILE was a whole, valid JSON summary"
expect_match "$result" ' down=0 ' "the launch count never went down between reads"
expect_match "$result" ' pids=1 ' "every summary is of the traced process"
changes=$(sed -nE 's/.* changes=([0-9]+) .*/\1/p' <<<"$result")
[ "${changes:-0}" -ge 5 ] && ok "FILE was rewritten while it was read ($changes different summaries)" ||
	not_ok "FILE was rewritten while it was read ($changes different summaries)"
jq_eq "$LIVE" '.exit_status' null "while tracing: exit_status null"

touch "$TMP/stop"
wait_pid "$GPUTOP_PID" 60
expect_eq "$WAIT_STATUS" 0 "gputop exits with the program's status 0"
ROUNDS=$(awk '$1 == "total" { print $3 }' "$TMP/progress")
jq_eq "$LIVE" '.exit_status' 0 "the last rewrite: exit status 0"
jq_eq "$LIVE" '.launches' "$ROUNDS" "the last rewrite: the program's $ROUNDS launches"
jq_eq "$LIVE" "$(api_row cudaFree).calls" "$(jq "$(api_row cudaFree).calls" "$TMP/end.json")" \
	"the last rewrite says what --json says"
expect_eq "$(ls -A "$TMP/out")" "live.json" "nothing but FILE is left in its directory"

# --- errors -------------------------------------------------------------------------------------
expect_refused "a missing directory" 6 "^gputop: cannot write --json-interval file '$TMP/none/x.json': No such file or directory" \
	--json-interval 1 "$TMP/none/x.json"
ln -s "$TMP/elsewhere" "$TMP/link.json"
expect_refused "a symbolic link" 6 "cannot write --json-interval file '$TMP/link.json': it is a symbolic link" \
	--json-interval 1 "$TMP/link.json"
expect_refused "a directory" 6 "cannot write --json-interval file '$TMP/out': not a regular file" \
	--json-interval 1 "$TMP/out"
expect_refused "an interval of 0" 2 "^gputop: invalid interval '0'" --json-interval 0 "$TMP/x.json"
expect_refused "an interval that is no number" 2 "^gputop: invalid interval 'often'" --json-interval often "$TMP/x.json"
"$GPUTOP" --json-interval 1 >/dev/null 2>"$TMP/err.err"
expect_eq "$?" 2 "no FILE: exit status 2"
expect_match "$(cat "$TMP/err.err")" "needs SECONDS and FILE" "no FILE: says so"
expect_eq "$(ls -A "$TMP/out")" "live.json" "refusals leave nothing behind"
finish
