/* target.h — getting hold of the program: checking a PID and attaching to it, or starting a
 * program stopped before its first instruction. Every refusal is explained here, once, with
 * what the user can do about it. */
#ifndef GPUTOP_TARGET_H
#define GPUTOP_TARGET_H

#include <sys/types.h>

/* Both return 0 with every thread stopped, or an exit status (cli.h) after printing why. */
int target_attach(pid_t pid);
/* output_fd >= 0: the program's stdout and stderr go there (-o FILE). */
int target_launch(char **argv, int output_fd, pid_t *pid_out);

/* The command line of pid, spaces between arguments, for display. */

#endif
