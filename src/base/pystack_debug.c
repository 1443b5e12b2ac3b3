/* pystack_debug.c — _Py_DebugOffsets into a py_layout (pystack_debug.h). Which struct the table
 * is comes from its own version word; every offset is then checked to be within the structure
 * whose size the table gives, so a layout transcribed wrong, or a version gputop does not know,
 * gives no Python frames rather than wrong ones. */
#include "pystack_debug.h"
#include "pystack_debug_offsets.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "memory.h"

/* Where the fields gputop needs sit in one minor version's table (byte offsets into it). */
struct py_debug_row {
	int minor;
	size_t size;
	size_t free_threaded, runtime_size, interpreters_head;
	size_t interp_size, interp_next, interp_threads_head;
	size_t tstate_size, tstate_next, tstate_interp, tstate_current_frame, tstate_thread_id,
	       tstate_native_thread_id;
	size_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
	size_t code_size, code_filename, code_name, code_qualname, code_linetable, code_firstlineno,
	       code_adaptive;
	size_t object_size, object_type;
	size_t bytes_size, bytes_ob_size, bytes_sval;
	size_t unicode_size, unicode_state, unicode_length, unicode_ascii_size;
};

#define PY_DEBUG_ROW(MINOR, T) { \
	.minor = MINOR, .size = sizeof(T), .free_threaded = offsetof(T, free_threaded), \
	.runtime_size = offsetof(T, runtime_state.size), \
	.interpreters_head = offsetof(T, runtime_state.interpreters_head), \
	.interp_size = offsetof(T, interpreter_state.size), .interp_next = offsetof(T, interpreter_state.next), \
	.interp_threads_head = offsetof(T, interpreter_state.threads_head), \
	.tstate_size = offsetof(T, thread_state.size), .tstate_next = offsetof(T, thread_state.next), \
	.tstate_interp = offsetof(T, thread_state.interp), \
	.tstate_current_frame = offsetof(T, thread_state.current_frame), \
	.tstate_thread_id = offsetof(T, thread_state.thread_id), \
	.tstate_native_thread_id = offsetof(T, thread_state.native_thread_id), \
	.frame_size = offsetof(T, interpreter_frame.size), .frame_previous = offsetof(T, interpreter_frame.previous), \
	.frame_executable = offsetof(T, interpreter_frame.executable), \
	.frame_instr_ptr = offsetof(T, interpreter_frame.instr_ptr), .frame_owner = offsetof(T, interpreter_frame.owner), \
	.code_size = offsetof(T, code_object.size), .code_filename = offsetof(T, code_object.filename), \
	.code_name = offsetof(T, code_object.name), .code_qualname = offsetof(T, code_object.qualname), \
	.code_linetable = offsetof(T, code_object.linetable), .code_firstlineno = offsetof(T, code_object.firstlineno), \
	.code_adaptive = offsetof(T, code_object.co_code_adaptive), \
	.object_size = offsetof(T, pyobject.size), .object_type = offsetof(T, pyobject.ob_type), \
	.bytes_size = offsetof(T, bytes_object.size), .bytes_ob_size = offsetof(T, bytes_object.ob_size), \
	.bytes_sval = offsetof(T, bytes_object.ob_sval), \
	.unicode_size = offsetof(T, unicode_object.size), .unicode_state = offsetof(T, unicode_object.state), \
	.unicode_length = offsetof(T, unicode_object.length), \
	.unicode_ascii_size = offsetof(T, unicode_object.asciiobject_size), \
}

static const struct py_debug_row py_debug_rows[] = {
	PY_DEBUG_ROW(13, struct py_debug_313),
	PY_DEBUG_ROW(14, struct py_debug_314),
};

enum { PY_DEBUG_MAX = sizeof(struct py_debug_314) > sizeof(struct py_debug_313) ? sizeof(struct py_debug_314)
										      : sizeof(struct py_debug_313) };

static uint64_t word(const unsigned char *table, size_t at)
{
	uint64_t v;
	memcpy(&v, table + at, sizeof v);
	return v;
}

/* An offset of a field of size bytes into a structure of struct_size bytes, as an int; -1
 * (and *bad set) when it does not fit. */
static int within(uint64_t offset, unsigned size, uint64_t struct_size, bool *bad)
{
	if (struct_size > (1u << 20) || offset + size > struct_size) {
		*bad = true;
		return -1;
	}
	return (int)offset;
}

int pystack_debug_layout(pid_t tid, uint64_t runtime, struct py_layout *L, char *why, size_t why_len)
{
	unsigned char t[PY_DEBUG_MAX];
	if (mem_read(tid, runtime, t, 16) < 0 || memcmp(t, PY_DEBUG_COOKIE, 8) != 0)
		return 0;
	uint64_t version = word(t, 8);
	int minor = (int)((version >> 16) & 0xff);
	const struct py_debug_row *r = NULL;
	for (size_t i = 0; i < sizeof py_debug_rows / sizeof py_debug_rows[0]; i++)
		if ((version >> 24) == 3 && py_debug_rows[i].minor == minor)
			r = &py_debug_rows[i];
	if (!r) {
		snprintf(why, why_len, "the _Py_DebugOffsets of CPython %d.%d are not a layout gputop knows "
			 "(3.13, 3.14)", (int)(version >> 24), minor);
		return -1;
	}
	if (mem_read(tid, runtime, t, r->size) < 0) {
		snprintf(why, why_len, "the _Py_DebugOffsets of CPython 3.%d cannot be read", minor);
		return -1;
	}
	if (word(t, r->free_threaded)) {
		snprintf(why, why_len, "free-threaded CPython 3.%d is not an interpreter gputop can read", minor);
		return -1;
	}
	bool bad = false;
	uint64_t rt = word(t, r->runtime_size), in = word(t, r->interp_size), ts = word(t, r->tstate_size),
		 fr = word(t, r->frame_size), co = word(t, r->code_size), ob = word(t, r->object_size),
		 by = word(t, r->bytes_size), un = word(t, r->unicode_size);
	int ascii = within(word(t, r->unicode_ascii_size), 0, un, &bad);
	*L = (struct py_layout){
		.version = minor,
		.runtime_interp_head = within(word(t, r->interpreters_head), 8, rt, &bad),
		.interp_next = within(word(t, r->interp_next), 8, in, &bad),
		.interp_threads_head = within(word(t, r->interp_threads_head), 8, in, &bad),
		.tstate_next = within(word(t, r->tstate_next), 8, ts, &bad),
		.tstate_interp = within(word(t, r->tstate_interp), 8, ts, &bad),
		.tstate_thread_id = within(word(t, r->tstate_thread_id), 8, ts, &bad),
		.tstate_native_thread_id = within(word(t, r->tstate_native_thread_id), 8, ts, &bad),
		.tstate_frame = within(word(t, r->tstate_current_frame), 8, ts, &bad),
		.cframe_frame = -1,
		.frame_code = within(word(t, r->frame_executable), 8, fr, &bad),
		.frame_previous = within(word(t, r->frame_previous), 8, fr, &bad),
		.frame_instr = within(word(t, r->frame_instr_ptr), 8, fr, &bad),
		.frame_owner = within(word(t, r->frame_owner), 1, fr, &bad),
		.frame_is_entry = -1,
		.code_filename = within(word(t, r->code_filename), 8, co, &bad),
		.code_name = within(word(t, r->code_name), 8, co, &bad),
		.code_qualname = within(word(t, r->code_qualname), 8, co, &bad),
		.code_firstlineno = within(word(t, r->code_firstlineno), 4, co, &bad),
		.code_linetable = within(word(t, r->code_linetable), 8, co, &bad),
		.code_bytes = within(word(t, r->code_adaptive), 0, co, &bad),
		.bytes_data = within(word(t, r->bytes_sval), 0, by, &bad),
		.var_size = within(word(t, r->bytes_ob_size), 8, by, &bad),
		.unicode_state = within(word(t, r->unicode_state), 4, un, &bad),
		.unicode_length = within(word(t, r->unicode_length), 8, un, &bad),
		.ascii_size = ascii,
		/* Not in the table: PyCompactUnicodeObject is PyASCIIObject and two words (utf8_length,
		 * utf8) in 3.12 to 3.14; _co_firsttraceable is the int two words before the code (then
		 * co_extra) in 3.12 to 3.14's default builds. pystack.c checks what it reads there. */
		.compact_size = ascii >= 0 ? ascii + 16 : -1,
		.code_firsttraceable = word(t, r->code_adaptive) >= 16 ? (int)word(t, r->code_adaptive) - 16 : -1,
		.ob_type = within(word(t, r->object_type), 8, ob, &bad),
		.stackref = minor >= 14,
	};
	if (bad) {
		snprintf(why, why_len, "the _Py_DebugOffsets of CPython 3.%d do not look as gputop expects", minor);
		return -1;
	}
	return 1;
}
