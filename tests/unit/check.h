/* check.h — the one reporting helper of the unit tests: check(ok, fmt, ...) prints
 * "ok - ..." or "not ok - ..." (what tests/run reads) and counts the failures in `failures`,
 * which main returns. Included once, by each test's .c file. */
#ifndef GPUTOP_TEST_CHECK_H
#define GPUTOP_TEST_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int failures;

__attribute__((format(printf, 2, 3)))
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failures += !ok;
}

#endif
