/* nspid.c — NSpid of /proc/PID/status and /proc/PID/task/TID/status (nspid.h). */
#include "nspid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The NSpid line of a status file of /proc. */
static int read_ids(const char *path, pid_t id, pid_t *out, int max)
{
	char line[512];
	int n = 0;

	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		char *p = line + 6, *end;
		for (long v; n < max && (v = strtol(p, &end, 10), end != p); p = end)
			out[n++] = (pid_t)v;
		break;
	}
	fclose(f);
	if (n == 0 && max > 0)
		out[n++] = id;
	return n;
}

int nspid_read(pid_t pid, pid_t *out, int max)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return read_ids(path, pid, out, max);
}

pid_t nspid_own(pid_t pid, pid_t tid)
{
	char path[64];
	pid_t ids[33];	/* the kernel nests 32 levels at most (MAX_PID_NS_LEVEL) */

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	int n = read_ids(path, tid, ids, 33);
	return n > 0 ? ids[n - 1] : 0;
}

bool nspid_visible(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) == 0;
}
