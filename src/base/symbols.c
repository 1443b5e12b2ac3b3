/* symbols.c — modules and symbols through libdw, used the way eu-stack does: report the
 * process's modules from /proc/PID/maps, then ask each module for its symbol table. No ELF is
 * parsed here by hand. Separate debug files are not searched: CUDA libraries ship without them
 * and searching costs time at every dlopen. */
#define _GNU_SOURCE
#include "symbols.h"
#include "sym_index.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracee.h"

/* The process's part (p->symbols). */
struct symbols_state {
	Dwfl *dwfl;
	pid_t traced_pid;
	struct module **mods;
	size_t n_mods, cap_mods;
};
/* gputop-wide: a module id is never reused in the session, whichever process it is in. */
static uint32_t next_id = 1;

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;
}

/* A module's file as the program sees it: through /proc/PID/root, in the program's mount
 * namespace and under its root (a container), never by its path in gputop's own view, where
 * another file, or none, may stand. Regular files only, as libdw's own finder: a device
 * mapped (/dev/nvidia*) must not be opened. A vdso or a file deleted since it was mapped:
 * libdw's finder, which reads it from memory. *userdata: the process's state (visit_module). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
		    Elf **elfp)
{
	const struct symbols_state *st = *userdata;
	if (name[0] != '/' || strstr(name, " (deleted)"))
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	char path[PATH_MAX + 32];
	struct stat sb;
	if (!st || snprintf(path, sizeof path, "/proc/%d/root%s", (int)st->traced_pid, name) >= (int)sizeof path ||
	    stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !(*file_name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = no_debuginfo,
};

struct symbols_state *symbols_state_new(void)
{
	return calloc(1, sizeof(struct symbols_state));
}

static void free_module(struct module *m)
{
	sym_index_free(m->index);
	free((char *)m->path);
	free(m);
}

static void close_state(struct symbols_state *st)
{
	if (st->dwfl)
		dwfl_end(st->dwfl);
	st->dwfl = NULL;
	for (size_t i = 0; i < st->n_mods; i++)
		free_module(st->mods[i]);
	free(st->mods);
	st->mods = NULL;
	st->n_mods = st->cap_mods = 0;
}

void symbols_state_free(struct symbols_state *st)
{
	if (!st)
		return;
	close_state(st);
	free(st);
}

int sym_open(const struct tracee *p)
{
	struct symbols_state *st = p->symbols;
	sym_close(p);
	st->dwfl = dwfl_begin(&callbacks);
	if (!st->dwfl)
		return -ENOMEM;
	st->traced_pid = p->pid;
	return 0;
}

void sym_close(const struct tracee *p)
{
	close_state(p->symbols);
}

struct refresh_ctx {
	struct symbols_state *st;
	bool *seen;
	struct module **added;
	size_t n_added;
};

static int visit_module(Dwfl_Module *dm, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	struct refresh_ctx *ctx = arg;
	struct symbols_state *st = ctx->st;
	Dwarf_Addr end;
	*userdata = st;	/* for find_elf, which libdw calls once the module's file is wanted */
	dwfl_module_info(dm, NULL, NULL, &end, NULL, NULL, NULL, NULL);
	for (size_t i = 0; i < st->n_mods; i++)
		if (st->mods[i]->start == start && strcmp(st->mods[i]->path, name) == 0) {
			ctx->seen[i] = true;
			st->mods[i]->dwfl_module = dm;
			st->mods[i]->end = end;
			return DWARF_CB_OK;
		}
	if (name[0] != '/' || strstr(name, " (deleted)"))
		return DWARF_CB_OK;	/* [vdso], [heap] and files gone from disk */
	struct module *m = calloc(1, sizeof *m);
	if (!m)
		return DWARF_CB_ABORT;
	m->id = next_id++;
	m->path = strdup(name);
	const char *slash = strrchr(m->path, '/');
	m->base = slash ? slash + 1 : m->path;
	m->start = start;
	m->end = end;
	m->dwfl_module = dm;
	struct module **a = realloc(ctx->added, (ctx->n_added + 1) * sizeof *a);
	if (!a || !m->path) {
		free((char *)m->path);
		free(m);
		return DWARF_CB_ABORT;
	}
	ctx->added = a;
	ctx->added[ctx->n_added++] = m;
	return DWARF_CB_OK;
}

int sym_refresh(const struct tracee *p, void (*on_new)(struct module *m, void *arg),
		void (*on_gone)(struct module *m, void *arg), void *arg)
{
	struct symbols_state *st = p->symbols;
	if (!st->dwfl)
		return -EINVAL;
	dwfl_report_begin(st->dwfl);
	int r = dwfl_linux_proc_report(st->dwfl, st->traced_pid);
	dwfl_report_end(st->dwfl, NULL, NULL);
	if (r != 0)
		return r > 0 ? -r : -ESRCH;

	struct refresh_ctx ctx = { .st = st, .seen = calloc(st->n_mods + 1, sizeof(bool)) };
	if (!ctx.seen)
		return -ENOMEM;
	dwfl_getmodules(st->dwfl, visit_module, &ctx, 0);

	size_t kept = 0;
	for (size_t i = 0; i < st->n_mods; i++) {
		if (ctx.seen[i]) {
			st->mods[kept++] = st->mods[i];
			continue;
		}
		if (on_gone)
			on_gone(st->mods[i], arg);
		free_module(st->mods[i]);
	}
	st->n_mods = kept;
	free(ctx.seen);

	int err = 0;
	for (size_t i = 0; i < ctx.n_added; i++) {
		if (st->n_mods == st->cap_mods) {
			size_t ncap = st->cap_mods ? st->cap_mods * 2 : 64;
			struct module **n = realloc(st->mods, ncap * sizeof *n);
			if (!n) {
				free((char *)ctx.added[i]->path);
				free(ctx.added[i]);
				err = -ENOMEM;
				continue;
			}
			st->mods = n;
			st->cap_mods = ncap;
		}
		st->mods[st->n_mods++] = ctx.added[i];
	}
	for (size_t i = 0; i < ctx.n_added && !err; i++)
		if (on_new)
			on_new(ctx.added[i], arg);
	free(ctx.added);
	return err;
}

int sym_foreach(const struct module *m,
		int (*cb)(const char *name, uint64_t addr, uint64_t size, enum sym_type type, void *arg),
		void *arg)
{
	Dwfl_Module *dm = m->dwfl_module;
	int n = dwfl_module_getsymtab(dm);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !*name || shndx == SHN_UNDEF)
			continue;
		int t = GELF_ST_TYPE(sym.st_info);
		if (t != STT_FUNC && t != STT_OBJECT)
			continue;
		int r = cb(name, addr, sym.st_size, t == STT_FUNC ? SYM_FUNC : SYM_OBJECT, arg);
		if (r)
			return r;
	}
	return 0;
}

const struct module *sym_module_next(const struct tracee *p, size_t *cursor)
{
	struct symbols_state *st = p->symbols;
	return *cursor < st->n_mods ? st->mods[(*cursor)++] : NULL;
}

const struct module *sym_module_at(const struct tracee *p, uint64_t addr)
{
	struct symbols_state *st = p->symbols;
	for (size_t i = 0; i < st->n_mods; i++)
		if (addr >= st->mods[i]->start && addr < st->mods[i]->end)
			return st->mods[i];
	return NULL;
}

const char *sym_lookup(const struct tracee *p, uint64_t addr, uint64_t *offset, const struct module **mod)
{
	const struct module *m = sym_module_at(p, addr);
	if (mod)
		*mod = m;
	if (!m)
		return NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m->dwfl_module, addr, &off, &sym, NULL, NULL, NULL);
	if (offset)
		*offset = off;
	return name;
}

struct find_ctx {
	const char *name;
	uint64_t addr;
};

static int match_name(const char *name, uint64_t addr, uint64_t size, enum sym_type type, void *arg)
{
	struct find_ctx *f = arg;
	if (strcmp(name, f->name) != 0)
		return 0;
	f->addr = addr;
	return 1;
}

/* The tail of an ELF file's executable segment, if `room` bytes of it lie past every segment:
 * its address in the file's own terms (add the load bias), or 0. */
static uint64_t exec_tail_of(Elf *elf, size_t room, uint64_t page, uint64_t *first_vaddr)
{
	size_t n;
	*first_vaddr = UINT64_MAX;
	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr y;
		if (gelf_getphdr(elf, (int)i, &y) && y.p_type == PT_LOAD && y.p_vaddr < *first_vaddr)
			*first_vaddr = y.p_vaddr;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr x;
		if (!gelf_getphdr(elf, (int)i, &x) || x.p_type != PT_LOAD || !(x.p_flags & PF_X))
			continue;
		uint64_t at = (x.p_vaddr + x.p_memsz + 15) & ~15ull, end = (at + page - 1) & ~(page - 1);
		if (at + room > end)
			continue;
		bool clear = true;
		for (size_t k = 0; k < n && clear; k++) {
			GElf_Phdr y;
			if (k != i && gelf_getphdr(elf, (int)k, &y) && y.p_type == PT_LOAD &&
			    y.p_vaddr < end && y.p_vaddr + y.p_memsz > x.p_vaddr + x.p_memsz)
				clear = false;
		}
		if (clear)
			return at;
	}
	return 0;
}

/* Whether [at, at + len) lies in one executable mapping of the process, as the kernel says. */
static bool mapped_executable(pid_t pid, uint64_t at, size_t len)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	bool yes = false;
	if (!f)
		return false;
	while (!yes && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && at >= lo && at + len <= hi)
			yes = perms[2] == 'x';
	}
	fclose(f);
	return yes;
}

/* From /proc/PID/maps, not from libdw's modules: it is needed before they are reported (the
 * first mmap of an attach). Each ELF file is read through /proc/PID/map_files, as the process
 * sees it (its mount namespace), at its first mapping (file offset 0). */
uint64_t sym_exec_tail(const struct tracee *p, size_t room)
{
	char path[64], line[512];
	long page = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof path, "/proc/%d/maps", p->pid);
	FILE *f = fopen(path, "re");
	uint64_t found = 0;
	if (!f || elf_version(EV_CURRENT) == EV_NONE) {
		if (f)
			fclose(f);
		return 0;
	}
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off;
		char file[64];
		int at_path = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &off, &at_path) != 3 || off != 0 ||
		    line[at_path] != '/')
			continue;
		snprintf(file, sizeof file, "/proc/%d/map_files/%lx-%lx", p->pid, lo, hi);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {	/* map_files wants CAP_SYS_ADMIN on older kernels: the path, then */
			char *nl = strchr(line + at_path, '\n'), root[4200];
			if (nl)
				*nl = 0;
			snprintf(root, sizeof root, "/proc/%d/root%s", p->pid, line + at_path);
			fd = open(root, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0)
			continue;
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		uint64_t first, tail = elf ? exec_tail_of(elf, room, page > 0 ? (uint64_t)page : 4096, &first) : 0;
		if (tail) {
			uint64_t at = tail - (first & ~((uint64_t)page - 1)) + lo;
			if (mapped_executable(p->pid, at, room))
				found = at;
		}
		if (elf)
			elf_end(elf);
		close(fd);
	}
	fclose(f);
	return found;
}

bool sym_has_section(const struct module *m, const char *name)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->dwfl_module, &bias);
	size_t strndx;
	if (!elf || elf_getshdrstrndx(elf, &strndx) != 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *s = gelf_getshdr(scn, &sh) ? elf_strptr(elf, strndx, sh.sh_name) : NULL;
		if (s && strcmp(s, name) == 0)
			return true;
	}
	return false;
}

int sym_build_id(const struct module *m, const uint8_t **bits)
{
	GElf_Addr vaddr, bias;
	dwfl_module_getelf(m->dwfl_module, &bias);	/* the id is read from the file, once it is open */
	return dwfl_module_build_id(m->dwfl_module, bits, &vaddr);
}

bool sym_is_program(const struct module *m)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->dwfl_module, &bias);
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

uint64_t sym_find(const struct module *m, const char *name)
{
	struct find_ctx f = { name, 0 };
	sym_foreach(m, match_name, &f);
	return f.addr;
}

void *sym_dwfl(const struct tracee *p)
{
	return p && p->symbols ? p->symbols->dwfl : NULL;
}

int sym_describe(const struct tracee *p, uint64_t pc, struct sym_place *out)
{
	Dwfl *dwfl = sym_dwfl(p);
	Dwfl_Module *dm = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
	*out = (struct sym_place){ 0 };
	if (!dm)
		return -ENOENT;
	Dwarf_Addr start = 0;
	const char *path = dwfl_module_info(dm, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	const char *slash = path ? strrchr(path, '/') : NULL;
	out->module = slash ? slash + 1 : path;
	out->module_offset = pc - start;
	/* By gputop's index of the module's functions where it has one (libdwfl's own lookup
	 * walks every symbol: sym_index.c). */
	struct module *m = (struct module *)sym_module_at(p, pc);
	if (m && m->dwfl_module == dm && !m->index)
		m->index = sym_index_build(dm);
	if (m && m->index) {
		out->function = sym_index_lookup(m->index, pc, NULL);
	} else {
		GElf_Off off;
		GElf_Sym sym;
		out->function = dwfl_module_addrinfo(dm, pc, &off, &sym, NULL, NULL, NULL);
	}
	/* Line tables where the module has DWARF (a -g build); none are searched for elsewhere. */
	Dwfl_Line *line = dwfl_module_getsrc(dm, pc);
	if (line)
		out->file = dwfl_lineinfo(line, NULL, &out->line, NULL, NULL, NULL);
	/* A name relative to the compilation's directory is made whole with it. */
	const char *dir = line && out->file && out->file[0] != '/' ? dwfl_line_comp_dir(line) : NULL;
	if (dir && snprintf(out->file_whole, sizeof out->file_whole, "%s/%s", dir, out->file) <
			   (int)sizeof out->file_whole)
		out->file = out->file_whole;
	return 0;
}
