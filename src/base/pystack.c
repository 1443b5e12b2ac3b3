/* pystack.c — CPython frames from the process's memory (pystack.h). The layout: the process's
 * own _Py_DebugOffsets from 3.13 on (pystack_debug.c), a table before (pystack_layouts.h).
 * Every pointer read is checked before it is followed where the layout allows: the thread
 * state points back to its interpreter, a code object's type is PyCode_Type, a string's is
 * PyUnicode_Type. A check that fails means the layout is not the one this file was given: no
 * Python frames then, said once. */
#define _GNU_SOURCE
#include "pystack.h"
#include "pystack_debug.h"
#include "pystack_layouts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "memory.h"
#include "symbols.h"
#include "threads.h"
#include "tracee.h"

enum { MAX_INTERPRETERS = 64, MAX_THREADS = 4096, MAX_TABLE = 1 << 16 };

/* The process's part (p->pystack): what was found of its interpreter. */
struct pystack_state {
	bool looked;
	const struct py_layout *L;	/* &layout once the interpreter is known */
	struct py_layout layout;
	uint64_t runtime, code_type, unicode_type;
	const char *module;		/* its module's file name (interned by symbols.c) */
};

struct pystack_state *pystack_state_new(void)
{
	return calloc(1, sizeof(struct pystack_state));
}

void pystack_state_free(struct pystack_state *st)
{
	free(st);
}

void pystack_forget(struct tracee *p)
{
	*p->pystack = (struct pystack_state){ 0 };
}

bool pystack_is_eval_function(const char *name)
{
	return strcmp(name, "_PyEval_EvalFrameDefault") == 0;
}

/* Says once why Python frames are left out. */
static void say_once(const char *fmt, const char *arg)
{
	if (!log_first("pystack: Python frames left out"))	/* once for all processes */
		return;
	char msg[256];
	snprintf(msg, sizeof msg, fmt, arg);
	log_warn("%s: call stacks show native frames only", msg);
}

static bool is_interpreter(const char *base, int *minor)
{
	return sscanf(base, "libpython3.%d", minor) == 1 || sscanf(base, "python3.%d", minor) == 1;
}

static void find_interpreter(const struct tracee *p, pid_t tid)
{
	struct pystack_state *py = p->pystack;
	size_t cursor = 0;
	const struct module *m;
	py->looked = true;
	py->L = NULL;
	while ((m = sym_module_next(p, &cursor))) {
		int minor = 0;
		uint64_t runtime;
		if (!is_interpreter(m->base, &minor) || !(runtime = sym_find(m, "_PyRuntime")))
			continue;
		/* Py_Version (3.11+) is the running version, whatever the file is called. */
		uint64_t at = sym_find(m, "Py_Version"), version = 0;
		if (at && mem_read(tid, at, &version, sizeof version) == 0 && (version >> 24) == 3)
			minor = (int)((version >> 16) & 0xff);
		/* 3.13+: the interpreter's own table of offsets, found by its cookie; before: ours. */
		char why[160];
		int found = pystack_debug_layout(tid, runtime, &py->layout, why, sizeof why);
		const char *from = "its _Py_DebugOffsets";
		if (found < 0) {
			say_once("%s", why);
			return;
		}
		for (size_t i = 0; !found && i < sizeof py_layouts / sizeof py_layouts[0]; i++)
			if (py_layouts[i].version == minor) {
				py->layout = py_layouts[i];
				from = "gputop's table";
				found = 1;
			}
		if (!found) {
			char v[16];
			snprintf(v, sizeof v, "3.%d", minor);
			say_once(minor >= 13 ? "CPython %s has no _Py_DebugOffsets gputop can find"
					     : "CPython %s is not a version gputop can read (3.10 or later)", v);
			return;
		}
		py->L = &py->layout;
		log_debug("CPython 3.%d in %s: offsets from %s", py->layout.version, m->base, from);
		py->runtime = runtime;
		py->code_type = sym_find(m, "PyCode_Type");
		py->unicode_type = sym_find(m, "PyUnicode_Type");
		py->module = m->base;
		return;
	}
}

static uint64_t read_ptr(pid_t tid, uint64_t addr)
{
	uint64_t v = 0;
	if (!addr || mem_read(tid, addr, &v, sizeof v) < 0)
		return 0;
	return v;
}

static bool has_type(const struct pystack_state *py, pid_t tid, uint64_t obj, uint64_t type)
{
	return obj && type && read_ptr(tid, obj + (uint64_t)py->L->ob_type) == type;
}

/* The thread state of the thread tid: by its native id (3.11+), gettid() in the program, its
 * own PID namespace's id own; before 3.11 by pthread_self() == tp. */
static uint64_t thread_state(const struct pystack_state *py, pid_t tid, pid_t own, uint64_t tp)
{
	const struct py_layout *L = py->L;
	uint64_t interp = read_ptr(tid, py->runtime + L->runtime_interp_head);
	for (int i = 0; interp && i < MAX_INTERPRETERS; i++, interp = read_ptr(tid, interp + L->interp_next)) {
		uint64_t ts = read_ptr(tid, interp + L->interp_threads_head);
		for (int k = 0; ts && k < MAX_THREADS; k++, ts = read_ptr(tid, ts + L->tstate_next)) {
			if (read_ptr(tid, ts + L->tstate_interp) != interp) {
				say_once("the CPython %s thread states do not look as gputop expects", "3.x");
				return 0;
			}
			uint64_t id = read_ptr(tid, ts + (L->tstate_native_thread_id >= 0 ? L->tstate_native_thread_id
										       : L->tstate_thread_id));
			if (L->tstate_native_thread_id >= 0 ? id == (uint64_t)own : id == tp)
				return ts;
		}
	}
	return 0;
}

static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	for (int shift = 0; *p < end; shift += 6) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64) || shift > 56)
			break;
	}
	return v;
}

static int64_t svarint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = varint(p, end);
	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* 3.11+: the location table (Objects/locations.md), unit = the code unit index. */
static int line_311(const uint8_t *p, const uint8_t *end, int line, int64_t unit)
{
	for (int64_t at = 0; p < end;) {
		uint8_t b = *p++;
		if (!(b & 0x80))
			return 0;
		int code = (b >> 3) & 15, len = (b & 7) + 1, here = line;
		if (code == 15) {
			here = 0;	/* no location */
		} else if (code == 14) {
			line += (int)svarint(&p, end);
			varint(&p, end), varint(&p, end), varint(&p, end);
			here = line;
		} else if (code == 13) {
			line += (int)svarint(&p, end);
			here = line;
		} else if (code >= 10) {
			line += code - 10;
			p += 2;
			here = line;
		} else {
			p++;
		}
		if (unit < at + len)
			return here > 0 ? here : 0;
		at += len;
	}
	return 0;
}

/* 3.10: (byte delta, signed line delta) pairs (Objects/lnotab_notes.txt), addr in bytes. */
static int line_310(const uint8_t *p, const uint8_t *end, int line, int64_t addr)
{
	for (int64_t start = 0, stop = 0; p + 1 < end; p += 2) {
		int ldelta = (int8_t)p[1];
		start = stop;
		stop = start + p[0];
		if (ldelta == -128)
			continue;
		line += ldelta;
		if (addr >= start && addr < stop)
			return line;
	}
	return 0;
}

static uint32_t line_of(const struct pystack_state *py, pid_t tid, uint64_t code, int64_t unit)
{
	const struct py_layout *L = py->L;
	int32_t first = 0;
	uint64_t table = read_ptr(tid, code + L->code_linetable), size = 0;
	if (unit < 0 || !table || mem_read(tid, code + L->code_firstlineno, &first, sizeof first) < 0 ||
	    mem_read(tid, table + L->var_size, &size, sizeof size) < 0 || size > MAX_TABLE)
		return 0;
	uint8_t *buf = malloc(size + 1);
	int line = 0;
	if (buf && mem_read(tid, table + L->bytes_data, buf, size) == 0)
		line = L->version == 10 ? line_310(buf, buf + size, first, unit * 2)
					: line_311(buf, buf + size, first, unit);
	free(buf);
	return line > 0 ? (uint32_t)line : 0;
}

/* The frame's code object and its instruction, as a code unit index (-1 if not started). */
static bool frame_code(const struct pystack_state *py, pid_t tid, uint64_t frame, uint64_t *code, int64_t *unit)
{
	const struct py_layout *L = py->L;
	*code = read_ptr(tid, frame + L->frame_code);
	if (L->stackref)
		*code &= ~(uint64_t)3;	/* a _PyStackRef's tag bits (Py_TAG_BITS) */
	if (!has_type(py, tid, *code, py->code_type))
		return false;
	if (L->version == 10) {
		int32_t lasti = -1;
		mem_read(tid, frame + L->frame_instr, &lasti, sizeof lasti);
		*unit = lasti;
		return true;
	}
	uint64_t instr = read_ptr(tid, frame + L->frame_instr), start = *code + (uint64_t)L->code_bytes;
	*unit = instr >= start ? (int64_t)(instr - start) / 2 : -1;
	return true;
}

int pystack_read(const struct tracee *p, struct thread *t, struct py_frame *out, int max)
{
	struct pystack_state *py = p->pystack;
	pid_t tid = t->tid;
	if (!py->looked)
		find_interpreter(p, tid);
	if (!py->L || !py->code_type || max <= 0)
		return 0;
	const struct py_layout *L = py->L;
	uint64_t ts = thread_state(py, tid, threads_own_tid(p, t), t->thread_pointer);
	uint64_t frame = read_ptr(tid, ts + L->tstate_frame);
	if (L->cframe_frame >= 0)
		frame = read_ptr(tid, frame + L->cframe_frame);
	int n = 0;
	for (int guard = 0; frame && n < max && guard < 4096; guard++, frame = read_ptr(tid, frame + L->frame_previous)) {
		uint8_t owner = 0, is_entry = 1;
		if (L->frame_owner >= 0)
			mem_read(tid, frame + L->frame_owner, &owner, 1);
		if (owner == PY_OWNED_BY_CSTACK && L->version >= 12) {
			if (n)	/* the frame before a shim began a call of the eval loop */
				out[n - 1].entry = true;
			continue;
		}
		uint64_t code;
		int64_t unit;
		if (!frame_code(py, tid, frame, &code, &unit)) {
			if (L->version < 13)	/* 3.13 keeps other executables there too */
				say_once("the CPython %s frames do not look as gputop expects", "3.x");
			if (L->version < 13)
				return 0;
			continue;
		}
		int32_t first_unit = 0;
		if (L->code_firsttraceable >= 0 && owner != PY_OWNED_BY_GENERATOR &&
		    mem_read(tid, code + L->code_firsttraceable, &first_unit, sizeof first_unit) == 0 &&
		    first_unit < MAX_TABLE && unit < first_unit)
			continue;	/* not started yet: no line of its own */
		if (L->frame_is_entry >= 0)
			mem_read(tid, frame + L->frame_is_entry, &is_entry, 1);
		out[n] = (struct py_frame){ .code = code, .line = line_of(py, tid, code, unit),
					    .entry = L->version == 10 || (L->frame_is_entry >= 0 && is_entry) };
		n++;
	}
	return n;
}

/* A str object as UTF-8 into buf (size n); "?" where it cannot be read. */
static void read_str(const struct pystack_state *py, pid_t tid, uint64_t obj, char *buf, size_t n)
{
	const struct py_layout *L = py->L;
	uint32_t state = 0;
	int64_t len = 0;
	snprintf(buf, n, "?");
	if (!has_type(py, tid, obj, py->unicode_type) || mem_read(tid, obj + L->unicode_state, &state, sizeof state) < 0 ||
	    mem_read(tid, obj + (uint64_t)L->unicode_length, &len, sizeof len) < 0 || len < 0)
		return;
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return;
	size_t chars = (size_t)len < n / 4 ? (size_t)len : n / 4 - 1;
	uint8_t raw[4 * 1024];
	if (chars * kind > sizeof raw || mem_read(tid, obj + (uint64_t)(ascii ? L->ascii_size : L->compact_size), raw, chars * kind) < 0)
		return;
	size_t k = 0;
	for (size_t i = 0; i < chars; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
		if (c < 0x80) {
			buf[k++] = (char)c;
		} else if (c < 0x800) {
			buf[k++] = (char)(0xc0 | c >> 6), buf[k++] = (char)(0x80 | (c & 63));
		} else if (c < 0x10000) {
			buf[k++] = (char)(0xe0 | c >> 12), buf[k++] = (char)(0x80 | ((c >> 6) & 63));
			buf[k++] = (char)(0x80 | (c & 63));
		} else {
			buf[k++] = (char)(0xf0 | c >> 18), buf[k++] = (char)(0x80 | ((c >> 12) & 63));
			buf[k++] = (char)(0x80 | ((c >> 6) & 63)), buf[k++] = (char)(0x80 | (c & 63));
		}
	}
	buf[k] = 0;
}

int pystack_describe(const struct tracee *p, pid_t tid, struct py_frame *f)
{
	struct pystack_state *py = p->pystack;
	const struct py_layout *L = py->L;
	if (!L)
		return -1;
	f->module = py->module;
	read_str(py, tid, read_ptr(tid, f->code + (uint64_t)(L->code_qualname >= 0 ? L->code_qualname : L->code_name)),
		 f->function, sizeof f->function);
	read_str(py, tid, read_ptr(tid, f->code + L->code_filename), f->file, sizeof f->file);
	return 0;
}
