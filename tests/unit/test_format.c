/* test_format.c — unit test of ui/format.c: every figure a view prints, checked exactly.
 * Standalone (links ui/format.c only); prints one "ok"/"not ok" line per check. */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check_str(const char *what, const char *got, const char *want)
{
	bool ok = strcmp(got, want) == 0;

	printf("%s - %s -> %s", ok ? "ok" : "not ok", what, want);
	if (!ok)
		printf(" (got \"%s\")", got);
	putchar('\n');
	failures += !ok;
}

static void check(const char *what, bool ok)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

#define EXPECT(fn, arg, want)                                   \
	do {                                                    \
		char buf_[FMT_LEN];                             \
		fn(buf_, sizeof(buf_), arg);                    \
		check_str(#fn " " #arg, buf_, want);            \
	} while (0)

#define EXPECT_RATE(bytes, ns, want)                            \
	do {                                                    \
		char buf_[FMT_LEN];                             \
		fmt_rate(buf_, sizeof(buf_), bytes, ns);        \
		check_str("fmt_rate " #bytes " in " #ns, buf_, want); \
	} while (0)

static void test_bytes(void)
{
	EXPECT(fmt_bytes, 0, "0 B");
	EXPECT(fmt_bytes, 512, "512 B");
	EXPECT(fmt_bytes, 1023, "1023 B");
	EXPECT(fmt_bytes, 1024, "1.00 KiB");
	EXPECT(fmt_bytes, 1536, "1.50 KiB");
	EXPECT(fmt_bytes, 10239, "10.0 KiB");		/* 9.999 KiB rounds up a digit */
	EXPECT(fmt_bytes, 102400, "100 KiB");
	EXPECT(fmt_bytes, 1048500, "1.00 MiB");		/* 1023.9 KiB: next unit, not "1024 KiB" */
	EXPECT(fmt_bytes, 64ull << 20, "64.0 MiB");
	EXPECT(fmt_bytes, 2ull << 30, "2.00 GiB");
	EXPECT(fmt_bytes, 3ull << 40, "3.00 TiB");
	EXPECT(fmt_bytes, UINT64_MAX, "16.0 EiB");
}

static void test_rate(void)
{
	EXPECT_RATE(1000, 0, "\u2014");
	EXPECT_RATE(12300000000ull, 1000000000ull, "12.3 GB/s");
	EXPECT_RATE(64ull << 20, 5000000ull, "13.4 GB/s");	/* 64 MiB in 5 ms */
	EXPECT_RATE(500000000ull, 1000000000ull, "500 MB/s");
	EXPECT_RATE(1500000000000ull, 1000000000ull, "1.50 TB/s");
	EXPECT_RATE(0, 1, "0 B/s");
	EXPECT_RATE(999990000ull, 1000000000ull, "1.00 GB/s");
}

static void test_duration(void)
{
	EXPECT(fmt_duration, 0, "0 ns");
	EXPECT(fmt_duration, 850, "850 ns");
	EXPECT(fmt_duration, 1000, "1.00 \u00b5s");
	EXPECT(fmt_duration, 12400, "12.4 \u00b5s");
	EXPECT(fmt_duration, 999999, "1.00 ms");		/* rounding moves it up a unit */
	EXPECT(fmt_duration, 3210000, "3.21 ms");
	EXPECT(fmt_duration, 1500000000ull, "1.50 s");
	EXPECT(fmt_duration, 59960000000ull, "1m00s");
	EXPECT(fmt_duration, 125000000000ull, "2m05s");
	EXPECT(fmt_duration, 3720000000000ull, "1h02m");
	fmt_set_ascii(true);
	EXPECT(fmt_duration, 12400, "12.4 us");
	EXPECT_RATE(1, 0, "-");
	fmt_set_ascii(false);
}

static void test_count_age(void)
{
	EXPECT(fmt_count, 0, "0");
	EXPECT(fmt_count, 999, "999");
	EXPECT(fmt_count, 1000, "1.00k");
	EXPECT(fmt_count, 12345, "12.3k");
	EXPECT(fmt_count, 999999, "1.00M");
	EXPECT(fmt_count, 4560000, "4.56M");
	EXPECT(fmt_age, 400000000, "0.4s");
	EXPECT(fmt_age, 42000000000ull, "42s");
	EXPECT(fmt_age, 125000000000ull, "2m05s");
	EXPECT(fmt_age, 3720000000000ull, "1h02m");
	EXPECT(fmt_age, (3 * 86400 + 4 * 3600) * 1000000000ull, "3d04h");
}

static void test_truncate(void)
{
	char buf[64];

	fmt_truncate(buf, sizeof(buf), "abcdef", 6);
	check_str("fmt_truncate fits", buf, "abcdef");
	fmt_truncate(buf, sizeof(buf), "abcdef", 4);
	check_str("fmt_truncate cut", buf, "abc\u2026");
	check("fmt_width of a cut name is its column count", fmt_width(buf) == 4);
	fmt_truncate(buf, sizeof(buf), "caf\u00e9-au-lait", 5);
	check_str("fmt_truncate counts code points", buf, "caf\u00e9\u2026");
	fmt_truncate(buf, 4, "abcdef", 10);
	check_str("fmt_truncate bounded by the buffer", buf, "abc");
	fmt_set_ascii(true);
	fmt_truncate(buf, sizeof(buf), "abcdef", 4);
	check_str("fmt_truncate ascii", buf, "a...");
	check_str("fmt_dash ascii", fmt_dash(), "-");
	fmt_set_ascii(false);
}

static void test_locale(void)
{
	setenv("LC_ALL", "C", 1);
	setenv("LANG", "en_US.UTF-8", 1);
	check("LC_ALL=C overrides a UTF-8 LANG", !fmt_locale_utf8());
	unsetenv("LC_ALL");
	unsetenv("LC_CTYPE");
	check("LANG=en_US.UTF-8 is UTF-8", fmt_locale_utf8());
	setenv("LC_CTYPE", "de_DE.utf8", 1);
	setenv("LANG", "C", 1);
	check("LC_CTYPE=de_DE.utf8 is UTF-8", fmt_locale_utf8());
	unsetenv("LC_CTYPE");
	check("LANG=C is not UTF-8", !fmt_locale_utf8());
}

int main(void)
{
	test_bytes();
	test_rate();
	test_duration();
	test_count_age();
	test_truncate();
	test_locale();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
