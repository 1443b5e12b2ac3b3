/* json_writer.c — JSON documents built and written with jansson (json_writer.h). */
#include "json_writer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stacks.h"
#include "utf8.h"

json_t *jw_text(const char *s)
{
	if (!s)
		return json_null();
	if (utf8_valid(s))
		return json_string_nocheck(s);
	char *fixed = utf8_fixed(s);
	json_t *v = fixed ? json_string_nocheck(fixed) : NULL;
	free(fixed);
	return v;
}

/* Adds v (a new reference, which this takes) where the document is: the root, the next element
 * of the innermost array, or the member of the innermost object jw_key named. */
static bool jw_add(struct jw *w, json_t *v)
{
	int err = -1;

	if (!v) {
		w->failed = true;
		return false;
	}
	if (!w->depth && !w->root) {
		w->root = v;
		return true;
	}
	json_t *in = w->depth ? w->open[w->depth - 1] : NULL;
	if (json_is_array(in))
		err = json_array_append_new(in, v);
	else if (json_is_object(in) && w->key)
		err = json_object_set_new_nocheck(in, w->key, v);
	else
		json_decref(v);	/* a second root, or a value without its key: a bug of the caller's */
	w->key = NULL;
	if (err)
		w->failed = true;
	return !err;
}

void jw_open(struct jw *w, char c)
{
	json_t *v = c == '{' ? json_object() : json_array();

	if (w->depth == JW_MAX_DEPTH) {
		json_decref(v);
		w->failed = true;
		return;
	}
	json_incref(v);	/* kept while open, added (and so owned) by its parent */
	if (!jw_add(w, v)) {
		json_decref(v);
		v = NULL;
	}
	w->open[w->depth++] = v;	/* NULL: what goes into it is dropped (failed is set) */
}

void jw_close(struct jw *w)
{
	if (w->depth > 0)
		json_decref(w->open[--w->depth]);
}

void jw_key(struct jw *w, const char *key)
{
	w->key = key;
}

void jw_str(struct jw *w, const char *s)
{
	jw_add(w, jw_text(s));
}

void jw_u64(struct jw *w, uint64_t v)
{
	jw_add(w, json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v));
}

void jw_int(struct jw *w, long long v)
{
	jw_add(w, json_integer(v));
}

void jw_double(struct jw *w, double v)
{
	jw_add(w, isfinite(v) ? json_real(v) : json_null());	/* JSON has no NaN or infinity */
}

void jw_bool(struct jw *w, bool v)
{
	jw_add(w, json_boolean(v));
}

void jw_null(struct jw *w)
{
	jw_add(w, json_null());
}

void jw_u64_if(struct jw *w, bool known, uint64_t v)
{
	if (known)
		jw_u64(w, v);
	else
		jw_null(w);
}

void jw_int_if(struct jw *w, bool known, long long v)
{
	if (known)
		jw_int(w, v);
	else
		jw_null(w);
}

void jw_double_if(struct jw *w, bool known, double v)
{
	if (known)
		jw_double(w, v);
	else
		jw_null(w);
}

void jw_dim3(struct jw *w, const uint32_t v[3])
{
	jw_open(w, '[');
	for (int i = 0; i < 3; i++)
		jw_u64(w, v[i]);
	jw_close(w);
}

int jw_dump(struct jw *w, FILE *f, size_t flags)
{
	if (w->failed || !w->root)
		return -ENOMEM;
	errno = 0;
	if (json_dumpf(w->root, f, flags) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

size_t jw_dumpb(struct jw *w, char *buf, size_t size, size_t flags)
{
	return w->failed || !w->root ? 0 : json_dumpb(w->root, buf, size, flags);
}

void jw_free(struct jw *w)
{
	while (w->depth > 0)
		jw_close(w);
	json_decref(w->root);
	*w = (struct jw){ 0 };
}

void jw_stack(struct jw *w, uint32_t id)
{
	const struct stack *st = stacks_get(id);
	if (!st) {
		jw_null(w);
		return;
	}
	jw_open(w, '[');
	for (uint32_t i = 0; i < st->n; i++) {
		const struct stack_frame *f = &st->frame[i];
		jw_open(w, '{');
		jw_key(w, "function");
		jw_str(w, f->function);
		jw_key(w, "file");
		if (f->file)
			jw_str(w, f->file);
		else
			jw_null(w);
		jw_key(w, "line");
		jw_u64_if(w, f->line, f->line);
		jw_key(w, "module");
		if (f->module)
			jw_str(w, f->module);
		else
			jw_null(w);
		jw_key(w, "python");
		jw_bool(w, f->python);
		jw_close(w);
	}
	jw_close(w);
}
