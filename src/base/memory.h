/* memory.h — reading and writing the traced program's memory. Data goes through
 * process_vm_readv/writev (one system call, several ranges at once); code, which is mapped
 * read-only, goes through /proc/PID/mem, which the tracer may write. */
#ifndef GPUTOP_MEMORY_H
#define GPUTOP_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct memory_state;
struct tracee;

struct mem_range {
	uint64_t addr;
	void *buf;
	size_t len;
};

/* A process's part (p->memory, base/tracee.h): its /proc/PID/mem; made and
 * freed (closed) with it. */
struct memory_state *memory_state_new(void);
void memory_state_free(struct memory_state *st);

int mem_open(struct tracee *p);	/* opens /proc/PID/mem for code writes; 0 or -errno */
void mem_close(struct tracee *p);
int mem_fd(const struct tracee *p);	/* the open /proc/PID/mem, -1 if none (the watchdog inherits it) */

int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);	/* 0 or -errno (all or nothing) */
/* As much of [addr, addr + len) as is mapped from addr on: the bytes read, or -errno. */
long mem_read_upto(pid_t pid, uint64_t addr, void *buf, size_t len);
/* n ranges (at most MEM_READV_MAX, the kernel's IOV_MAX) in one system call: 0 or -errno. */
#define MEM_READV_MAX 1024
int mem_readv(pid_t pid, const struct mem_range *r, int n);
int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
int mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t size);	/* NUL-terminated */
/* mem_readv of process p through one of its threads that has memory (the group leader may be
 * a zombie while its threads run; a vfork guest shares memory that is not p's). */
int mem_readv_any(const struct tracee *p, const struct mem_range *r, int n);
int mem_read_any(const struct tracee *p, uint64_t addr, void *buf, size_t len);

/* Writes through /proc/PID/mem: for code, and for memory of a process other than the traced
 * one (a forked child) when fd >= 0 is given. */
int mem_write_code(const struct tracee *p, uint64_t addr, const void *buf, size_t len);
int mem_write_fd(int fd, uint64_t addr, const void *buf, size_t len);

#endif
