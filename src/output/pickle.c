/* pickle.c — Python's pickle format, protocol 2 (pickletools' opcodes: PROTO, NONE, NEWTRUE,
 * NEWFALSE, BININT1/2, BININT, LONG1, BINFLOAT, BINUNICODE, EMPTY_LIST/DICT, MARK, APPENDS,
 * SETITEMS, TUPLE, STOP). No memo: nothing is shared, so nothing is referred to twice. */
#include "pickle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

enum {
	OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M',
	OP_NONE = 'N', OP_BINUNICODE = 'X', OP_APPENDS = 'e', OP_EMPTY_DICT = '}',
	OP_EMPTY_LIST = ']', OP_SETITEMS = 'u', OP_BINFLOAT = 'G', OP_PROTO = 0x80,
	OP_TUPLE = 't', OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a,
};

static void put(struct pickle *p, const void *bytes, size_t n)
{
	if (p->failed)
		return;
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;
		while (cap < p->len + n)
			cap *= 2;
		unsigned char *b = realloc(p->buf, cap);
		if (!b) {
			p->failed = true;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, bytes, n);
	p->len += n;
}

static void op(struct pickle *p, unsigned char code)
{
	put(p, &code, 1);
}

/* n bytes of v, little-endian. */
static void put_le(struct pickle *p, uint64_t v, int n)
{
	unsigned char b[8];
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(p, b, (size_t)n);
}

void pickle_init(struct pickle *p)
{
	*p = (struct pickle){ 0 };
	op(p, OP_PROTO);
	op(p, 2);
}

void pickle_none(struct pickle *p)
{
	op(p, OP_NONE);
}

void pickle_bool(struct pickle *p, bool v)
{
	op(p, v ? OP_NEWTRUE : OP_NEWFALSE);
}

/* LONG1: a length byte, then the value in two's complement, little-endian, as short as it goes
 * (9 bytes for an unsigned value of 2^63 or more: a sign byte of 0). */
static void put_long1(struct pickle *p, uint64_t v, bool negative)
{
	int n = 8;
	if (!negative) {
		n = 1;
		while (n < 8 && (v >> (8 * n - 1)) != 0)
			n++;
		if (n == 8 && (v >> 63))
			n = 9;
	}
	op(p, OP_LONG1);
	op(p, (unsigned char)n);
	put_le(p, v, n > 8 ? 8 : n);
	if (n == 9)
		op(p, 0);
}

void pickle_uint(struct pickle *p, uint64_t v)
{
	if (v < 0x100) {
		op(p, OP_BININT1);
		op(p, (unsigned char)v);
	} else if (v < 0x10000) {
		op(p, OP_BININT2);
		put_le(p, v, 2);
	} else if (v < 0x80000000u) {
		op(p, OP_BININT);
		put_le(p, v, 4);
	} else {
		put_long1(p, v, false);
	}
}

void pickle_int(struct pickle *p, int64_t v)
{
	if (v >= 0) {
		pickle_uint(p, (uint64_t)v);
	} else if (v >= INT32_MIN) {
		op(p, OP_BININT);
		put_le(p, (uint64_t)v, 4);
	} else {
		put_long1(p, (uint64_t)v, true);
	}
}

void pickle_float(struct pickle *p, double v)
{
	uint64_t bits;
	unsigned char b[8];
	memcpy(&bits, &v, sizeof bits);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(bits >> (56 - 8 * i));	/* big-endian */
	op(p, OP_BINFLOAT);
	put(p, b, sizeof b);
}

void pickle_str(struct pickle *p, const char *s)
{
	if (!s) {
		pickle_none(p);
		return;
	}
	char *fixed = utf8_valid(s) ? NULL : utf8_fixed(s);
	const char *t = fixed ? fixed : s;
	size_t n = strlen(t);
	if (!utf8_valid(t) || n > UINT32_MAX) {
		free(fixed);
		p->failed = true;
		return;
	}
	op(p, OP_BINUNICODE);
	put_le(p, n, 4);
	put(p, t, n);
	free(fixed);
}

void pickle_list_begin(struct pickle *p)
{
	op(p, OP_EMPTY_LIST);
	op(p, OP_MARK);
	p->depth++;
}

void pickle_list_end(struct pickle *p)
{
	op(p, OP_APPENDS);
	p->depth--;
}

void pickle_tuple_begin(struct pickle *p)
{
	op(p, OP_MARK);
	p->depth++;
}

void pickle_tuple_end(struct pickle *p)
{
	op(p, OP_TUPLE);
	p->depth--;
}

void pickle_dict_begin(struct pickle *p)
{
	op(p, OP_EMPTY_DICT);
	op(p, OP_MARK);
	p->depth++;
}

void pickle_dict_end(struct pickle *p)
{
	op(p, OP_SETITEMS);
	p->depth--;
}

int pickle_finish(struct pickle *p)
{
	op(p, OP_STOP);
	if (p->failed)
		return -ENOMEM;
	return p->depth ? -EINVAL : 0;
}

void pickle_free(struct pickle *p)
{
	free(p->buf);
	*p = (struct pickle){ 0 };
}
