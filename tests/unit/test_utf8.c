/* test_utf8.c — unit test of src/base/utf8.c: well-formed UTF-8 passes unchanged, and each
 * maximal ill-formed subpart becomes one U+FFFD (the cases are those of the Unicode standard's
 * section 3.9 and what Python's bytes.decode("utf-8", "replace") gives for them). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

#define R UTF8_REPLACEMENT

static void fixes(const char *in, const char *want, const char *what)
{
	char out[256];
	char *dup = utf8_fixed(in);

	utf8_fix(in, out, sizeof out);
	check(strcmp(out, want) == 0 && dup && strcmp(dup, want) == 0, "%s", what);
	check(utf8_valid(out), "%s: the result is well-formed", what);
	check(utf8_valid(in) == (strcmp(in, want) == 0), "%s: utf8_valid says whether it changes", what);
	free(dup);
}

int main(void)
{
	fixes("", "", "empty");
	fixes("plain ascii ;\"\\\x01\x7f", "plain ascii ;\"\\\x01\x7f", "ASCII, control characters included, unchanged");
	fixes("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
	      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", "2, 3 and 4-byte characters, U+10FFFF");
	fixes("prog\xff", "prog" R, "a lone 0xFF");
	fixes("\x80\xbf", R R, "two continuation bytes: one each");
	fixes("\xc0\xaf", R R, "an overlong '/' (C0 AF): two");
	fixes("\xe0\x80\xaf", R R R, "an overlong 3-byte form: three");
	fixes("\xed\xa0\x80", R R R, "a surrogate (ED A0 80): three");
	fixes("\xf4\x90\x80\x80", R R R R, "above U+10FFFF: four");
	fixes("\xf5\xf8\xfe", R R R, "F5, F8, FE: one each");
	fixes("a\xe2\x82z", "a" R "z", "a truncated 3-byte character: one");
	fixes("a\xf0\x9f\x98", "a" R, "a truncated 4-byte character at the end: one");
	fixes("\xe2\x82\xe2\x82\xac", R "\xe2\x82\xac", "a truncated character, then a whole one");
	fixes("\xc3", R, "a lone lead byte at the end");

	char small[8];
	check(utf8_fix("ab\xe6\x97\xa5\xe6\x9c\xac", small, 6) == 5 && strcmp(small, "ab\xe6\x97\xa5") == 0,
	      "cut at a character's boundary when it does not fit");
	check(utf8_fix("\xff\xff\xff", small, sizeof small) == 6, "U+FFFD takes 3 bytes each");
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
