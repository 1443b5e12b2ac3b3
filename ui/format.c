/* format.c — writes figures for every view (format.h): three significant digits, binary
 * units for sizes, decimal units for rates and counts. Pure functions of their arguments and
 * the ASCII flag; nothing here prints or reads statistics. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* strcasestr */
#endif
#include "format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fmt_ascii_only;

void fmt_set_ascii(bool ascii)
{
	fmt_ascii_only = ascii;
}

bool fmt_ascii(void)
{
	return fmt_ascii_only;
}

bool fmt_locale_utf8(void)
{
	/* The C library's precedence: LC_ALL overrides LC_CTYPE, which overrides LANG. */
	const char *names[] = { "LC_ALL", "LC_CTYPE", "LANG" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]);

		if (v && *v)
			return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
	}
	return false;
}

const char *fmt_dash(void)
{
	return fmt_ascii_only ? "-" : "\u2014";
}

const char *fmt_times(void)
{
	return fmt_ascii_only ? "x" : "\u00d7";
}

/* Decimals that leave three significant digits in v once rounded (v < 1 keeps two). */
static int fmt_decimals(double v)
{
	if (v * 100 + 0.5 < 1000)
		return 2;
	if (v * 10 + 0.5 < 1000)
		return 1;
	return 0;
}

/* v as it will print with fmt_decimals(v): lets callers move up a unit when rounding
 * reaches the next one (999.7 µs must read "1.00 ms", not "1000 µs"). */
static double fmt_rounded(double v)
{
	double scale = 1;

	if (v >= 1e15)		/* whole already, and beyond what a uint64_t cast can hold */
		return v;
	for (int d = fmt_decimals(v); d > 0; d--)
		scale *= 10;
	return (double)(uint64_t)(v * scale + 0.5) / scale;
}

/* v in units unit[0], divided by step until it fits; whole numbers in the first unit. Units are
 * characters, not pointers: the tables need no relocation and lie in .rodata. */
enum { FMT_UNIT = 8 };
static void fmt_scaled(char *buf, size_t n, double v, double step, const char (*unit)[FMT_UNIT],
		       int n_unit, const char *sep)
{
	int u = 0;

	while (u + 1 < n_unit && fmt_rounded(v) >= step) {
		v /= step;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%.0f%s%s", v, sep, unit[0]);
	else
		snprintf(buf, n, "%.*f%s%s", fmt_decimals(v), v, sep, unit[u]);
}

void fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
	static const char unit[][FMT_UNIT] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

	if (bytes < 1024) {	/* exact: a double would print the same, but say so */
		snprintf(buf, n, "%" PRIu64 " B", bytes);
		return;
	}
	fmt_scaled(buf, n, (double)bytes, 1024, unit, 7, " ");
}

void fmt_rate(char *buf, size_t n, uint64_t bytes, uint64_t ns)
{
	static const char unit[][FMT_UNIT] = { "B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s" };

	if (!ns) {
		snprintf(buf, n, "%s", fmt_dash());
		return;
	}
	fmt_scaled(buf, n, (double)bytes * 1e9 / (double)ns, 1000, unit, 6, " ");
}

void fmt_count(char *buf, size_t n, uint64_t v)
{
	static const char unit[][FMT_UNIT] = { "", "k", "M", "G", "T", "P", "E" };

	if (v < 1000) {
		snprintf(buf, n, "%" PRIu64, v);
		return;
	}
	fmt_scaled(buf, n, (double)v, 1000, unit, 7, "");
}

/* "2m05s" below an hour, "1h02m" above; s in whole seconds. */
static void fmt_clock(char *buf, size_t n, uint64_t s)
{
	if (s < 3600) {
		snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
		return;
	}
	uint64_t m = (s + 30) / 60;
	snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m", m / 60, m % 60);
}

void fmt_duration(char *buf, size_t n, uint64_t ns)
{
	const struct { double div, limit; const char *unit; } tier[] = {
		{ 1e3, 1000, fmt_ascii_only ? "us" : "\u00b5s" },
		{ 1e6, 1000, "ms" },
		{ 1e9, 60, "s" },
	};

	if (ns < 1000) {
		snprintf(buf, n, "%" PRIu64 " ns", ns);
		return;
	}
	for (size_t i = 0; i < sizeof(tier) / sizeof(tier[0]); i++) {
		double v = (double)ns / tier[i].div;

		if (fmt_rounded(v) < tier[i].limit) {
			snprintf(buf, n, "%.*f %s", fmt_decimals(v), v, tier[i].unit);
			return;
		}
	}
	fmt_clock(buf, n, (ns + 500000000) / 1000000000);
}

void fmt_age(char *buf, size_t n, uint64_t ns)
{
	uint64_t s = (ns + 500000000) / 1000000000;

	if (ns < 9950000000u)
		snprintf(buf, n, "%.1fs", (double)ns / 1e9);
	else if (s < 60)
		snprintf(buf, n, "%" PRIu64 "s", s);
	else if (s < 86400)
		fmt_clock(buf, n, s);
	else
		snprintf(buf, n, "%" PRIu64 "d%02" PRIu64 "h", (s + 1800) / 86400,
			 (s + 1800) / 3600 % 24);
}

void fmt_sparkline(char *buf, size_t size, const double *v, int n, double max)
{
	static const char block[][4] = { "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = " .:-=+*#";
	size_t used = 0;

	if (!size)
		return;
	if (max <= 0)
		for (int i = 0; i < n; i++)
			max = v[i] > max ? v[i] : max;
	for (int i = 0; i < n; i++) {
		/* Level 0 only for nothing at all: any activity shows at least one step. */
		int level = 0;
		const char *s;
		char one[2] = { 0 };

		if (v[i] > 0 && max > 0) {
			level = 1 + (int)(v[i] / max * 6.999);
			level = level > 7 ? 7 : level;
		}
		if (fmt_ascii_only) {
			one[0] = ascii[level];
			s = one;
		} else {
			s = block[level];
		}
		if (used + strlen(s) + 1 > size)
			break;
		memcpy(buf + used, s, strlen(s));
		used += strlen(s);
	}
	buf[used] = '\0';
}

void fmt_percent(char *buf, size_t n, uint64_t part, uint64_t whole)
{
	if (!whole)
		snprintf(buf, n, "%s", fmt_dash());
	else
		snprintf(buf, n, "%.1f%%", (double)part * 100.0 / (double)whole);
}

static bool fmt_is_lead_byte(char c)
{
	return ((unsigned char)c & 0xc0) != 0x80;
}

int fmt_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += fmt_is_lead_byte(*s);
	return w;
}

/* Bytes of the longest prefix of s with at most cols code points and max bytes. */
static size_t fmt_prefix(const char *s, int cols, size_t max)
{
	size_t end = 0;		/* the last code point boundary seen */
	int seen = 0;

	for (size_t i = 0;; i++) {
		if (s[i] && !fmt_is_lead_byte(s[i]))
			continue;
		if (i > max)
			return end;
		end = i;
		if (!s[i] || seen == cols)
			return end;
		seen++;
	}
}

void fmt_truncate(char *buf, size_t n, const char *s, int width)
{
	const char *ell = fmt_ascii_only ? "..." : "\u2026";
	int ell_w = fmt_width(ell);
	size_t len;

	if (!n)
		return;
	if (width < 0)
		width = 0;
	if (fmt_width(s) <= width) {
		len = fmt_prefix(s, width, n - 1);
		memcpy(buf, s, len);
		buf[len] = '\0';
		return;
	}
	if (width < ell_w || strlen(ell) >= n) {	/* no room for the mark: just cut */
		len = fmt_prefix(s, width, n - 1);
		memcpy(buf, s, len);
		buf[len] = '\0';
		return;
	}
	len = fmt_prefix(s, width - ell_w, n - 1 - strlen(ell));
	memcpy(buf, s, len);
	strcpy(buf + len, ell);
}

void fmt_skip(char *buf, size_t n, const char *s, int cols)
{
	const char *ell = fmt_ascii_only ? "..." : "\u2026";

	if (cols <= 0) {
		snprintf(buf, n, "%s", s);
		return;
	}
	/* the ellipsis takes the place of the last columns skipped */
	for (int skip = cols + fmt_width(ell); *s && skip > 0; skip--)
		for (s++; *s && !fmt_is_lead_byte(*s); s++)
			;
	snprintf(buf, n, "%s%s", ell, s);
}
