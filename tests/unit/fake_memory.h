/* fake_memory.h — a traced process's memory without a process, for the unit tests that drive
 * the engine and the probe layer (test_account.c, test_trap.c, test_probes.c): FAKE_MEM_SIZE
 * bytes from FAKE_MEM that mem_read, mem_write and mem_write_code read and write (elsewhere
 * they fail with -EFAULT), gputop's log as "# ..." lines, and its config. fake_memory.c defines
 * those functions of base/ (memory.h, log.h, config.h) and nothing else. */
#ifndef GPUTOP_FAKE_MEMORY_H
#define GPUTOP_FAKE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The fake memory: FAKE_MEM_SIZE bytes from FAKE_MEM; reads and writes elsewhere fail. */
#define FAKE_MEM 0x7ff000000000ull
#define FAKE_MEM_SIZE (64 * 1024)

/* Every byte 0 again. */
void fake_memory_clear(void);
/* Reads and writes of [addr, addr + len) go to buf as well (one such region: the tallies'). */
void fake_memory_region(uint64_t addr, void *buf, size_t len);
/* The 8-byte word at addr of the fake memory (addr inside it; aborts otherwise). */
uint64_t *fake_word(uint64_t addr);
/* The n bytes at addr (inside it; aborts otherwise). */
uint8_t *fake_bytes(uint64_t addr, size_t n);
void fake_put_string(uint64_t addr, const char *s);
/* Writes through mem_write_code since the last fake_memory_clear. */
int fake_code_writes(void);

#endif
