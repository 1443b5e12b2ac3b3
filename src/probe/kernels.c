/* kernels.c — the value → kernel map behind kernels.h. Bounded: at most MAX_VALUES values
 * are remembered (beyond that, new values are named but not cached). */
#define _GNU_SOURCE
#include "kernels.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hashmap.h"
#include "memory.h"
#include "stats.h"
#include "symbols.h"
#include "tallies.h"
#include "tracee.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_VALUES (1u << 20)

struct entry {
	uint64_t value;		/* the key */
	const char *name;	/* its kernel, the figures' row not made yet: made at its first
				 * launch (entry_id). A handle variable's (module_scan's, demangled)
				 * or a registered one's (the pool's, mangled) */
	int32_t id;		/* -1 while name waits */
	bool mangled;		/* name is to be demangled when the row is made */
	bool unknown;		/* named "kernel@0x…": a later scan may name it */
	bool doubtful;		/* named by a host-side lambda placeholder (host_side_lambda): the
				 * driver is asked at its first launch's park (kernels_named false),
				 * the name kept only where it cannot say (kernels_asked) */
	bool recheck;		/* module loading returned it again: asked again (kernels_recheck) */
};

/* Names learned before any launch (__cudaRegisterFunction: a PyTorch rank registers ~21,000
 * kernels as libtorch_cuda.so loads, launching a few hundred), kept as read until their first
 * launch: rows made for all of them made every snapshot merge ~21,000 rows a process under
 * the figures' lock. At most POOL_BYTES_MAX; beyond, rows are made at once as before. */
#define POOL_CHUNK	(64u << 10)
#define POOL_BYTES_MAX	(32u << 20)

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, cap;
	char data[];
};

/* A kernel's static __handle variable. The ranks of a PyTorch job each hold some 30,000 of
 * them (libtorch_cuda.so): their rows in the figures are made only for the kernels launched. */
struct handle_var {
	uint64_t addr;
	uint32_t module;
	const char *name;	/* demangled; module_scan's, kept for the session */
	bool doubtful;		/* host_side_lambda(name) */
};

/* The process's part (p->kernels): its values and handle variables (the kernel ids they
 * map to are the figures', gputop-wide). */
struct kernels_state {
	struct hashmap map;
	struct handle_var *vars;
	size_t n_vars, cap_vars;
	uint64_t last_scan_ns;
	bool unknown_since_scan;
	bool added_since_scan;	/* variables of a module loaded since the last scan */
	struct pool_chunk *pool;	/* registered names waiting for a launch */
	size_t pool_bytes;
};

struct kernels_state *kernels_state_new(void)
{
	struct kernels_state *st = malloc(sizeof *st);
	if (st)
		*st = (struct kernels_state){ .map = HASHMAP_INIT(sizeof(struct entry), 1024, 0) };
	return st;
}

/* Forgets every value, handle variable and pooled name (an exec: a new image). */
static void kernels_reset_state(struct kernels_state *st)
{
	hashmap_clear(&st->map);
	free(st->vars);
	st->vars = NULL;
	st->n_vars = st->cap_vars = 0;
	st->last_scan_ns = 0;
	for (struct pool_chunk *c = st->pool, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	st->pool = NULL;
	st->pool_bytes = 0;
}

void kernels_state_free(struct kernels_state *st)
{
	if (!st)
		return;
	kernels_reset_state(st);
	free(st);
}

/* A copy of name in the process's pool, or NULL when the pool is full. */
static const char *pool_copy(struct kernels_state *st, const char *name)
{
	size_t len = strlen(name) + 1;
	struct pool_chunk *c = st->pool;
	if (!c || c->cap - c->used < len) {
		size_t cap = len > POOL_CHUNK ? len : POOL_CHUNK;
		if (st->pool_bytes + cap > POOL_BYTES_MAX || !(c = malloc(sizeof *c + cap)))
			return NULL;
		*c = (struct pool_chunk){ .next = st->pool, .cap = cap };
		st->pool = c;
		st->pool_bytes += cap;
	}
	char *copy = memcpy(c->data + c->used, name, len);
	c->used += len;
	return copy;
}

static struct entry *lookup(const struct tracee *p, uint64_t v)
{
	struct kernels_state *st = p->kernels;
	return hashmap_find(&st->map, v);
}

/* Whether name holds one of nvcc's extended-lambda placeholders: "Unv", lower-case letters, a
 * digit ("Unvdl0_…" __nv_dl_wrapper_t, "Unvhdl0_1_0_0_…" __nv_hdl_wrapper_t). */
static bool has_lambda_placeholder(const char *name)
{
	for (const char *u = name; (u = strstr(u, "Unv")); u++) {
		const char *c = u + 3;
		while (*c >= 'a' && *c <= 'z')
			c++;
		if (c > u + 3 && isdigit((unsigned char)*c))
			return true;
	}
	return false;
}

/* Whether name is the host side's name of a kernel instantiated with an nvcc extended lambda:
 * nvcc's front end writes such a lambda's closure type, in the host stub's name and so in its
 * static __handle variable's (CUDA 13), as a placeholder that __cxa_demangle cannot read, while
 * the device symbol (what the runtime registers, the driver and CUPTI name) holds the lambda's
 * own type ("UlfE_"). Named so, a PyTorch elementwise kernel's launches and its GPU time
 * (joined by name) fell into two rows. Demangled only where a placeholder is found: a PyTorch
 * rank has ~30,000 handle variables. */
static bool host_side_lambda(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z' || !has_lambda_placeholder(name))
		return false;
	int status = -1;
	free(__cxa_demangle(name, NULL, NULL, &status));
	return status != 0;
}

/* v named: by id, or (id -1) by a name, its row made at first use (doubtful: the name is
 * host_side_lambda's). False when not kept. */
static bool remember_as(struct tracee *p, uint64_t v, int id, const char *name, bool mangled, bool unknown,
			bool doubtful)
{
	struct kernels_state *st = p->kernels;
	if (!v || (id < 0 && !name))
		return false;
	struct entry *e = lookup(p, v);
	if (e && !e->unknown && (unknown || (doubtful && !e->doubtful)))
		return true;	/* a name is not replaced by a guess, nor by a host-side placeholder */
	if (!e && (hashmap_count(&st->map) >= MAX_VALUES || !(e = hashmap_insert(&st->map, v, NULL))))
		return false;
	e->id = id;
	e->name = name;
	e->mangled = mangled;
	e->unknown = unknown;
	e->doubtful = doubtful;
	e->recheck = false;
	return true;
}

static void remember(struct tracee *p, uint64_t v, int id, bool unknown)
{
	remember_as(p, v, id, NULL, false, unknown, false);
}

static int id_for_mangled(struct tracee *p, const char *mangled);

/* The entry's kernel id, its row made now if it waited for its first launch. */
static int entry_id(struct tracee *p, struct entry *e)
{
	if (e->id < 0 && e->name) {
		e->id = e->mangled ? id_for_mangled(p, e->name) : stats_kernel_id(p->stats_id, e->name);
		e->name = NULL;
	}
	return e->id;
}

bool kernels_seen(const struct tracee *p, uint64_t value)
{
	return lookup(p, value) != NULL;
}

bool kernels_named(const struct tracee *p, uint64_t value)
{
	const struct entry *e = lookup(p, value);
	return e && !e->unknown && !e->recheck && !e->doubtful;
}

bool kernels_unknown(const struct tracee *p, uint64_t value)
{
	const struct entry *e = lookup(p, value);
	return !e || e->unknown || e->doubtful;
}

void kernels_asked(struct tracee *p, uint64_t value)
{
	struct entry *e = lookup(p, value);
	if (e)
		e->doubtful = false;
}

bool kernels_recheck(struct tracee *p, uint64_t value)
{
	struct entry *e = lookup(p, value);
	if (!e || e->unknown)
		return false;
	e->recheck = true;
	return true;
}

char *kernels_demangle(const char *name)
{
	int status = -1;
	char *d = NULL;
	if (name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	return status == 0 && d ? d : strdup(name);
}

static int id_for_mangled(struct tracee *p, const char *mangled)
{
	char *d = kernels_demangle(mangled);
	if (!d)
		return -1;
	int id = stats_kernel_id(p->stats_id, d);
	free(d);
	return id;
}

void kernels_learn_name(struct tracee *p, uint64_t value, const char *mangled)
{
	const char *kept = value ? pool_copy(p->kernels, mangled) : NULL;
	if (!kept || !remember_as(p, value, -1, kept, true, false, host_side_lambda(mangled)))
		remember(p, value, id_for_mangled(p, mangled), false);
}

/* The kernel the runtime registered host function stub as, from the names the stubs keep in
 * place (tallies.h): its id, or -1. Before any symbol lookup: libdw searches a module's whole
 * symbol table for one (libtorch_cuda.so: 112,000 functions, milliseconds a lookup). */
static int registered_id(struct tracee *p, pid_t pid, uint64_t stub)
{
	char name[1024];
	uint64_t name_at = tallies_registered_name(p, stub);
	if (!name_at || mem_read_string(pid, name_at, name, sizeof name) < 0)
		return -1;
	return id_for_mangled(p, name);
}

/* Name of a host function by its symbol: "module+0xoffset" when it has none. */
static int id_for_stub(struct tracee *p, uint64_t stub, bool *unknown)
{
	uint64_t off = 0;
	const struct module *m = NULL;
	const char *sym = sym_lookup(p, stub, &off, &m);
	char buf[512];
	*unknown = false;
	if (sym && off == 0)
		return id_for_mangled(p, sym);
	if (m)
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64, m->base, stub - m->start);
	else {
		snprintf(buf, sizeof buf, "kernel@0x%" PRIx64, stub);
		*unknown = true;
	}
	return stats_kernel_id(p->stats_id, buf);
}

/* value named as e is: a doubtful name stays doubtful (its row not made: the driver may name
 * value otherwise). */
static void remember_like(struct tracee *p, uint64_t value, struct entry *e)
{
	if (e->doubtful && e->id < 0)
		remember_as(p, value, -1, e->name, e->mangled, false, true);
	else
		remember(p, value, entry_id(p, e), e->unknown);
}

void kernels_learn_from_stub(struct tracee *p, uint64_t value, uint64_t stub)
{
	struct entry *e = lookup(p, stub);
	if (e && !e->unknown) {
		remember_like(p, value, e);
		return;
	}
	int id = registered_id(p, p->pid, stub);
	if (id >= 0) {
		remember(p, stub, id, false);
		remember(p, value, id, false);
		return;
	}
	bool unknown;
	id = id_for_stub(p, stub, &unknown);
	remember(p, value, id, unknown);
}

void kernels_learn_alias(struct tracee *p, uint64_t value, uint64_t known)
{
	struct entry *e = lookup(p, known);
	if (e)
		remember_like(p, value, e);
}

int kernels_stub_symbol_to_mangled(const char *symbol, char *out, size_t size)
{
	/* nvcc names each stub "__device_stub_" + the kernel's mangled name; the static's own
	 * mangled name holds that identifier with its length in front. */
	const char *p = strstr(symbol, "__device_stub_");
	if (!p)
		return -1;
	const char *digits = p;
	while (digits > symbol && isdigit((unsigned char)digits[-1]))
		digits--;
	if (digits == p)
		return -1;
	size_t len = strtoul(digits, NULL, 10);
	size_t prefix = strlen("__device_stub_");
	if (len <= prefix || strnlen(p, len) < len || len - prefix >= size)
		return -1;
	memcpy(out, p + prefix, len - prefix);
	out[len - prefix] = 0;
	return out[0] == '_' && out[1] == 'Z' ? 0 : -1;
}

void kernels_add_handle_var(struct tracee *p, const struct module *m, uint64_t var_addr, const char *name)
{
	struct kernels_state *st = p->kernels;
	if (st->n_vars == st->cap_vars) {
		size_t ncap = st->cap_vars ? st->cap_vars * 2 : 256;
		struct handle_var *n = realloc(st->vars, ncap * sizeof *n);
		if (!n)
			return;
		st->vars = n;
		st->cap_vars = ncap;
	}
	st->vars[st->n_vars++] = (struct handle_var){ var_addr, m->id, name, host_side_lambda(name) };
	st->added_since_scan = true;
}

void kernels_forget_module(struct tracee *p, const struct module *m)
{
	struct kernels_state *st = p->kernels;
	size_t kept = 0;
	for (size_t i = 0; i < st->n_vars; i++)
		if (st->vars[i].module != m->id)
			st->vars[kept++] = st->vars[i];
	st->n_vars = kept;
}

void kernels_scan_pending(struct tracee *p, pid_t pid)
{
	if (p->kernels->added_since_scan)
		kernels_scan_handle_vars(p, pid);
}

void kernels_scan_handle_vars(struct tracee *p, pid_t pid)
{
	struct kernels_state *st = p->kernels;
	enum { BATCH = MEM_READV_MAX };	/* one system call reads so many: libtorch_cuda.so has ~30,000 */
	uint64_t vals[BATCH];
	struct mem_range r[BATCH];	/* with vals, 32 KiB */
	st->last_scan_ns = now_ns();
	st->unknown_since_scan = st->added_since_scan = false;
	for (size_t i = 0; i < st->n_vars; i += BATCH) {
		int n = st->n_vars - i < BATCH ? (int)(st->n_vars - i) : BATCH;
		for (int k = 0; k < n; k++)
			r[k] = (struct mem_range){ st->vars[i + k].addr, &vals[k], 8 };
		if (mem_readv(pid, r, n) < 0) {
			/* One unreadable variable must not hide the others. */
			for (int k = 0; k < n; k++)
				if (mem_read(pid, r[k].addr, &vals[k], 8) < 0)
					vals[k] = 0;
		}
		for (int k = 0; k < n; k++)
			remember_as(p, vals[k], -1, st->vars[i + k].name, false, false, st->vars[i + k].doubtful);
	}
}

int kernels_id_of(struct tracee *p, pid_t pid, uint64_t value)
{
	struct kernels_state *st = p->kernels;
	struct entry *e = lookup(p, value);
	if (e && !e->unknown)
		return entry_id(p, e);
	/* Unknown: maybe a handle made before we attached, whose static we have not read since
	 * it was filled in. Rescan, but not more than once a second. */
	if (st->n_vars && (st->added_since_scan ||
			   ((!e || st->unknown_since_scan) && now_ns() - st->last_scan_ns > 1000000000ull))) {
		kernels_scan_handle_vars(p, pid);
		if ((e = lookup(p, value)) && !e->unknown)
			return entry_id(p, e);
	}
	if (e)
		return entry_id(p, e);
	/* A host function the runtime registered: the stubs kept its name in place. */
	int reg = registered_id(p, pid, value);
	if (reg >= 0) {
		remember(p, value, reg, false);
		return reg;
	}
	st->unknown_since_scan = true;
	bool unknown;
	int id = id_for_stub(p, value, &unknown);
	remember(p, value, id, unknown);
	return id;
}

void kernels_reset(struct tracee *p)
{
	kernels_reset_state(p->kernels);
}
