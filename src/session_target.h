/* session_target.h — what a session traces: the program checked before anything is opened
 * (launch_check.h, --gpu-time's library in its file system), taken (the first PID of -p
 * attached, or the program launched), the other PIDs and, with --children, their descendants
 * attached; what a start that failed did to it; a hint where the process attached to has no
 * CUDA and a descendant has; the exit status its end makes. */
#ifndef GPUTOP_SESSION_TARGET_H
#define GPUTOP_SESSION_TARGET_H

#include <sys/types.h>

#include "cli.h"

/* Before anything is opened: gputop has no more privilege than the user, the program to launch
 * is one, --gpu-time's library is there. 0, or an exit status once it has said why. */
int session_check_target(const struct options *opt);
/* The first target, every thread stopped (output_fd >= 0: the launched program's stdout and
 * stderr, -o). 0, or an exit status once it has said why. */
int session_take_target(const struct options *opt, int output_fd, pid_t *pid);
/* The other processes of -p PID,PID... (all or none), then with --children the descendants of
 * each (those that cannot be attached are said and skipped). 0, or an exit status. */
int session_attach_more(const struct options *opt);
/* The tracer could not start on pid (err): how it ended if it died, else a launched program is
 * killed and an attached one let go. gputop's exit status. */
int session_start_failed(const struct options *opt, pid_t pid, int err);
/* The target taken and started: said (attached to; no CUDA yet, and attached without
 * --children: whether its descendants have CUDA, for --children). */
void session_say_target(const struct options *opt, pid_t pid, const char *command);
/* gputop's exit status once the tracing of pid ended (err: the tracer loop's) with every output
 * written: the launched program's own, or what went wrong (no CUDA ever, an error, --gpu-time
 * refused). */
int session_target_status(const struct options *opt, pid_t pid, int err);

#endif
