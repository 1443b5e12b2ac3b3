/* pystack_debug.h — a CPython 3.13+ process's own description of its structures: the
 * _Py_DebugOffsets table at the start of _PyRuntime (pystack_debug_offsets.h), turned into the
 * py_layout that pystack.c walks frames with. Memory reads only. */
#ifndef GPUTOP_PYSTACK_DEBUG_H
#define GPUTOP_PYSTACK_DEBUG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pystack_layouts.h"

/* Reads the table at runtime (the address of _PyRuntime) in tid's process into *L, its minor
 * version into L->version. Returns 1 when it did; 0 when _PyRuntime does not begin with the
 * cookie (CPython before 3.13: the tables of pystack_layouts.h); -1 when it does but the table
 * cannot be used (a minor version whose table layout gputop does not know, a free-threaded
 * build, offsets out of reason), with why in why ("CPython 3.15's ..."). */
int pystack_debug_layout(pid_t tid, uint64_t runtime, struct py_layout *L, char *why, size_t why_len);

#endif
