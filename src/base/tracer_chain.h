/* tracer_chain.h — who traces whom, read from /proc (TracerPid): the chain of tracers above a
 * process, and whether it comes back to the process itself. A process traced by one of its own
 * tracees (a program that gputop traces runs `strace -p` on gputop) waits on it while it waits
 * on the process: both stay stopped for good. Only open, read and close: usable in a child
 * forked from a process with threads (gputop's watchdog). */
#ifndef GPUTOP_TRACER_CHAIN_H
#define GPUTOP_TRACER_CHAIN_H

#include <stdbool.h>
#include <sys/types.h>

/* The tracer of pid (its TracerPid), 0 when none, -1 when pid cannot be read. */
pid_t tracer_chain_tracer_of(pid_t pid);
/* pid is traced by a process that it traces, directly or through others (a chain of at most
 * 16): *by gets its own tracer. */
bool tracer_chain_loops(pid_t pid, pid_t *by);
/* The command name of pid (/proc/PID/comm) into buf; "?" when it cannot be read. */
void tracer_chain_comm(pid_t pid, char *buf, size_t size);

#endif
