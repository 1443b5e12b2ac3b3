/* fdlimit.h — gputop's own limit of open files (RLIMIT_NOFILE), raised where --listen needs
 * room for thousands of connections, and put back as it was in a program gputop starts: the
 * program must get the limits it would have had without gputop. */
#ifndef GPUTOP_FDLIMIT_H
#define GPUTOP_FDLIMIT_H

/* Raises the soft limit towards want (never above the hard limit; never lowers it). Returns
 * how many files gputop may have open now, at most want. */
long fdlimit_raise(long want);
/* In a child of gputop, before it execs a program: the limit gputop started with, if
 * fdlimit_raise changed it (async-signal-safe: one system call). */
void fdlimit_restore(void);

#endif
