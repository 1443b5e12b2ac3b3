/* sym_index.c — a module's function symbols sorted by address (sym_index.h).
 *
 * libdwfl names an address by a walk over every symbol of its module (dwfl_module_addrinfo):
 * about a millisecond in libtorch_cuda.so's 112,000, and a PyTorch stack holds dozens of such
 * frames, each named twice (is it the eval loop? then its name): a PyTorch process's first
 * stack took 0.7-1 s on an H200, every new one 0.5 s. Sorted once per module, a name is a
 * binary search. */
#define _GNU_SOURCE
#include "sym_index.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>

struct entry {
	uint64_t addr, size;
	const char *name;
	uint8_t rank;	/* among aliases at one address: global 0, weak 1, local 2 */
};

struct sym_index {
	struct entry *e;
	size_t n;
};

#define WALK_BACK 64	/* symbols looked at below pc for one that holds it (nested, aliases) */

static int by_addr(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->rank - (int)y->rank;
}

struct sym_index *sym_index_build(void *dwfl_module)
{
	Dwfl_Module *dm = dwfl_module;
	int n = dwfl_module_getsymtab(dm);
	struct sym_index *ix = n > 0 ? calloc(1, sizeof *ix) : NULL;
	if (!ix || !(ix->e = malloc((size_t)n * sizeof *ix->e))) {
		free(ix);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (!name || !*name || shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		ix->e[ix->n++] = (struct entry){ .addr = addr, .size = sym.st_size, .name = name,
						 .rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2 };
	}
	qsort(ix->e, ix->n, sizeof *ix->e, by_addr);
	return ix;
}

const char *sym_index_lookup(const struct sym_index *ix, uint64_t pc, uint64_t *start)
{
	if (!ix || !ix->n || pc < ix->e[0].addr)
		return NULL;
	size_t lo = 0, hi = ix->n;	/* the last entry at or below pc: lo */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->e[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	/* Back to the first alias at that address (the best ranked), then below it. */
	while (lo > 0 && ix->e[lo - 1].addr == ix->e[lo].addr)
		lo--;
	const struct entry *sizeless = ix->e[lo].size == 0 ? &ix->e[lo] : NULL, *found = sizeless;
	for (size_t k = 0, i = lo; k < WALK_BACK; k++, i--) {
		const struct entry *e = &ix->e[i];
		if (e->size && pc < e->addr + e->size) {
			found = e;
			break;
		}
		if (i == 0)
			break;
	}
	if (found && start)
		*start = found->addr;
	return found ? found->name : NULL;
}

void sym_index_free(struct sym_index *ix)
{
	if (ix)
		free(ix->e);
	free(ix);
}
