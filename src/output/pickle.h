/* pickle.h — a writer of Python's pickle format (protocol 2): None, booleans, integers of any
 * 64-bit value, floats, strings, lists and dicts, the subset that torch.cuda.memory._snapshot()
 * is made of (output/torch_snapshot.c writes one). Values are appended in the order a reader
 * meets them: a dict is pickle_dict_begin, then key and value after key and value, then
 * pickle_dict_end. Built in memory; an allocation that fails makes pickle_finish say -ENOMEM.
 * Strings pass base/utf8's rule (Python's reader refuses ill-formed UTF-8). Pure: no I/O. */
#ifndef GPUTOP_PICKLE_H
#define GPUTOP_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pickle {
	unsigned char *buf;
	size_t len, cap;
	int depth;		/* open lists and dicts */
	bool failed;		/* out of memory, or ended unbalanced */
};

void pickle_init(struct pickle *p);		/* the protocol's header */
void pickle_none(struct pickle *p);
void pickle_bool(struct pickle *p, bool v);
void pickle_int(struct pickle *p, int64_t v);
void pickle_uint(struct pickle *p, uint64_t v);
void pickle_float(struct pickle *p, double v);
void pickle_str(struct pickle *p, const char *s);	/* NULL: None */
void pickle_list_begin(struct pickle *p);
void pickle_list_end(struct pickle *p);
void pickle_tuple_begin(struct pickle *p);
void pickle_tuple_end(struct pickle *p);
void pickle_dict_begin(struct pickle *p);
void pickle_dict_end(struct pickle *p);
/* The end (STOP): 0 with the bytes in p->buf, p->len; -ENOMEM (out of memory) or -EINVAL (a
 * list or dict left open, or closed twice). */
int pickle_finish(struct pickle *p);
void pickle_free(struct pickle *p);

#endif
