/* pystack_layouts.h — where CPython keeps what pystack.c reads, on x86-64. From 3.13 on, the
 * interpreter says so itself (_Py_DebugOffsets, read by pystack_debug.c into a struct
 * py_layout); before 3.13, one row per minor version here, each printed by a program compiled
 * against that version's own headers (Include/internal, Py_BUILD_CORE; CPython 3.10.13, 3.11.7,
 * 3.12.1, and Debian's 3.11.2 agrees with 3.11.7) with offsetof. -1: the field does not exist
 * in that version. */
#ifndef GPUTOP_PYSTACK_LAYOUTS_H
#define GPUTOP_PYSTACK_LAYOUTS_H

#include <stdbool.h>

struct py_layout {
	int version;			/* minor version: 10 = 3.10 */
	int runtime_interp_head;	/* _PyRuntime.interpreters.head */
	int interp_next, interp_threads_head;
	int tstate_next, tstate_interp, tstate_thread_id, tstate_native_thread_id;
	int tstate_frame;		/* 3.10: frame; 3.11, 3.12: cframe; 3.13: current_frame */
	int cframe_frame;		/* _PyCFrame.current_frame (3.11, 3.12) */
	int frame_code, frame_previous;
	int frame_instr;		/* 3.10: f_lasti (int); 3.11, 3.12: prev_instr; 3.13: instr_ptr */
	int frame_owner, frame_is_entry;
	int code_filename, code_name, code_qualname, code_firstlineno, code_linetable;
	int code_bytes;			/* 3.10: co_code (a bytes object); later: the code itself */
	int code_firsttraceable;
	int bytes_data, var_size, unicode_state, ascii_size, compact_size;
	int unicode_length;		/* PyASCIIObject.length */
	int ob_type;			/* PyObject.ob_type */
	bool stackref;			/* 3.14+: the frame's executable is a _PyStackRef (low bits
					 * are tags) */
};

#define PY_OWNED_BY_GENERATOR 1
#define PY_OWNED_BY_CSTACK 3	/* 3.12, 3.13 (FRAME_OWNED_BY_CSTACK) and 3.14
				 * (FRAME_OWNED_BY_INTERPRETER): the shim frame where a call of the
				 * eval loop begins */

static const struct py_layout py_layouts[] = {
	{ .version = 10, .runtime_interp_head = 32, .interp_next = 0, .interp_threads_head = 8,
	  .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 176, .tstate_native_thread_id = -1,
	  .tstate_frame = 24, .cframe_frame = -1,
	  .frame_code = 32, .frame_previous = 24, .frame_instr = 96, .frame_owner = -1, .frame_is_entry = -1,
	  .code_filename = 104, .code_name = 112, .code_qualname = -1, .code_firstlineno = 40,
	  .code_linetable = 120, .code_bytes = 48, .code_firsttraceable = -1,
	  .bytes_data = 32, .var_size = 16, .unicode_state = 32, .ascii_size = 48, .compact_size = 72,
	  .unicode_length = 16, .ob_type = 8 },
	{ .version = 11, .runtime_interp_head = 40, .interp_next = 0, .interp_threads_head = 16,
	  .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
	  .tstate_frame = 56, .cframe_frame = 8,
	  .frame_code = 32, .frame_previous = 48, .frame_instr = 56, .frame_owner = 69, .frame_is_entry = 68,
	  .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 72,
	  .code_linetable = 136, .code_bytes = 184, .code_firsttraceable = 168,
	  .bytes_data = 32, .var_size = 16, .unicode_state = 32, .ascii_size = 48, .compact_size = 72,
	  .unicode_length = 16, .ob_type = 8 },
	{ .version = 12, .runtime_interp_head = 40, .interp_next = 0, .interp_threads_head = 72,
	  .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 136, .tstate_native_thread_id = 144,
	  .tstate_frame = 56, .cframe_frame = 0,
	  .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70, .frame_is_entry = -1,
	  .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 68,
	  .code_linetable = 136, .code_bytes = 192, .code_firsttraceable = 176,
	  .bytes_data = 32, .var_size = 16, .unicode_state = 32, .ascii_size = 40, .compact_size = 56,
	  .unicode_length = 16, .ob_type = 8 },
};

#endif
