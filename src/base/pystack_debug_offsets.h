/* pystack_debug_offsets.h — the layout of _Py_DebugOffsets, the table of offsets CPython 3.13 and
 * later keep at the start of _PyRuntime for out-of-process debuggers and profilers (py-spy,
 * austin; pystack_debug.c reads it). The table's values follow the running interpreter (its
 * patch release, its build options); the table's own layout changes between minor versions,
 * so there is one struct per minor version here, transcribed from CPython's published
 * definition: Include/internal/pycore_runtime.h in 3.13 (v3.13.0), pycore_debug_offsets.h in
 * 3.14 (v3.14.0). Every member is a uint64_t, an offset or a size in bytes. Only the leading
 * part that gputop reads is given where more follows. A new minor version is one more struct
 * and one more row of py_debug_rows (pystack_debug.c). */
#ifndef GPUTOP_PYSTACK_DEBUG_OFFSETS_H
#define GPUTOP_PYSTACK_DEBUG_OFFSETS_H

#include <stdint.h>

#define PY_DEBUG_COOKIE "xdebugpy"	/* the first 8 bytes of _PyRuntime, no NUL */

/* CPython 3.13 (584 bytes: _PyRuntime.interpreters.head follows at 632, the offset
 * pystack_layouts.h measured with 3.13.0's own headers). */
struct py_debug_313 {
	char cookie[8];
	uint64_t version;		/* PY_VERSION_HEX */
	uint64_t free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			 ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			 gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			 datastack_chunk, status;
	} thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			 localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};
_Static_assert(sizeof(struct py_debug_313) == 584, "_Py_DebugOffsets of CPython 3.13 is 584 bytes");

/* CPython 3.14: the interpreter's threads.main, code_object_generation and tlbc_generation;
 * the frame's stackpointer and tlbc_index; the code's co_tlbc; a set_object before dict_object;
 * after gc (not read here): gen_object, llist_node, debugger_support. */
struct py_debug_314 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict,
			 builtins, ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			 gil_runtime_state_locked, gil_runtime_state_holder, code_object_generation,
			 tlbc_generation;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			 datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer,
			 tlbc_index;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			 localsplusnames, localspluskinds, co_code_adaptive, co_tlbc;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, used, table, mask; } set_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};
_Static_assert(sizeof(struct py_debug_314) == 664, "the part of 3.14's _Py_DebugOffsets read: 83 words");

#endif
