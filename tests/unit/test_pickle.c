/* test_pickle.c — unit test of src/output/pickle.c: what it writes is read back by python3's own
 * pickle module and compared, by repr (types included: True is not 1), with the Python value
 * the same calls stand for. Integers at every opcode's edges, floats, strings (ill-formed UTF-8
 * made U+FFFD), nesting, empty containers; an unbalanced end refused. */
#include "pickle.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Whether python3 reads p's bytes as the value of the Python expression want. */
static bool python_reads(struct pickle *p, const char *want, const char *what)
{
	char path[] = "/tmp/gputop-test-pickle.XXXXXX";
	int fd = mkstemp(path);
	int rc = pickle_finish(p);
	if (fd < 0 || rc != 0 || write(fd, p->buf, p->len) != (ssize_t)p->len) {
		check(false, "%s: written (finish %d)", what, rc);
		if (fd >= 0)
			close(fd), unlink(path);
		return false;
	}
	close(fd);
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import pickle,sys; v=pickle.load(open(sys.argv[1],\"rb\")); w=%s; "
		 "sys.exit(0 if repr(v)==repr(w) else print(repr(v)[:2000], \"!=\", repr(w)[:2000]) or 1)' %s",
		 want, path);
	int st = system(cmd);
	unlink(path);
	check(st == 0, "%s: python3's pickle reads %s", what, strlen(want) < 80 ? want : "it");
	return st == 0;
}

static void ints(void)
{
	static const int64_t s[] = { 0, 1, 255, 256, 65535, 65536, 2147483647LL, 2147483648LL, 4294967295LL,
				     4294967296LL, INT64_MAX, -1, -128, -129, -32768, -2147483648LL, -2147483649LL,
				     INT64_MIN };
	static const uint64_t u[] = { 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
				      0x7f0000001000ull, 0x80ull, 0x8000ull, 0x800000ull, 0x80000000ull };
	char want[2048] = "[";
	struct pickle p;
	pickle_init(&p);
	pickle_list_begin(&p);
	for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
		pickle_int(&p, s[i]);
		snprintf(want + strlen(want), sizeof want - strlen(want), "%lld,", (long long)s[i]);
	}
	for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
		pickle_uint(&p, u[i]);
		snprintf(want + strlen(want), sizeof want - strlen(want), "%llu,", (unsigned long long)u[i]);
	}
	pickle_list_end(&p);
	strcat(want, "]");
	python_reads(&p, want, "integers at every opcode's edges, signed and unsigned");
	pickle_free(&p);
}

static void scalars(void)
{
	struct pickle p;
	pickle_init(&p);
	pickle_list_begin(&p);
	pickle_none(&p);
	pickle_bool(&p, true);
	pickle_bool(&p, false);
	pickle_float(&p, 0.1);
	pickle_float(&p, -2.5e300);
	pickle_float(&p, INFINITY);
	pickle_str(&p, "");
	pickle_str(&p, "caf\xc3\xa9 \xf0\x9f\x98\x80 \"quote\" 'apostrophe'\n");
	pickle_str(&p, "bad\xff");
	pickle_str(&p, NULL);
	pickle_list_end(&p);
	python_reads(&p, "[None,True,False,0.1,-2.5e300,float(\"inf\"),\"\",\"caf\\u00e9 \\U0001F600 \\\"quote\\\" \\x27apostrophe\\x27\\n\","
		     "\"bad\\ufffd\",None]", "None, booleans, floats, strings, ill-formed UTF-8");
	pickle_free(&p);
}

static void nested(void)
{
	struct pickle p;
	pickle_init(&p);
	pickle_dict_begin(&p);
	pickle_str(&p, "segments");
	pickle_list_begin(&p);
	for (int i = 0; i < 3; i++) {
		pickle_dict_begin(&p);
		pickle_str(&p, "address");
		pickle_uint(&p, 0x7f0000000000ull + (uint64_t)i * 0x200000);
		pickle_str(&p, "blocks");
		pickle_list_begin(&p);
		pickle_list_end(&p);
		pickle_str(&p, "frames");
		pickle_dict_begin(&p);
		pickle_dict_end(&p);
		pickle_str(&p, "pool");
		pickle_tuple_begin(&p);
		pickle_int(&p, i);
		pickle_int(&p, -i);
		pickle_tuple_end(&p);
		pickle_dict_end(&p);
	}
	pickle_list_end(&p);
	pickle_str(&p, "device_traces");
	pickle_list_begin(&p);
	pickle_list_begin(&p);
	pickle_list_end(&p);
	pickle_list_end(&p);
	pickle_dict_end(&p);
	python_reads(&p, "{\"segments\":[{\"address\":0x7f0000000000+i*0x200000,\"blocks\":[],\"frames\":{},\"pool\":(i,-i)} for i in range(3)],"
		     "\"device_traces\":[[]]}", "dicts in lists in a dict, tuples, empty containers");
	pickle_free(&p);

	/* Many items: Python's own pickler cuts runs at 1,000; the reader takes any. */
	pickle_init(&p);
	pickle_list_begin(&p);
	for (int i = 0; i < 5000; i++)
		pickle_int(&p, i * 1000003LL);
	pickle_list_end(&p);
	python_reads(&p, "[i*1000003 for i in range(5000)]", "a list of 5,000");
	pickle_free(&p);
}

static void unbalanced(void)
{
	struct pickle p;
	pickle_init(&p);
	pickle_list_begin(&p);
	check(pickle_finish(&p) == -EINVAL, "a list left open: -EINVAL");
	pickle_free(&p);
	pickle_init(&p);
	pickle_dict_end(&p);
	check(pickle_finish(&p) == -EINVAL, "a dict closed that was not open: -EINVAL");
	pickle_free(&p);
}

int main(void)
{
	ints();
	scalars();
	nested();
	unbalanced();
	return failures != 0;
}
