/* module_scan.c — a module's symbols, walked once per file for the session (module_scan.h). */
#define _GNU_SOURCE
#include "module_scan.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda_api.h"
#include "hashmap.h"
#include "kernels.h"
#include "log.h"
#include "symbols.h"
#include "tracee.h"

/* A file's scan, kept for the session: its identity (build id, or path and size) and what its
 * symbols hold. */
struct cached {
	uint64_t key;		/* FNV-1a of ident */
	struct module_scan *scan;
	char *ident;
	size_t ident_len;
};

static struct {
	struct hashmap cache;
	uint64_t unnamed;	/* identities given to paths too long to be one */
} scans = { .cache = HASHMAP_INIT(sizeof(struct cached), 64, 0) };
static const struct module_scan empty;

/* Whether m can hold a function of the API table, a kernel's handle variable or execve: only
 * then are its symbols walked. PyTorch loads some 200 libraries, libtorch_cpu.so's symbol table
 * alone holds hundreds of thousands of names: walking them all at every dlopen, with the program
 * stopped, made `import torch` seconds slower. CUDA's own libraries (and the simulated ones,
 * named alike), the C library (execve), programs (nvcc links the runtime statically into them)
 * and anything nvcc built (device code in .nv_fatbin: its kernels' handles, maybe the runtime)
 * are walked, and PyTorch's libc10_cuda.so (its caching allocator); the rest cannot hold them. */
static bool may_hold_cuda(const struct module *m)
{
	static const char names[][16] = { "libcudart", "libcuda.", "libnccl", "libnvshmem", "libc.so",
					     "libc10_cuda." };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strncmp(m->base, names[i], strlen(names[i])) == 0)
			return true;
	return sym_is_program(m) || sym_has_section(m, ".nv_fatbin") || sym_has_section(m, "__nv_relfatbin");
}

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, ncap * size);
	if (!q)
		return false;
	*p = q;
	*cap = ncap;
	return true;
}

struct walk {
	const struct module *m;
	struct module_scan *s;
	size_t cap_funcs, cap_handles;
};

static int on_symbol(const char *name, uint64_t addr, uint64_t size, enum sym_type type, void *arg)
{
	struct walk *w = arg;
	struct module_scan *s = w->s;
	uint64_t off = addr - w->m->start;
	int ts = torch_symbol_index(name);
	if (ts >= 0) {
		s->torch_sym[ts] = off + 1;
		return 0;
	}
	if (type == SYM_OBJECT) {
		char mangled[1024];
		if (!strstr(name, "__device_stub_") || !strstr(name, "8__handle") ||
		    kernels_stub_symbol_to_mangled(name, mangled, sizeof mangled) < 0)
			return 0;
		char *d = kernels_demangle(mangled);
		if (!d || !grow((void **)&s->handles, &w->cap_handles, s->n_handles, sizeof *s->handles)) {
			free(d);
			return -1;
		}
		s->handles[s->n_handles++] = (struct scan_handle){ off, d };
		return 0;
	}
	int api = cuda_api_find(name), g;
	if (api < 0) {
		if (strcmp(name, "cuFuncGetName") == 0)
			s->fn[SCAN_FUNC_GET_NAME] = off + 1;
		else if (strcmp(name, "cuKernelGetName") == 0)
			s->fn[SCAN_KERNEL_GET_NAME] = off + 1;
		else if ((g = graph_query_fn_index(name)) >= 0)
			s->graph_fn[g] = off + 1;
		else if (strcmp(name, "execve") == 0)
			s->fn[SCAN_EXECVE] = off + 1;
		else if (strcmp(name, "execveat") == 0)
			s->fn[SCAN_EXECVEAT] = off + 1;
		return 0;
	}
	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].off == off)
			return 0;	/* an alias of one already found */
	if (!grow((void **)&s->funcs, &w->cap_funcs, s->n_funcs, sizeof *s->funcs))
		return -1;
	s->funcs[s->n_funcs++] = (struct scan_func){ off, size, api };
	return 0;
}

static void scan_free(struct module_scan *s)
{
	if (!s || s == &empty)
		return;
	for (size_t i = 0; i < s->n_handles; i++)
		free((char *)s->handles[i].name);
	free(s->handles);
	free(s->funcs);
	free(s);
}

static struct module_scan *walk(const struct module *m)
{
	if (!may_hold_cuda(m))
		return (struct module_scan *)&empty;
	struct module_scan *s = calloc(1, sizeof *s);
	if (!s)
		return (struct module_scan *)&empty;
	struct walk w = { .m = m, .s = s };
	uint64_t t0 = now_ns();
	if (sym_foreach(m, on_symbol, &w) < 0) {
		log_warn("%s: out of memory reading its symbols", m->base);
		scan_free(s);
		return (struct module_scan *)&empty;
	}
	log_debug("%s: symbols walked in %.1f ms (%zu functions, %zu kernel handles)", m->base,
		  (double)(now_ns() - t0) / 1e6, s->n_funcs, s->n_handles);
	return s;
}

/* The file's identity: its build id, else its path and size (a file rebuilt in place within one
 * session, same size, without a build id, would be taken for the old one). */
static size_t identity(const struct module *m, char *buf, size_t size)
{
	const uint8_t *id;
	int n = sym_build_id(m, &id);
	if (n > 0 && (size_t)n + 1 <= size) {
		buf[0] = 'b';
		memcpy(buf + 1, id, (size_t)n);
		return (size_t)n + 1;
	}
	size_t len = strlen(m->path);
	if (len + 1 + sizeof(uint64_t) > size)
		return 0;
	uint64_t bytes = m->end - m->start;
	buf[0] = 'p';
	memcpy(buf + 1, m->path, len);
	memcpy(buf + 1 + len, &bytes, sizeof bytes);
	return len + 1 + sizeof bytes;
}

static uint64_t fnv(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h ? h : 1;
}

const struct module_scan *module_scan(const struct module *m)
{
	char ident[4200];
	size_t n = identity(m, ident, sizeof ident);
	if (!n) {	/* a path too long: an identity of its own, never found again */
		ident[0] = 'u';
		scans.unnamed++;
		memcpy(ident + 1, &scans.unnamed, sizeof scans.unnamed);
		n = 1 + sizeof scans.unnamed;
	}
	/* Kept whatever happens: the kernels keep pointers to its names. Two identities of one
	 * hash take the next keys. */
	uint64_t key = fnv(ident, n);
	struct cached *c;
	for (; (c = hashmap_find(&scans.cache, key)); key = key + 1 ? key + 1 : 1)
		if (c->ident_len == n && memcmp(c->ident, ident, n) == 0)
			return c->scan;
	struct module_scan *s = walk(m);
	char *copy = malloc(n);
	if (!copy || !(c = hashmap_insert(&scans.cache, key, NULL))) {
		free(copy);
		scan_free(s);	/* out of memory: nothing walked is used */
		return &empty;
	}
	memcpy(copy, ident, n);
	*c = (struct cached){ .key = key, .scan = s, .ident = copy, .ident_len = n };
	return s;
}

uint64_t module_scan_addr(const struct module *m, uint64_t off_plus_1)
{
	return off_plus_1 ? m->start + off_plus_1 - 1 : 0;
}
