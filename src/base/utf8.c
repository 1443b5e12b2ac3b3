/* utf8.c — well-formed UTF-8, and U+FFFD for what is not (utf8.h). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* The range of the second byte after lead byte c (the Unicode standard's table 3-7), and the
 * sequence's length; 0 for a byte that cannot start one (a continuation byte, C0, C1, F5-FF). */
static size_t lead(unsigned char c, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80, *hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef) {
		if (c == 0xe0)
			*lo = 0xa0;	/* no overlong form */
		else if (c == 0xed)
			*hi = 0x9f;	/* no surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (c == 0xf0)
			*lo = 0x90;	/* no overlong form */
		else if (c == 0xf4)
			*hi = 0x8f;	/* nothing above U+10FFFF */
		return 4;
	}
	return 0;
}

size_t utf8_next(const char *s, size_t n, bool *valid)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo, hi;
	size_t len, i;

	*valid = true;
	if (p[0] < 0x80)
		return 1;
	len = lead(p[0], &lo, &hi);
	for (i = 1; i < len && i < n; i++) {
		if (p[i] < lo || p[i] > hi)
			break;
		lo = 0x80, hi = 0xbf;
	}
	*valid = len && i == len;
	return len ? i : 1;	/* an ill-formed subpart ends at the first byte that cannot follow */
}

bool utf8_valid(const char *s)
{
	while (*s && (unsigned char)*s < 0x80)	/* ASCII, most names: nothing more to look at */
		s++;
	size_t n = strlen(s);
	bool valid = true;

	for (size_t k = 0; k < n && valid;)
		k += utf8_next(s + k, n - k, &valid);
	return valid;
}

size_t utf8_fix(const char *s, char *out, size_t size)
{
	size_t n = strlen(s), len = 0;
	bool valid;

	if (!size)
		return 0;
	for (size_t k = 0, step; k < n; k += step) {
		step = utf8_next(s + k, n - k, &valid);
		const char *put = valid ? s + k : UTF8_REPLACEMENT;
		size_t put_len = valid ? step : sizeof UTF8_REPLACEMENT - 1;
		if (len + put_len >= size)
			break;
		memcpy(out + len, put, put_len);
		len += put_len;
	}
	out[len] = 0;
	return len;
}

char *utf8_fixed(const char *s)
{
	size_t size = 3 * strlen(s) + 1;
	char *out = malloc(size);

	if (out)
		utf8_fix(s, out, size);
	return out;
}
