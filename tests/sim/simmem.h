/* simmem.h — SIMULATED CUDA memory for gputop's tests: no GPU is involved anywhere. "Device"
 * memory is anonymous host memory (mmap), so pointers are real and copies work. Shared by the
 * simulated runtime (tests/sim/cudart.c) and the simulated driver (tests/sim/cuda.c); each library
 * gets its own private copy (hidden symbols), so each has its own allocation table. */
#ifndef SIMMEM_H
#define SIMMEM_H

#include <stdbool.h>
#include <stddef.h>

#define SIM_HIDDEN __attribute__((visibility("hidden")))

/* Larger requests fail like an out-of-memory GPU would. */
#define SIMMEM_MAX_BYTES (1ULL << 40)

enum simmem_kind { SIMMEM_DEVICE, SIMMEM_MANAGED, SIMMEM_HOST };

/* Returns the new block (zero-filled), or NULL when bytes is absurd or mmap fails.
 * bytes == 0 also returns NULL (and the callers treat it as success, like CUDA). */
SIM_HIDDEN void *simmem_alloc(size_t bytes, enum simmem_kind kind);
/* 0 on success, -1 when ptr is not a live block of this kind family (host vs device). */
SIM_HIDDEN int simmem_free(void *ptr, int host);

/* Device memory with no address (cuMemCreate's physical pages): counted against
 * SIMCUDA_MEM_LIMIT like an allocation; false when it does not fit. */
SIM_HIDDEN bool simmem_reserve(size_t bytes);
SIM_HIDDEN void simmem_unreserve(size_t bytes);

/* Records the monotonic time a timed operation starts (call first thing in an entry point). */
SIM_HIDDEN double simmem_now(void);
/* SIMCUDA_GBPS: a copy of n bytes that started at t0 lasts at least n / (GBPS * 1e9) s in all
 * (busy-wait, so the time is spent running, as in a driver's spin-wait). No-op when unset. */
SIM_HIDDEN void simmem_transfer_wait(double t0, size_t n);
/* SIMCUDA_SYNC_US: a synchronize call busy-waits that many microseconds. No-op when unset.
 * t0 = the entry's simmem_now() (for SIMCUDA_TIMES). */
SIM_HIDDEN void simmem_sync_wait(double t0);
/* memcpy / memset; copies follow the SIMCUDA_GBPS model (t0 = the entry's simmem_now()). */
SIM_HIDDEN void simmem_copy(double t0, void *dst, const void *src, size_t n);
SIM_HIDDEN void simmem_copy_2d(double t0, void *dst, size_t dpitch, const void *src, size_t spitch,
			       size_t width, size_t height);
SIM_HIDDEN void simmem_set(void *dst, int value, size_t n);

/* SIMCUDA_TIMES=FILE: the library's own account of how long its copies and synchronize calls
 * lasted, each measured inside the call (from the entry's t0 to the end of its wait), for the
 * tests that compare gputop's times with the real ones: on a loaded machine a call preempted
 * in the middle lasts longer, and then both this account and gputop's figure say so. At exit
 * one JSON line is appended to FILE:
 *   {"library":"runtime","pid":P,"H2D":{"calls":C,"bytes":B,"seconds":S},"D2H":{...},
 *    "D2D":{...},"H2H":{...},"sync":{"calls":C,"bytes":0,"seconds":S}}
 * A copy's direction is told from the allocation table (device and managed blocks are the
 * device side, as with unified addressing). Nothing is measured or written when unset. */
/* Whether p lies in a device or managed block (interior pointers too). */
SIM_HIDDEN int simmem_on_device(const void *p);
SIM_HIDDEN extern const char simmem_library[];	/* "runtime" or "driver" */

/* SIMNVML_DIR: device bytes allocated (delta > 0) or freed, for the SIMULATED NVML
 * (simnvml_account.c). No-op when unset. */
SIM_HIDDEN void simnvml_account(long long delta);

/* A stable, unique, never-freed handle per (space, key), for kernel handles. In space
 * SIM_KEY_ADDR keys are compared as addresses; in the others as strings (copied), so that the
 * driver can give a CUkernel and a CUfunction of the same name different handles. */
enum { SIM_KEY_ADDR, SIM_KEY_NAME, SIM_KEY_NAME2 };
SIM_HIDDEN void *simmem_handle(const void *key, int space);
/* The key a handle was made from, or NULL if p is not one of our handles. */
SIM_HIDDEN const void *simmem_handle_key(const void *p);
/* The handle p (of a string space) now stands for key (copied): what a driver may do with an
 * address freed by a module's unload. 0, or -1 if p is not such a handle. */
SIM_HIDDEN int simmem_handle_rename(const void *p, const char *key);

#endif
