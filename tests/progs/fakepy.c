/* fakepy.c — a stand-in for libpython3.X.so.1.0 of CPython 3.13 and later, for
 * tests/e2e/stacks_python_debug_offsets.sh: what gputop's Python stack reader looks at and
 * nothing else. _PyRuntime begins with a _Py_DebugOffsets table (CPython's published layout
 * for FAKE_MINOR, written here word by word, apart from gputop's own transcription in
 * src/base/pystack_debug_offsets.h) that describes this file's own structures, laid out unlike
 * CPython's (ob_type at 16, not 8...), so that frames come out right only if the reader takes
 * every offset from the table. One thread state, whose native id is the caller's, runs two
 * Python frames, grow (train.py:42) called from <module> (train.py:7), in one call of
 * _PyEval_EvalFrameDefault, which calls back into the program (a cudaMalloc). On top of
 * them, as CPython 3.14 has them, a frame that is no Python code (owner FRAME_OWNED_BY_CSTACK
 * there) and a frame not started yet (before _co_firsttraceable); below them, the entry shim.
 * Built with FAKE_MINOR = 13, 14 or 15 (a version whose table gputop does not know), and
 * FAKE_FREE_THREADED = 1 (a free-threaded build, which gputop refuses). */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_MINOR
#define FAKE_MINOR 14
#endif
#ifndef FAKE_FREE_THREADED
#define FAKE_FREE_THREADED 0
#endif

#define EXPORT __attribute__((visibility("default")))
#define OFF(type, field) ((uint64_t)__builtin_offsetof(type, field))

struct fake_type { uint64_t refcnt, pad; const void *type; char name[32]; };
EXPORT struct fake_type PyCode_Type = { 1, 0, 0, "code" };
EXPORT struct fake_type PyUnicode_Type = { 1, 0, 0, "str" };
static struct fake_type none_type = { 1, 0, 0, "NoneType" };
static struct { uint64_t refcnt, pad; const void *type; } none = { 1, 0, &none_type };

/* ASCII strings: state says compact (bit 5) and ASCII (bit 6), kind 1 (bits 2-4). */
struct fake_str { uint64_t refcnt, pad; const void *type; uint64_t hash; int64_t length; uint32_t state, pad2; char data[32]; };
struct fake_bytes { uint64_t refcnt, pad; const void *type; uint64_t hash; int64_t size; uint8_t sval[16]; };
/* _co_firsttraceable, then co_extra, then the code (gputop assumes this order, as CPython's). */
struct fake_code {
	uint64_t refcnt, pad; const void *type;
	int32_t firstlineno, pad2;
	struct fake_str *qualname, *filename, *name;
	struct fake_bytes *linetable;
	uint64_t pad3[3];
	int32_t firsttraceable, pad4;
	void *extra;
	uint16_t code[16];
};
struct fake_frame {
	uint64_t pad;
	struct fake_frame *previous;
	uint64_t pad2;
	uint64_t executable;	/* a _PyStackRef from 3.14: tag bit 0 set here */
	uint16_t *instr_ptr;
	uint64_t pad3;
	char owner, pad4[7];
};
struct fake_tstate {
	uint64_t pad;
	struct fake_tstate *prev, *next;
	struct fake_interp *interp;
	uint64_t pad2[2];
	uint64_t thread_id, native_thread_id;
	struct fake_frame *current_frame;
};
struct fake_interp { uint64_t pad[5]; struct fake_interp *next; uint64_t pad2; struct fake_tstate *threads_head; };
struct fake_runtime { uint64_t debug[96]; uint64_t pad[3]; struct fake_interp *interpreters_head; };

EXPORT struct fake_runtime _PyRuntime;
EXPORT const unsigned long Py_Version = 0x030000f0ul | ((unsigned long)FAKE_MINOR << 16);

#define STR(s) { 1, 0, &PyUnicode_Type, 0, sizeof(s) - 1, (1u << 2) | (1u << 5) | (1u << 6), 0, s }
static struct fake_str s_file = STR("train.py"), s_grow = STR("grow"), s_module = STR("<module>"),
		       s_init = STR("Model.__init__");
/* 3.11+ line tables: one entry, code 13 (a line delta, no columns) for 8 code units. */
static struct fake_bytes lt_grow = { 1, 0, &PyUnicode_Type, 0, 2, { 0x80 | 13 << 3 | 7, 2 << 1 } };	/* 40 + 2 */
static struct fake_bytes lt_module = { 1, 0, &PyUnicode_Type, 0, 2, { 0x80 | 13 << 3 | 7, 6 << 1 } };	/* 1 + 6 */
static struct fake_code c_grow = { 1, 0, &PyCode_Type, 40, 0, &s_grow, &s_file, &s_grow, &lt_grow, { 0 }, 0, 0, 0, { 0 } };
static struct fake_code c_module = { 1, 0, &PyCode_Type, 1, 0, &s_module, &s_file, &s_module, &lt_module, { 0 }, 0, 0, 0, { 0 } };
static struct fake_code c_init = { 1, 0, &PyCode_Type, 90, 0, &s_init, &s_file, &s_init, &lt_grow, { 0 }, 2, 0, 0, { 0 } };

static struct fake_frame f_shim, f_module, f_grow, f_unstarted, f_cstack;
static struct fake_interp interp;
static struct fake_tstate tstate;

/* The table, word by word: [index] = value, by CPython's struct for the minor version. */
struct word { int i13, i14; uint64_t value; };

static void fill_table(uint64_t *d)
{
	const struct word words[] = {
		{ 3, 3, sizeof(struct fake_runtime) },
		{ 5, 5, OFF(struct fake_runtime, interpreters_head) },
		{ 6, 6, sizeof(struct fake_interp) },
		{ 8, 8, OFF(struct fake_interp, next) },
		{ 9, 9, OFF(struct fake_interp, threads_head) },
		{ 19, 22, sizeof(struct fake_tstate) },
		{ 20, 23, OFF(struct fake_tstate, prev) },
		{ 21, 24, OFF(struct fake_tstate, next) },
		{ 22, 25, OFF(struct fake_tstate, interp) },
		{ 23, 26, OFF(struct fake_tstate, current_frame) },
		{ 24, 27, OFF(struct fake_tstate, thread_id) },
		{ 25, 28, OFF(struct fake_tstate, native_thread_id) },
		{ 28, 31, sizeof(struct fake_frame) },
		{ 29, 32, OFF(struct fake_frame, previous) },
		{ 30, 33, OFF(struct fake_frame, executable) },
		{ 31, 34, OFF(struct fake_frame, instr_ptr) },
		{ 33, 36, OFF(struct fake_frame, owner) },
		{ 34, 39, sizeof(struct fake_code) },
		{ 35, 40, OFF(struct fake_code, filename) },
		{ 36, 41, OFF(struct fake_code, name) },
		{ 37, 42, OFF(struct fake_code, qualname) },
		{ 38, 43, OFF(struct fake_code, linetable) },
		{ 39, 44, OFF(struct fake_code, firstlineno) },
		{ 43, 48, OFF(struct fake_code, code) },
		{ 44, 50, 24 },					/* pyobject.size */
		{ 45, 51, 16 },					/* pyobject.ob_type */
		{ 64, 74, sizeof(struct fake_bytes) },
		{ 65, 75, OFF(struct fake_bytes, size) },
		{ 66, 76, OFF(struct fake_bytes, sval) },
		{ 67, 77, sizeof(struct fake_str) },
		{ 68, 78, OFF(struct fake_str, state) },
		{ 69, 79, OFF(struct fake_str, length) },
		{ 70, 80, OFF(struct fake_str, data) },		/* sizeof(PyASCIIObject) */
	};
	memcpy(d, "xdebugpy", 8);
	d[1] = Py_Version;
	d[2] = FAKE_FREE_THREADED;
	for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
		d[FAKE_MINOR == 13 ? words[k].i13 : words[k].i14] = words[k].value;
}

static uint64_t executable(const void *code)
{
	return (uint64_t)(uintptr_t)code | (FAKE_MINOR >= 14 ? 1 : 0);	/* a stack reference's tag */
}

static int (*callback)(void);

/* The eval loop: the Python frames above run in this call of it. */
EXPORT __attribute__((noinline)) int _PyEval_EvalFrameDefault(void *ts, void *frame, int throwflag)
{
	volatile int r = callback();
	(void)ts, (void)frame, (void)throwflag;
	return r;
}

EXPORT int fakepy_run(int (*cb)(void))
{
	fill_table(_PyRuntime.debug);
	_PyRuntime.interpreters_head = &interp;
	interp.threads_head = &tstate;
	tstate.interp = &interp;
	tstate.native_thread_id = (uint64_t)gettid();
	tstate.thread_id = 1;
	f_shim = (struct fake_frame){ .executable = (uint64_t)(uintptr_t)&none, .owner = 3 };
	f_module = (struct fake_frame){ .previous = &f_shim, .executable = executable(&c_module),
					.instr_ptr = c_module.code + 5 };
	f_grow = (struct fake_frame){ .previous = &f_module, .executable = executable(&c_grow),
				      .instr_ptr = c_grow.code + 3 };
	f_unstarted = (struct fake_frame){ .previous = &f_grow, .executable = executable(&c_init),
					   .instr_ptr = c_init.code + 1 };	/* before unit 2 */
	f_cstack = (struct fake_frame){ .previous = &f_unstarted, .executable = (uint64_t)(uintptr_t)&none,
					.owner = FAKE_MINOR >= 14 ? 4 : 0 };
	tstate.current_frame = &f_cstack;
	callback = cb;
	return _PyEval_EvalFrameDefault(&tstate, &f_grow, 0);
}
