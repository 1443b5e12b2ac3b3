#!/usr/bin/env bash
# Robustness, terminal hangup in launch mode (issue 17, part 7): a hangup reaches a program under
# gputop exactly as it reaches it without gputop, gputop's exit status says what became of it,
# and the program's process group and terminal are as they would be without gputop. A real
# pseudo-terminal (tests/e2e/pty_hangup.py) runs the command the way a terminal or ssh does, and
# is hung up while the program (rb_signals loop, on the SIMULATED runtime) runs:
#  1. the shell above survives SIGHUP through a handler: without gputop the program runs on; under
#     gputop's TUI it must too, 10 of 10 (it used to die of SIGHUP: gputop left on the terminal's
#     loss and the shell, done waiting, exited and hung up the group), gputop tracing it to its
#     end and exiting with its status 0; with -b as well;
#  2. the shell ignores SIGHUP (inherited, as under nohup): both run on;
#  3. the shell dies of SIGHUP, so the kernel hangs up the foreground group: without gputop the
#     program dies of SIGHUP; under gputop too, and gputop exits 129 (the JSON says signal 1);
#  4. the command leads the session itself: without gputop the program gets the hangup and dies;
#     under gputop, which then gets it alone, gputop passes it on: the same, and 129;
#  5. the program has ended and the TUI shows its final screen ("press q") when the terminal
#     goes: gputop leaves with the program's status (it used to spin on the dead terminal for
#     ever, a core busy, the shell waiting).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin rb_signals sim/libcudart.so.13
need_gputop
command -v python3 >/dev/null || skip "python3 is not installed (the terminal is made with its pty module)"
export LD_LIBRARY_PATH=$SIM TERM=xterm
HANGUP=$(dirname "$0")/pty_hangup.py
P=$BIN/rb_signals
N=0

# hangup CASE [HARNESS_OPTIONS] -- CMD...: one run in a fresh directory, $D; its result in R_*.
hangup() {
	local case=$1
	shift
	N=$((N + 1))
	D=$TMP/run$N
	mkdir -p "$D"
	timeout -k 5 120 python3 "$HANGUP" "$case" "$D" "$@" >"$D/harness.out" 2>&1
	local k v
	unset R_program_pid R_program_pgrp R_program_sid R_program_tpgid R_cmd_pid R_cmd_pgrp \
		R_leader_pid R_shell_saw_cmd R_reaped_leader R_reaped_cmd R_reaped_program R_done
	while read -r k v; do
		printf -v "R_$k" '%s' "$v"
	done <"$D/result"
}

# survives WHAT: the program finished its loop (it wrote its done file) and is gone.
survives() {
	expect_eq "${R_done:-}" 1 "$1: the program ran on and finished its loop"
}

# dies WHAT: the program did not finish, and is gone.
dies() {
	expect_eq "${R_done:-}" 0 "$1: the program did not finish (it died)"
	if [ -n "${R_program_pid:-}" ] && running "$R_program_pid"; then
		not_ok "$1: the program is gone"
	else
		ok "$1: the program is gone"
	fi
}

# same_group WHAT: the program is in gputop's process group, which is the terminal's foreground
# group, in the session of the terminal: where it would be without gputop.
same_group() {
	if [ -n "${R_program_pgrp:-}" ] && [ "$R_program_pgrp" == "${R_cmd_pgrp:-}" ] &&
		[ "$R_program_pgrp" == "${R_program_tpgid:-}" ] && [ "${R_program_sid:-}" == "$R_leader_pid" ]; then
		ok "$1: the program is in gputop's process group, the terminal's foreground one"
	else
		not_ok "$1: the program is in gputop's process group, the terminal's foreground one"
		echo "#   $(tr '\n' ' ' <"$D/result")"
	fi
}

# --- 1. the shell survives SIGHUP through a handler --------------------------------------------
for i in 1 2; do
	hangup shell-catches -- "$P" loop
	survives "shell catches SIGHUP, without gputop ($i)"
	expect_eq "${R_shell_saw_cmd:-}" "exit 0" "shell catches SIGHUP, without gputop ($i): status 0"
done
for i in $(seq 10); do
	hangup shell-catches --settle "$TMP/run$((N + 1))/cmd.err" 'the terminal is gone' -- \
		"$GPUTOP" --json "$TMP/run$((N + 1))/g.json" -- "$P" loop
	W="shell catches SIGHUP, gputop's TUI, trial $i"
	survives "$W"
	expect_eq "${R_shell_saw_cmd:-}" "exit 0" "$W: gputop exits with the program's status 0"
	expect_match "$(cat "$D/cmd.err")" 'the terminal is gone: tracing on until the program ends' \
		"$W: gputop saw the terminal go, and traced on"
	jq_eq "$D/g.json" '.exit_status' 0 "$W: the JSON says it exited 0"
	[ "$i" -eq 1 ] && same_group "$W"
done
for i in 1 2; do
	hangup shell-catches -- "$GPUTOP" -b -d 0.1 -- "$P" loop
	survives "shell catches SIGHUP, gputop -b ($i)"
	expect_eq "${R_shell_saw_cmd:-}" "exit 0" "shell catches SIGHUP, gputop -b ($i): status 0"
done

# --- 2. the shell ignores SIGHUP, and so does what it runs -------------------------------------------
hangup shell-ignores -- "$P" loop
survives "shell ignores SIGHUP, without gputop"
hangup shell-ignores --settle "$TMP/run$((N + 1))/cmd.err" 'the terminal is gone' -- "$GPUTOP" -- "$P" loop
survives "shell ignores SIGHUP, gputop's TUI"
expect_eq "${R_shell_saw_cmd:-}" "exit 0" "shell ignores SIGHUP, gputop's TUI: status 0"

# --- 3. the shell dies of SIGHUP: the kernel hangs up the foreground group ----------------------------
hangup shell-dies --until-gone -- "$P" loop
dies "shell dies, without gputop"
expect_eq "${R_reaped_program:-}" "signal 1" "shell dies, without gputop: the program died of SIGHUP"
for i in 1 2 3; do
	hangup shell-dies --until-gone -- "$GPUTOP" --json "$TMP/run$((N + 1))/g.json" -- "$P" loop
	W="shell dies, gputop's TUI, trial $i"
	dies "$W"
	expect_eq "${R_reaped_cmd:-}" "exit 129" "$W: gputop exits 129, as the program died of SIGHUP"
	jq_eq "$D/g.json" '.term_signal' 1 "$W: the JSON says signal 1"
done

# --- 4. the command leads the session ---------------------------------------------------------------
hangup cmd-leads --until-gone -- "$P" loop
dies "the program leads the session, without gputop"
expect_eq "${R_reaped_program:-}" "signal 1" "the program leads the session: it died of SIGHUP"
for i in 1 2 3; do
	hangup cmd-leads --until-gone -- "$GPUTOP" --json "$TMP/run$((N + 1))/g.json" -- "$P" loop
	W="gputop leads the session, trial $i"
	dies "$W"
	expect_eq "${R_reaped_cmd:-}" "exit 129" "$W: gputop exits 129, as the program died of SIGHUP"
	jq_eq "$D/g.json" '.term_signal' 1 "$W: the JSON says signal 1"
done

# --- 5. the program has ended; the TUI waits for q when the terminal goes ---------------------------
for i in 1 2; do
	hangup shell-catches --ended-first -- "$GPUTOP" -- "$P" loop
	W="program ended, TUI at its final screen, trial $i"
	survives "$W"
	expect_eq "${R_shell_saw_cmd:-}" "exit 0" "$W: gputop leaves when the terminal goes, with status 0"
done
finish
