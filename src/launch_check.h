/* launch_check.h — the PROGRAM of `gputop -- PROGRAM`, looked at before anything is opened or
 * started, so that a file that is no program gets its own words ("not an executable") where
 * execvp's errno would say "No such file or directory" (gputop -- README.md: not in PATH) or
 * "Permission denied". Reads the file system only; target_launch still finds and runs it, and
 * says why for everything this lets through. */
#ifndef GPUTOP_LAUNCH_CHECK_H
#define GPUTOP_LAUNCH_CHECK_H

/* 0, or EXIT_NO_PROGRAM once it has said why (with a hint). */
int launch_check(const char *name);

#endif
