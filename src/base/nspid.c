/* nspid.c — NSpid of /proc/PID/status (nspid.h). */
#include "nspid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nspid_read(pid_t pid, pid_t *out, int max)
{
	char path[64], line[256];
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
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
		out[n++] = pid;
	return n;
}

bool nspid_visible(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) == 0;
}
