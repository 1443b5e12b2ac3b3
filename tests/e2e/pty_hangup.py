#!/usr/bin/env python3
"""pty_hangup.py: runs a command on a fresh pseudo-terminal, as a terminal emulator or ssh
would, hangs the terminal up while the program runs, and writes down what became of everything.
For tests/e2e/robust_hangup.sh (issue 17: a hangup reaches a program under gputop exactly as
it reaches it without gputop). Not a test itself; Python's standard library only.

Usage: pty_hangup.py CASE DIR [--settle FILE REGEX | --until-gone | --ended-first] -- CMD...

CASE says who leads the terminal's session:
  shell-catches  a shell that survives SIGHUP through a handler (what it runs gets the default
                 action) runs CMD in the foreground and waits for it;
  shell-ignores  the same, with SIGHUP ignored (SIG_IGN, which CMD inherits, as under nohup);
  shell-dies     a shell that dies of SIGHUP (the default): the kernel then sends SIGHUP to the
                 terminal's foreground process group;
  cmd-leads      CMD leads the session itself (a terminal emulator or ssh ran it directly).
The shell is this script, non-interactive like sh -c: CMD runs in the shell's process group.

CMD's stdin and stdout are the terminal, its stderr DIR/cmd.err. The program (CMD itself, or
the one gputop runs) must be `rb_signals loop`: RB_COUNT_FILE=DIR/count, RB_STOP_FILE=DIR/stop
and RB_DONE_FILE=DIR/done are set here, and its pid is read from its "ready PID" line on the
terminal. Steps: wait until it has looped twice; note process groups; (--ended-first: create
DIR/stop, wait until the program has finished its loop and is gone, then a second more for a
TUI to show its final screen); hang up (close the
terminal's master side); wait until the program is gone, or FILE matches REGEX (--settle), or
(--until-gone) only until it is gone, or else half a second; create DIR/stop; reap everything
(this script is a child subreaper, so orphans come to it). Every wait has a deadline of 60 s.

DIR/result, one "key value" line each: program_pid, program_pgrp, program_sid,
program_tpgid (the terminal's foreground group), cmd_pid, cmd_pgrp, leader_pid, and the
statuses this script or the shell saw: shell_saw_cmd, reaped_leader, reaped_cmd,
reaped_program ("exit N", "signal N"; absent when not seen), and done (1 when the program
finished its loop and wrote DIR/done).
"""
import ctypes
import os
import pty
import re
import select
import signal
import sys
import time

DEADLINE = 60.0
PR_SET_CHILD_SUBREAPER = 36


def status_text(st):
    if os.WIFEXITED(st):
        return "exit %d" % os.WEXITSTATUS(st)
    if os.WIFSIGNALED(st):
        return "signal %d" % os.WTERMSIG(st)
    return "other %d" % st


def stat_fields(pid):
    """pid, state, ppid, pgrp, sid, tty_nr, tpgid from /proc/PID/stat (None if gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return {"state": rest[0], "ppid": int(rest[1]), "pgrp": int(rest[2]), "sid": int(rest[3]),
            "tty_nr": int(rest[4]), "tpgid": int(rest[5])}


def alive(pid):
    st = stat_fields(pid)
    return st is not None and st["state"] not in ("Z", "X")


def exec_cmd(d, cmd):
    fd = os.open(os.path.join(d, "cmd.err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    # Python ignores these for itself; a program started from a shell would not.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)


def run_shell(case, d, cmd):
    if case == "shell-catches":
        signal.signal(signal.SIGHUP, lambda *a: None)
    elif case == "shell-ignores":
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    c = os.fork()
    if c == 0:
        if case == "shell-catches":
            signal.signal(signal.SIGHUP, signal.SIG_DFL)  # as exec would make a handler
        exec_cmd(d, cmd)
    with open(os.path.join(d, "cmd.pid"), "w") as f:
        f.write("%d\n" % c)
    _, st = os.waitpid(c, 0)
    with open(os.path.join(d, "shell.status"), "w") as f:
        f.write(status_text(st) + "\n")
    os._exit(0)


def drain_once(fd, timeout):
    r, _, _ = select.select([fd], [], [], timeout)
    if r:
        try:
            os.read(fd, 65536)
        except OSError:
            pass


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def main():
    args = sys.argv[1:]
    if len(args) < 4 or "--" not in args:
        sys.exit(__doc__)
    case, d = args[0], args[1]
    sep = args.index("--")
    opts, cmd = args[2:sep], args[sep + 1:]
    settle = (opts[1], re.compile(opts[2])) if opts[:1] == ["--settle"] else None
    until_gone = opts[:1] == ["--until-gone"]
    ended_first = opts[:1] == ["--ended-first"]
    if case not in ("shell-catches", "shell-ignores", "shell-dies", "cmd-leads"):
        sys.exit("unknown case " + case)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    os.environ.update(RB_COUNT_FILE=os.path.join(d, "count"), RB_STOP_FILE=os.path.join(d, "stop"),
                      RB_DONE_FILE=os.path.join(d, "done"))
    leader, master = pty.fork()
    if leader == 0:
        if case == "cmd-leads":
            exec_cmd(d, cmd)
        run_shell(case, d, cmd)

    result = {"leader_pid": leader}
    reaped = {}
    out = b""
    prog = None
    end = time.time() + DEADLINE
    # Until the program runs: drain the terminal (a full one would block the writers).
    while time.time() < end:
        r, _, _ = select.select([master], [], [], 0.02)
        if r:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
        if prog is None:
            m = re.search(rb"ready (\d+)", out)
            prog = int(m.group(1)) if m else None
        if prog is not None and (read_int(os.path.join(d, "count")) or 0) >= 2:
            break
    cmd_pid = read_int(os.path.join(d, "cmd.pid")) if case != "cmd-leads" else leader
    if prog is not None:
        st = stat_fields(prog) or {}
        result.update(program_pid=prog, program_pgrp=st.get("pgrp"), program_sid=st.get("sid"),
                      program_tpgid=st.get("tpgid"))
    if cmd_pid:
        st = stat_fields(cmd_pid) or {}
        result.update(cmd_pid=cmd_pid, cmd_pgrp=st.get("pgrp"))

    if ended_first and prog is not None:
        open(os.path.join(d, "stop"), "w").close()
        while time.time() < end and (alive(prog) or not os.path.exists(os.path.join(d, "done"))):
            drain_once(master, 0.02)
        pause = time.time() + 1.0
        while time.time() < min(pause, end):
            drain_once(master, 0.02)
    os.close(master)  # the hangup
    hung_up = time.time()
    while time.time() < end:
        if prog is None or not alive(prog):
            break
        if settle:
            try:
                with open(settle[0], errors="replace") as f:
                    if settle[1].search(f.read()):
                        break
            except OSError:
                pass
        elif not until_gone and time.time() - hung_up > 0.5:
            break
        time.sleep(0.02)
    open(os.path.join(d, "stop"), "w").close()

    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.time() > end:
                for p in (prog, cmd_pid, leader):
                    if p:
                        try:
                            os.kill(p, signal.SIGKILL)
                        except OSError:
                            pass
            time.sleep(0.02)
            continue
        reaped[pid] = status_text(st)
    if leader in reaped:
        result["reaped_leader"] = reaped[leader]
    if cmd_pid in reaped:
        result["reaped_cmd"] = reaped[cmd_pid]
    if prog in reaped:
        result["reaped_program"] = reaped[prog]
    try:
        with open(os.path.join(d, "shell.status")) as f:
            result["shell_saw_cmd"] = f.read().strip()
    except OSError:
        pass
    result["done"] = 1 if os.path.exists(os.path.join(d, "done")) else 0
    with open(os.path.join(d, "result"), "w") as f:
        for k, v in result.items():
            f.write("%s %s\n" % (k, v))


if __name__ == "__main__":
    main()
