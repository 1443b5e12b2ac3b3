/* fake_memory.c — the fake memory, log and config of fake_memory.h. */
#include "fake_memory.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "memory.h"

struct config config;

static uint8_t memory[FAKE_MEM_SIZE];
static int code_writes;
static struct {
	uint64_t addr;
	uint8_t *buf;
	size_t len;
} region;

void fake_memory_region(uint64_t addr, void *buf, size_t len)
{
	region.addr = addr;
	region.buf = buf;
	region.len = len;
}

/* The region's bytes at addr, if [addr, addr + n) lies in it. */
static uint8_t *in_region(uint64_t addr, size_t n)
{
	if (region.buf && n <= region.len && addr >= region.addr && addr - region.addr <= region.len - n)
		return region.buf + (addr - region.addr);
	return NULL;
}

void fake_memory_clear(void)
{
	memset(memory, 0, sizeof memory);
	code_writes = 0;
}

static bool inside(uint64_t addr, size_t n)
{
	return n <= FAKE_MEM_SIZE && addr >= FAKE_MEM && addr - FAKE_MEM <= FAKE_MEM_SIZE - n;
}

uint8_t *fake_bytes(uint64_t addr, size_t n)
{
	if (!inside(addr, n)) {
		fprintf(stderr, "fake_bytes: %#" PRIx64 " (%zu bytes) is not in the fake memory\n", addr, n);
		abort();
	}
	return &memory[addr - FAKE_MEM];
}

uint64_t *fake_word(uint64_t addr)
{
	return (uint64_t *)(void *)fake_bytes(addr, 8);
}

void fake_put_string(uint64_t addr, const char *s)
{
	memcpy(fake_bytes(addr, strlen(s) + 1), s, strlen(s) + 1);
}

int fake_code_writes(void)
{
	return code_writes;
}

int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)pid;
	uint8_t *r = in_region(addr, len);
	if (r) {
		memcpy(buf, r, len);
		return 0;
	}
	if (!inside(addr, len))
		return -EFAULT;
	memcpy(buf, &memory[addr - FAKE_MEM], len);
	return 0;
}

int mem_readv(pid_t pid, const struct mem_range *r, int n)
{
	for (int i = 0; i < n; i++) {
		int err = mem_read(pid, r[i].addr, r[i].buf, r[i].len);
		if (err < 0)
			return err;
	}
	return 0;
}

int mem_readv_any(const struct tracee *p, const struct mem_range *r, int n)
{
	(void)p;
	return mem_readv(0, r, n);
}

int mem_read_any(const struct tracee *p, uint64_t addr, void *buf, size_t len)
{
	(void)p;
	return mem_read(0, addr, buf, len);
}

int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	(void)pid;
	uint8_t *r = in_region(addr, len);
	if (r) {
		memcpy(r, buf, len);
		return 0;
	}
	if (!inside(addr, len))
		return -EFAULT;
	memcpy(&memory[addr - FAKE_MEM], buf, len);
	return 0;
}

int mem_write_code(const struct tracee *p, uint64_t addr, const void *buf, size_t len)
{
	code_writes++;
	return mem_write(0, addr, buf, len);
}

int mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	(void)pid;
	if (!inside(addr, 1) || !size)
		return -EFAULT;
	size_t n = FAKE_MEM_SIZE - (addr - FAKE_MEM);
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size), (const char *)&memory[addr - FAKE_MEM]);
	return 0;
}

static void say(const char *what, const char *fmt, va_list ap)
{
	printf("# %s: ", what);
	vprintf(fmt, ap);
	putchar('\n');
}

void log_debug(const char *fmt, ...)
{
	(void)fmt;
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("info", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("warning", fmt, ap);
	va_end(ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("error", fmt, ap);
	va_end(ap);
}
