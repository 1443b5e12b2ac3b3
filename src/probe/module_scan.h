/* module_scan.h — what a module's symbol table holds for gputop: the functions of the API table,
 * the static `__handle` variables of the kernels nvcc built into it (their names demangled), and
 * the few functions gputop calls or watches (cuFuncGetName, the graph queries, execve). Walked
 * once per file for the whole session, whichever process loads it (the ranks of a job load the
 * same libraries: the first pays), and without stopping the program when done before an attach
 * (probes_prepare). Only modules that can hold any of it are walked (may_hold_cuda in the .c).
 * Offsets are from the module's start (struct module), the same in every process. */
#ifndef GPUTOP_MODULE_SCAN_H
#define GPUTOP_MODULE_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "graph_query.h"
#include "torch_alloc.h"

struct module;

struct scan_func {
	uint64_t off, size;
	int api;		/* the API table's row */
};

struct scan_handle {
	uint64_t off;
	const char *name;	/* the kernel's name, demangled */
};

enum scan_fn { SCAN_FUNC_GET_NAME, SCAN_KERNEL_GET_NAME, SCAN_EXECVE, SCAN_EXECVEAT, SCAN_FN_COUNT };

struct module_scan {
	struct scan_func *funcs;
	size_t n_funcs;
	struct scan_handle *handles;
	size_t n_handles;
	uint64_t fn[SCAN_FN_COUNT];	/* offset + 1; 0: not in this module */
	uint64_t graph_fn[GQ_FN_COUNT];	/* offset + 1 */
	uint64_t torch_sym[TORCH_SYM_COUNT];	/* PyTorch's allocator's data: offset + 1 */
};

/* The scan of m: from the session's cache (a file with the same build id, or the same path and
 * size where it has none) or walked now, then kept. Never NULL (out of memory: an empty one).
 * Not thread-safe: the tracer thread's. */
const struct module_scan *module_scan(const struct module *m);

/* The address of a scanned offset in m (off as stored: + 1), 0 for none. */
uint64_t module_scan_addr(const struct module *m, uint64_t off_plus_1);

#endif
