/* test_sym_index.c — unit test of src/base/sym_index.c against libdwfl's own lookup, on this
 * test's process (its program, libc, libdw, libelf): for every sized function symbol, its first
 * and last byte and its middle are named as dwfl_module_addrinfo names them (the same symbol,
 * or an alias at the same address); addresses below every symbol name nothing. The time of
 * both lookups is printed, not judged. */
#define _GNU_SOURCE
#include "sym_index.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct totals {
	int modules, functions, differ;
	double ours_s, theirs_s;
};

/* pc named by both ways: the same name, or names of one address. */
static bool agree(Dwfl_Module *dm, const struct sym_index *ix, GElf_Addr pc, struct totals *t)
{
	uint64_t start = 0;
	double t0 = now_s();
	const char *ours = sym_index_lookup(ix, pc, &start);
	double t1 = now_s();
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *theirs = dwfl_module_addrinfo(dm, pc, &off, &sym, NULL, NULL, NULL);
	t->theirs_s += now_s() - t1;
	t->ours_s += t1 - t0;
	if (!ours || !theirs)
		return !ours && !theirs;
	return strcmp(ours, theirs) == 0 || start == pc - off;
}

static int each_module(Dwfl_Module *dm, void **userdata, const char *name, Dwarf_Addr base, void *arg)
{
	struct totals *t = arg;
	(void)userdata, (void)base;
	struct sym_index *ix = sym_index_build(dm);
	int n = dwfl_module_getsymtab(dm);
	if (!ix || n <= 0) {
		sym_index_free(ix);
		return DWARF_CB_OK;
	}
	t->modules++;
	int differ = 0, functions = 0;
	GElf_Addr lowest = UINT64_MAX;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *s = dwfl_module_getsym_info(dm, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!s || shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		lowest = addr < lowest ? addr : lowest;
		if (!sym.st_size)
			continue;
		functions++;
		if (!agree(dm, ix, addr, t) || !agree(dm, ix, addr + sym.st_size - 1, t) ||
		    !agree(dm, ix, addr + sym.st_size / 2, t)) {
			if (differ++ < 3)
				printf("# %s: %s at %#lx differs\n", name, s, (unsigned long)addr);
		}
	}
	if (lowest != UINT64_MAX && lowest > 0)
		check(sym_index_lookup(ix, lowest - 1, NULL) == NULL, "%s: below its lowest function, no name", name);
	check(differ == 0, "%s: %d functions named as libdwfl names them (3 addresses each)", name, functions);
	t->functions += functions;
	t->differ += differ;
	sym_index_free(ix);
	return DWARF_CB_OK;
}

int main(void)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	check(dwfl && dwfl_linux_proc_report(dwfl, getpid()) == 0 && dwfl_report_end(dwfl, NULL, NULL) == 0,
	      "libdwfl reports this process");
	struct totals t = { 0 };
	dwfl_getmodules(dwfl, each_module, &t, 0);
	check(t.modules >= 2 && t.functions > 1000, "%d modules, %d functions looked at", t.modules, t.functions);
	printf("# lookups: ours %.3f s, libdwfl's %.3f s\n", t.ours_s, t.theirs_s);
	check(sym_index_lookup(NULL, 0x1000, NULL) == NULL, "no index: no name");
	dwfl_end(dwfl);
	return failures != 0;
}
