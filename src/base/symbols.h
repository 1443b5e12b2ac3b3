/* symbols.h — the program's modules and their symbols, through libdw (elfutils): modules as
 * dwfl_linux_proc_report sees them in /proc/PID/maps, symbols from .symtab or .dynsym. */
#ifndef GPUTOP_SYMBOLS_H
#define GPUTOP_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct symbols_state;
struct tracee;

struct module {
	uint32_t id;		/* stable for the module's life, never reused */
	const char *path;
	const char *base;	/* file name without directories */
	uint64_t start, end;
	void *dwfl_module;
	struct sym_index *index;	/* its functions by address, built at the first name asked */
	bool probed;		/* probes.c has looked at it */
};

struct sym_index;

enum sym_type { SYM_FUNC, SYM_OBJECT };

/* A process's part (p->symbols, base/tracee.h): libdw's view of it and its
 * modules; made and freed with it. */
struct symbols_state *symbols_state_new(void);
void symbols_state_free(struct symbols_state *st);

int sym_open(const struct tracee *p);
void sym_close(const struct tracee *p);

/* Re-reads the module list. Calls on_gone for each module that disappeared (before it is
 * freed) and on_new for each module that appeared. 0 or -errno. */
int sym_refresh(const struct tracee *p, void (*on_new)(struct module *m, void *arg),
		void (*on_gone)(struct module *m, void *arg), void *arg);

/* Calls cb for every defined function and object symbol of m, with its run-time address;
 * a non-zero return from cb stops the walk and is returned. */
int sym_foreach(const struct module *m,
		int (*cb)(const char *name, uint64_t addr, uint64_t size, enum sym_type type, void *arg),
		void *arg);

/* The symbol an address lies in and the module holding it; NULL name when none.
 * *offset is addr - symbol start. */
const char *sym_lookup(const struct tracee *p, uint64_t addr, uint64_t *offset, const struct module **mod);
const struct module *sym_module_at(const struct tracee *p, uint64_t addr);

/* Where a code address is, for a call stack: its function (the symbol table's name, not
 * demangled), source file and line (where DWARF line tables have them), module. Any field is
 * NULL (line 0) where unknown; the strings live until the next sym_refresh, except a file name
 * made whole with its compilation's directory, which is in the place's own file_whole. 0, or
 * -ENOENT when no module holds pc. */
struct sym_place {
	const char *function;
	const char *file;	/* a name in libdw's tables, or file_whole */
	int line;
	const char *module;	/* file name without directories */
	uint64_t module_offset;	/* pc from the module's load address */
	char file_whole[512];
};
int sym_describe(const struct tracee *p, uint64_t pc, struct sym_place *out);

/* libdw's session for p (a Dwfl *), NULL before sym_open: the unwinder
 * (unwind.c) works on the same modules. */
void *sym_dwfl(const struct tracee *p);

/* The modules, one after another: size_t cursor = 0; while ((m = sym_module_next(&cursor))). */
const struct module *sym_module_next(const struct tracee *p, size_t *cursor);

/* Room for a few bytes of code that the program never runs: the unused end of the last page
 * of an executable segment (past p_vaddr + p_memsz, up to the page's end, where no other
 * segment lies). Mapped executable with the segment, never used by the program. The run-time
 * address of `room` such bytes (16-aligned), or 0 if no module has them. */
uint64_t sym_exec_tail(const struct tracee *p, size_t room);

/* m's ELF file has a section of that name (from its section headers: no symbol is read). */
bool sym_has_section(const struct module *m, const char *name);
/* m is a program, not a library: it asks for a dynamic linker (PT_INTERP). glibc's libc.so.6,
 * which can run as a program, answers true too. */
bool sym_is_program(const struct module *m);

/* m's GNU build id: its length (*bits pointing at it, valid while m is), 0 if none, -1 on error. */
int sym_build_id(const struct module *m, const uint8_t **bits);

/* Address of a symbol defined in m, 0 if none. */
uint64_t sym_find(const struct module *m, const char *name);

#endif
