/* tracer_chain.c — tracers of tracers, from /proc/PID/status (tracer_chain.h). No malloc, no
 * stdio: it runs in gputop's watchdog, a child forked from a process with threads. */
#include "tracer_chain.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define MAX_HOPS 16

/* "/proc/<pid>/<leaf>" into buf, without snprintf. */
static void proc_path(char *buf, pid_t pid, const char *leaf)
{
	char digits[16];
	int n = 0;
	unsigned v = (unsigned)pid;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof digits);
	char *p = buf;
	memcpy(p, "/proc/", 6);
	p += 6;
	while (n)
		*p++ = digits[--n];
	*p++ = '/';
	strcpy(p, leaf);
}

static ssize_t read_proc(pid_t pid, const char *leaf, char *buf, size_t size)
{
	char path[64];
	proc_path(path, pid, leaf);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* A number field of /proc/PID/status ("\nTracerPid:"), -1 when it cannot be read. */
static pid_t status_field(pid_t pid, const char *key)
{
	char buf[2048];
	if (read_proc(pid, "status", buf, sizeof buf) <= 0)
		return -1;
	const char *p = strstr(buf, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	pid_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return v;
}

pid_t tracer_chain_tracer_of(pid_t pid)
{
	return status_field(pid, "\nTracerPid:");
}

bool tracer_chain_loops(pid_t pid, pid_t *by)
{
	pid_t at = tracer_chain_tracer_of(pid);
	*by = at;
	for (int hop = 0; at > 0 && hop < MAX_HOPS; hop++) {
		/* A tracer is a thread: the one of pid that traces is any of its threads. */
		at = tracer_chain_tracer_of(at);
		if (at > 0 && (at == pid || status_field(at, "\nTgid:") == pid))
			return true;
	}
	return false;
}

void tracer_chain_comm(pid_t pid, char *buf, size_t size)
{
	if (size < 2)
		return;
	if (read_proc(pid, "comm", buf, size) <= 0) {
		strcpy(buf, "?");
		return;
	}
	buf[strcspn(buf, "\n")] = 0;
}
