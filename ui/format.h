/* format.h — how gputop writes numbers, once for every view (TUI, batch): sizes, rates,
 * durations, counts, ages, and cutting text to a column. Pure functions; the only state is
 * whether to stay within ASCII. Nothing here prints or reads statistics. */
#ifndef GPUTOP_FORMAT_H
#define GPUTOP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Big enough for any figure below (the longest is a duration of many hours). */
#define FMT_LEN 32

void fmt_set_ascii(bool ascii);	/* "us" for µs, "-" for —, "..." for …, "x" for × */
bool fmt_ascii(void);
bool fmt_locale_utf8(void);	/* LC_ALL, else LC_CTYPE, else LANG names UTF-8 */

void fmt_bytes(char *buf, size_t n, uint64_t bytes);	/* "512 B", "1.50 KiB", "2.00 GiB" */
void fmt_rate(char *buf, size_t n, uint64_t bytes, uint64_t ns);	/* "12.3 GB/s"; "—" if ns 0 */
void fmt_duration(char *buf, size_t n, uint64_t ns);	/* "850 ns", "12.4 µs", "2m05s" */
void fmt_count(char *buf, size_t n, uint64_t v);	/* "999", "12.3k", "4.56M" */
void fmt_age(char *buf, size_t n, uint64_t ns);		/* "0.4s", "42s", "2m05s", "1h02m", "3d04h" */

const char *fmt_dash(void);	/* "—", the mark for "not known" */
const char *fmt_times(void);	/* "×" */

/* A sparkline of n values (oldest first), one column each, scaled to max (the largest value
 * when max <= 0): Unicode blocks "▁▂▃▄▅▆▇█", or " .:-=+*#" in ASCII; zero stays blank-ish
 * ("▁" / " ") so that an idle minute reads as flat. buf needs 3 * n + 1 bytes. */
void fmt_sparkline(char *buf, size_t size, const double *v, int n, double max);
/* "12.3%" of part in whole; the dash when whole is 0. */
void fmt_percent(char *buf, size_t n, uint64_t part, uint64_t whole);

/* Columns s takes on a terminal (one per code point; names are not East Asian wide). */
int fmt_width(const char *s);
/* Copies s into buf cut to at most width columns, ending in "…" when cut. */
void fmt_truncate(char *buf, size_t n, const char *s, int width);
/* Copies s into buf without its first cols columns (a name scrolled sideways), starting with
 * "…" in their place; s whole when cols is 0. */
void fmt_skip(char *buf, size_t n, const char *s, int cols);

#endif
