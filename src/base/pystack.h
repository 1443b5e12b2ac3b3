/* pystack.h — the Python frames of a thread of a CPython process, read from its memory as
 * py-spy does: _PyRuntime found through the interpreter's symbols (libpython3.X.so or a
 * python3.X executable), the thread state by native thread id, then the frame chain and each
 * frame's code object (file, qualified name, line from the line table). Where things are: from
 * CPython 3.13 on, the interpreter's own _Py_DebugOffsets (pystack_debug.c: the table's layout
 * known for 3.13 and 3.14); CPython 3.10, 3.11 and 3.12 from offsets taken from each version's
 * own headers (pystack_layouts.h); x86-64. Any other version, or memory that does not look like
 * the layout says (type pointers are checked), gives no Python frames and says so once. Memory
 * reads only. */
#ifndef GPUTOP_PYSTACK_H
#define GPUTOP_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracee;
struct thread;

struct py_frame {
	uint64_t code;		/* the code object's address */
	uint32_t line;		/* 0 where unknown */
	bool entry;		/* the first frame its call of the eval loop ran: frames further
				 * out belong to an outer native frame of the eval loop */
	/* Set by pystack_describe: */
	const char *module;	/* the interpreter's module (libpython3.11.so.1.0, python3.11) */
	char function[160];	/* the code object's qualified name (3.11+) or name */
	char file[320];
};

/* Up to max Python frames of the stopped thread t of the traced process, innermost first,
 * with code and line only; 0 when it runs no Python code or the interpreter is not one gputop
 * can read. */
int pystack_read(const struct tracee *p, struct thread *t, struct py_frame *out, int max);
/* Names a frame of pystack_read: function, file, module. 0, or -1 when unreadable. */
int pystack_describe(const struct tracee *p, pid_t tid, struct py_frame *f);

/* Whether a native function (symbol name) is the eval loop, where Python frames run. */
bool pystack_is_eval_function(const char *name);

/* The process's part (base/tracee.h), made and freed with it. */
struct pystack_state *pystack_state_new(void);
void pystack_state_free(struct pystack_state *st);
/* Looks for the interpreter again (a new process image). */
void pystack_forget(struct tracee *p);

#endif
