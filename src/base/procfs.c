/* procfs.c — what /proc says about a process (procfs.h). */
#define _GNU_SOURCE
#include "procfs.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int proc_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = 0;
	return (int)n;
}

long proc_status_field(pid_t pid, const char *key)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (proc_read_file(path, buf, sizeof buf) < 0)
		return -1;
	char *p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

void proc_command(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	int n = proc_read_file(path, buf, size);
	if (n <= 0) {
		snprintf(path, sizeof path, "/proc/%d/comm", pid);
		n = proc_read_file(path, buf, size);
		if (n > 0 && buf[n - 1] == '\n')
			buf[n - 1] = 0;
		if (n <= 0)
			snprintf(buf, size, "?");
		return;
	}
	for (int i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
}

/* Whether v is NAME=... for this name; the value then in *value. */
static bool env_is(const char *v, const char *name, const char **value)
{
	size_t n = strlen(name);
	if (strncmp(v, name, n) != 0 || v[n] != '=')
		return false;
	*value = v + n + 1;
	return true;
}

void proc_job(pid_t pid, struct proc_job *job)
{
	char path[64];
	char env[1 << 16];
	const char *val, *run_id = NULL, *slurm_job = NULL;
	*job = (struct proc_job){ .rank = -1, .local_rank = -1 };
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, env, sizeof env - 1);
	close(fd);
	if (n <= 0)
		return;
	env[n] = 0;
	for (char *v = env; v < env + n; v += strlen(v) + 1) {
		if (env_is(v, "RANK", &val) || (job->rank < 0 && (env_is(v, "OMPI_COMM_WORLD_RANK", &val) ||
								  env_is(v, "SLURM_PROCID", &val))))
			job->rank = atoi(val);
		else if (env_is(v, "LOCAL_RANK", &val) ||
			 (job->local_rank < 0 && env_is(v, "OMPI_COMM_WORLD_LOCAL_RANK", &val)))
			job->local_rank = atoi(val);
		else if (env_is(v, "TORCHELASTIC_RUN_ID", &val) && *val && strcmp(val, "none") != 0)
			run_id = val;
		else if (env_is(v, "SLURM_JOB_ID", &val) && *val)
			slurm_job = val;
	}
	if (run_id || slurm_job)
		snprintf(job->id, sizeof job->id, "%s", run_id ? run_id : slurm_job);
}

/* The processes below pid, parents before their children: up to max, found in /proc. */
int proc_descendants(pid_t pid, pid_t *out, int max)
{
	enum { SCAN_MAX = 65536 };
	pid_t *procs = malloc(2 * SCAN_MAX * sizeof *procs), *parents = procs + SCAN_MAX;	/* once at start */
	int n = 0, found = 0;
	DIR *d = procs ? opendir("/proc") : NULL;
	if (!d) {
		free(procs);
		return 0;
	}
	for (struct dirent *e; n < SCAN_MAX && (e = readdir(d));) {
		pid_t p = (pid_t)atoi(e->d_name);
		long pp;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d", p);
		if (p > 0 && (pp = proc_status_field(p, "PPid:")) >= 0) {
			procs[n] = p;
			parents[n++] = (pid_t)pp;
		}
	}
	closedir(d);
	/* Breadth first from pid: each round adds the children of what was found before. */
	out[0] = pid;
	int done = 0, total = 1;
	while (done < total && total < max + 1) {
		pid_t parent = out[done++];
		for (int i = 0; i < n && total < max + 1; i++)
			if (parents[i] == parent)
				out[total++] = procs[i];
	}
	found = total - 1;
	memmove(out, out + 1, (size_t)found * sizeof *out);
	free(procs);
	return found;
}


static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The candidate of a gap [lo, hi) nearest to near, or 0. */
static uint64_t gap_candidate(uint64_t lo, uint64_t hi, uint64_t near, uint64_t size, uint64_t align)
{
	lo = (lo + align - 1) & ~(align - 1);
	if (hi < size || lo > hi - size)
		return 0;
	uint64_t top = (hi - size) & ~(align - 1);
	uint64_t at = near < lo ? lo : near > top ? top : (near & ~(align - 1));
	return at < lo ? lo : at;
}

int proc_free_ranges_near(pid_t pid, uint64_t near, uint64_t size, uint64_t align, uint64_t reach,
			  uint64_t *out, int max)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	/* A guard of 64 KiB on each side: never right against another mapping (a stack's guard
	 * gap, a library that grows into its reservation). */
	const uint64_t guard = 64 * 1024, user_top = 1ull << 47;
	uint64_t prev_end = guard;
	int n = 0;
	for (bool more = true; more;) {
		unsigned long lo = user_top, hi = user_top;
		more = fgets(line, sizeof line, f) != NULL;
		if (more && sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (lo >= user_top)
			lo = hi = user_top, more = false;
		uint64_t at = lo > prev_end + 2 * guard ?
			gap_candidate(prev_end + guard, lo - guard, near, size, align) : 0;
		if (at && distance(at, near) < reach && distance(at + size, near) < reach) {
			/* Kept in order of distance to near, the max nearest. */
			int k = n;
			if (n < max)
				n++;
			else if (distance(out[max - 1], near) <= distance(at, near))
				k = -1;
			else
				k = max - 1;
			for (; k > 0 && distance(out[k - 1], near) > distance(at, near); k--)
				out[k] = out[k - 1];
			if (k >= 0)
				out[k] = at;
		}
		if (hi > prev_end)
			prev_end = hi;
	}
	fclose(f);
	return n;
}

/* A hash of the paths of the process's executable mappings (FNV-1a): a new library changes
 * it; a thread's stack or a heap arena does not. 0 when the maps cannot be read. */
uint64_t proc_exec_maps_hash(pid_t pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	uint64_t h = 1469598103934665603ull;
	while (fgets(line, sizeof line, f)) {
		char perms[8];
		int at = 0;
		if (sscanf(line, "%*s %7s %*s %*s %*s %n", perms, &at) != 1 || perms[2] != 'x' || line[at] != '/')
			continue;
		for (const char *p = line; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ull;
	}
	fclose(f);
	return h;
}
