/* sym_index.h — a module's function symbols sorted by address, for naming a pc in O(log n)
 * (sym_index.c). */
#ifndef GPUTOP_SYM_INDEX_H
#define GPUTOP_SYM_INDEX_H

#include <stdint.h>

struct sym_index;

/* The index of dwfl_module's symbols at their run-time addresses; NULL when it has none or
 * memory ran out. */
struct sym_index *sym_index_build(void *dwfl_module);
/* The name of the function holding pc (a sized symbol around it, else a sizeless one just
 * before it), NULL if none: the name lives as long as the module's ELF; its address in *start
 * (when start is not NULL). */
const char *sym_index_lookup(const struct sym_index *ix, uint64_t pc, uint64_t *start);
void sym_index_free(struct sym_index *ix);

#endif
