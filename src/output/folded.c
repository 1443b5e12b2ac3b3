/* folded.c — folded stacks (folded.h). A frame is its function, with "(file:line)" where the
 * line is known (as py-spy writes Python frames); ';' and line breaks in names, which would
 * break the format, become ':' and ' ', and bytes that are not UTF-8 become U+FFFD (utf8.h, the
 * rule of every output): the file is UTF-8 text. */
#include "folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"
#include "site_rows.h"
#include "stacks.h"
#include "utf8.h"

static const char metric_names[][20] = { "live-bytes", "allocated-bytes", "launches", "api-time" };

int folded_metric_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof metric_names / sizeof metric_names[0]); i++)
		if (strcmp(name, metric_names[i]) == 0)
			return i;
	return -1;
}

static void put_name(FILE *f, const char *s)
{
	size_t n = strlen(s);
	bool valid;

	for (size_t k = 0, step; k < n; k += step) {
		step = utf8_next(s + k, n - k, &valid);
		if (!valid)
			fputs(UTF8_REPLACEMENT, f);
		else if (step > 1)
			fwrite(s + k, 1, step, f);
		else
			fputc(s[k] == ';' ? ':' : s[k] == '\n' || s[k] == '\r' ? ' ' : s[k], f);
	}
}

static void put_frame(FILE *f, const struct stack_frame *fr)
{
	put_name(f, fr->function);
	if (fr->file && fr->line) {
		const char *slash = strrchr(fr->file, '/');
		fputs(" (", f);
		put_name(f, slash ? slash + 1 : fr->file);
		fprintf(f, ":%u)", fr->line);
	}
}

/* The stack, outermost first, then leaf (a kernel's name) if given, then the value. */
static void put_line(FILE *f, uint32_t id, const char *leaf, uint64_t value)
{
	const struct stack *st = stacks_get(id);
	if (!value)
		return;
	if (!st)
		fputs("[no stack]", f);
	for (uint32_t i = st ? st->n : 0; i-- > 0;) {
		put_frame(f, &st->frame[i]);
		if (i)
			fputc(';', f);
	}
	if (leaf) {
		fputc(';', f);
		put_name(f, leaf);
	}
	fprintf(f, " %" PRIu64 "\n", value);
}

static int live_bytes(FILE *f, const struct stats_snapshot *s, const struct stacks_snapshot *ss)
{
	struct rows rs;
	struct row_site *sites;
	if (rows_build(&rs, s, NULL) < 0)
		return -ENOMEM;
	long n = site_rows_build(&rs, ss, &sites);
	rows_free(&rs);
	if (n < 0)
		return (int)n;
	for (long i = 0; i < n; i++)
		put_line(f, sites[i].stack, NULL, sites[i].live_bytes);
	free(sites);
	return 0;
}

/* A kernel's launches split over its sites by their share of its samples (the first launch
 * of each kernel is one; --stacks launches samples more); the rest of the remainder goes to
 * its first site so that the sum stays its launch count. */
static void launches(FILE *f, const struct stats_snapshot *s, const struct stacks_snapshot *ss)
{
	for (size_t k = 0; k < s->n_kernel; k++) {
		const struct stats_kernel *kr = &s->kernel[k];
		uint64_t samples = 0, given = 0;
		if (!kr->launches)
			continue;
		for (size_t i = 0; i < ss->n_launch; i++)
			if (stacks_launch_site_of(&ss->launch[i], kr->name, s->pid))
				samples += ss->launch[i].samples;
		if (!samples) {
			put_line(f, STACK_NONE, kr->name, kr->launches);
			continue;
		}
		size_t first = ss->n_launch;
		for (size_t i = 0; i < ss->n_launch; i++) {
			if (!stacks_launch_site_of(&ss->launch[i], kr->name, s->pid))
				continue;
			if (first == ss->n_launch) {
				first = i;
				continue;
			}
			uint64_t v = (uint64_t)((double)kr->launches * (double)ss->launch[i].samples / (double)samples);
			given += v;
			put_line(f, ss->launch[i].stack, kr->name, v);
		}
		put_line(f, ss->launch[first].stack, kr->name, kr->launches - given);
	}
}

int folded_write(FILE *f, int metric, const struct stats_snapshot *s)
{
	struct stacks_snapshot ss;
	int err = stacks_snapshot(&ss);
	if (err)
		return err;
	switch (metric) {
	case FOLDED_LIVE_BYTES:
		err = live_bytes(f, s, &ss);
		break;
	case FOLDED_ALLOCATED_BYTES:
	case FOLDED_API_TIME:
		for (size_t i = 0; i < ss.n_counts; i++)
			put_line(f, ss.counts[i].stack, NULL,
				 metric == FOLDED_API_TIME ? ss.counts[i].ns : ss.counts[i].allocated_bytes);
		break;
	case FOLDED_LAUNCHES:
		launches(f, s, &ss);
		break;
	}
	stacks_snapshot_free(&ss);
	if (!err && (fflush(f) == EOF || ferror(f)))
		err = errno ? -errno : -EIO;
	return err;
}
