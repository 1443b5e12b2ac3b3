/* memory.c — the traced program's memory, in as few system calls as possible. */
#define _GNU_SOURCE
#include "memory.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "threads.h"
#include "tracee.h"

/* The process's part (p->memory). */
struct memory_state {
	int proc_mem_fd;
};

struct memory_state *memory_state_new(void)
{
	struct memory_state *st = malloc(sizeof *st);
	if (st)
		st->proc_mem_fd = -1;
	return st;
}

void memory_state_free(struct memory_state *st)
{
	if (!st)
		return;
	if (st->proc_mem_fd >= 0)
		close(st->proc_mem_fd);
	free(st);
}

int mem_open(struct tracee *p)
{
	struct memory_state *st = p->memory;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", p->pid);
	mem_close(p);
	st->proc_mem_fd = open(path, O_RDWR | O_CLOEXEC);
	return st->proc_mem_fd < 0 ? -errno : 0;
}

void mem_close(struct tracee *p)
{
	struct memory_state *st = p->memory;
	if (st->proc_mem_fd >= 0)
		close(st->proc_mem_fd);
	st->proc_mem_fd = -1;
}

int mem_fd(const struct tracee *p)
{
	struct memory_state *st = p->memory;
	return st->proc_mem_fd;
}

int mem_readv(pid_t pid, const struct mem_range *r, int n)
{
	struct iovec local[MEM_READV_MAX], remote[MEM_READV_MAX];
	size_t total = 0;
	if (n > MEM_READV_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		local[i] = (struct iovec){ r[i].buf, r[i].len };
		remote[i] = (struct iovec){ (void *)(uintptr_t)r[i].addr, r[i].len };
		total += r[i].len;
	}
	ssize_t got = process_vm_readv(pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
	if (got < 0)
		return -errno;
	return (size_t)got == total ? 0 : -EFAULT;
}

int mem_readv_any(const struct tracee *p, const struct mem_range *r, int n)
{
	uint32_t it = 0;
	int err = -ESRCH;
	for (struct thread *t; err && (t = threads_iter(p, &it));)
		if (!t->guest)
			err = mem_readv(t->tid, r, n);
	return err;
}

int mem_read_any(const struct tracee *p, uint64_t addr, void *buf, size_t len)
{
	struct mem_range r = { addr, buf, len };
	return mem_readv_any(p, &r, 1);
}

int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct mem_range r = { addr, buf, len };
	return mem_readv(pid, &r, 1);
}

long mem_read_upto(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return got < 0 ? -errno : (long)got;
}

int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t put = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (put < 0)
		return -errno;
	return (size_t)put == len ? 0 : -EFAULT;
}

int mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	/* Read page by page: a string near the end of a mapping must not fail as a whole. */
	size_t done = 0;
	while (done + 1 < size) {
		uint64_t a = addr + done;
		size_t chunk = 4096 - (a & 4095);
		if (chunk > size - 1 - done)
			chunk = size - 1 - done;
		if (mem_read(pid, a, buf + done, chunk) < 0)
			break;
		void *nul = memchr(buf + done, 0, chunk);
		if (nul)
			return 0;
		done += chunk;
	}
	buf[done] = 0;
	return done ? 0 : -EFAULT;
}

int mem_write_fd(int fd, uint64_t addr, const void *buf, size_t len)
{
	ssize_t put = pwrite(fd, buf, len, (off_t)addr);
	if (put < 0)
		return -errno;
	return (size_t)put == len ? 0 : -EFAULT;
}

int mem_write_code(const struct tracee *p, uint64_t addr, const void *buf, size_t len)
{
	struct memory_state *st = p->memory;
	if (st->proc_mem_fd < 0)
		return -EBADF;
	return mem_write_fd(st->proc_mem_fd, addr, buf, len);
}
