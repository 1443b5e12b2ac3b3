/* json_writer.h — the one way gputop writes JSON (--json, --json-interval, --timeline): values
 * built with jansson and written by it, every string through jw_text, which applies utf8.h's
 * rule (bytes that are not UTF-8 become U+FFFD). A document is built in the order of the calls,
 * as with a streaming writer: jw_open, then jw_key and a value for each member of an object
 * (members keep that order), jw_close; then jw_dump. Not thread-safe: one struct jw per
 * document. */
#ifndef GPUTOP_JSON_WRITER_H
#define GPUTOP_JSON_WRITER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

struct jw {
	json_t *root;
	json_t *open[JW_MAX_DEPTH];	/* the objects and arrays not closed yet, innermost last */
	int depth;
	const char *key;		/* the member the next value is (in an object) */
	bool failed;			/* out of memory: the document is not whole */
};

/* A JSON string of s by the one rule; null when s is NULL. NULL only when out of memory. */
json_t *jw_text(const char *s);

void jw_open(struct jw *w, char c);	/* '{' or '[' */
void jw_close(struct jw *w);
void jw_key(struct jw *w, const char *key);	/* a literal of ours: ASCII */
void jw_str(struct jw *w, const char *s);	/* NULL: null */
void jw_u64(struct jw *w, uint64_t v);		/* above INT64_MAX: INT64_MAX (jansson's limit) */
void jw_int(struct jw *w, long long v);
void jw_double(struct jw *w, double v);		/* NaN or infinite: null */
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/* The value when known is true, else null: the figures readers must not mistake for 0. */
void jw_u64_if(struct jw *w, bool known, uint64_t v);
void jw_int_if(struct jw *w, bool known, long long v);
void jw_double_if(struct jw *w, bool known, double v);
void jw_dim3(struct jw *w, const uint32_t v[3]);	/* [x, y, z] */
/* A call stack (stacks.h): its frames, innermost first; null when none was taken. */
void jw_stack(struct jw *w, uint32_t id);

/* Writes the document with jansson's flags (JSON_INDENT, JSON_COMPACT, JSON_REAL_PRECISION).
 * jw_dump: to f, 0 or -errno. jw_dumpb: into buf of size bytes (not NUL-terminated), the
 * length it needs (more than size: nothing useful written), 0 on failure. */
int jw_dump(struct jw *w, FILE *f, size_t flags);
size_t jw_dumpb(struct jw *w, char *buf, size_t size, size_t flags);
void jw_free(struct jw *w);	/* the document; w can build another */

#endif
