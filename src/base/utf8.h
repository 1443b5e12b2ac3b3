/* utf8.h — the one rule for text gputop writes but does not control (program, kernel, file and
 * thread names): a byte sequence that is not well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) becomes U+FFFD, one for each maximal ill-formed subpart,
 * as Unicode advises and Python's errors="replace" does. Every JSON and text output applies it
 * (json_writer.h, timeline.c, folded.c), so that a strict reader never fails. Pure functions. */
#ifndef GPUTOP_UTF8_H
#define GPUTOP_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#define UTF8_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD, 3 bytes */

/* The next n bytes at s (n >= 1): returns how many bytes the next unit takes (1 to 4), and in
 * *valid whether they are one well-formed character (else one ill-formed subpart, to be
 * written as U+FFFD). */
size_t utf8_next(const char *s, size_t n, bool *valid);

/* Whether the NUL-terminated s is well-formed UTF-8. */
bool utf8_valid(const char *s);

/* s with the rule applied, into out of size bytes (NUL-terminated, cut at a character's
 * boundary when it does not fit): its length. A fixed string is at most 3 times as long. */
size_t utf8_fix(const char *s, char *out, size_t size);

/* s with the rule applied, in memory the caller frees; NULL when out of memory. */
char *utf8_fixed(const char *s);

#endif
