/* nspid.h — a process's IDs in the PID namespaces it belongs to (NSpid in /proc/PID/status):
 * how the PID gputop knows is matched with the one another view of the machine reports
 * (NVML in a container may name processes by another namespace's PIDs), and a thread's id
 * in its own namespace with the one gputop traces (a container's program seen from the
 * node writes gettid()'s ids into memory gputop reads). */
#ifndef GPUTOP_NSPID_H
#define GPUTOP_NSPID_H

#include <stdbool.h>
#include <sys/types.h>

#define NSPID_MAX	8	/* nesting levels read */

/* pid's IDs, from gputop's namespace (out[0] == pid) inward; the count, or 0 when /proc/PID
 * cannot be read. A kernel without NSpid (before 4.1) gives just pid. */
int nspid_read(pid_t pid, pid_t *out, int max);
/* The id thread tid of process pid has in its own, innermost PID namespace: what gettid()
 * returns there, the id a program writes into memory gputop reads; tid itself in gputop's
 * namespace; 0 when /proc/PID/task/TID cannot be read (gone). */
pid_t nspid_own(pid_t pid, pid_t tid);
/* Whether /proc has pid at all, i.e. it is a process of gputop's PID namespace. */
bool nspid_visible(pid_t pid);

#endif
