/* stack_text.c — call stacks as text (stack_text.h). */
#include "stack_text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "site_rows.h"

static void frame_text(char *buf, size_t n, const struct stack_frame *f, bool brief)
{
	const char *module = f->python ? "python" : f->module;
	const char *file = f->file, *slash = file && brief ? strrchr(file, '/') : NULL;
	int k = snprintf(buf, n, "%s", f->function ? f->function : "?");
	if (k >= 0 && (size_t)k < n && file && f->line)
		k += snprintf(buf + k, n - (size_t)k, " at %s:%u", slash ? slash + 1 : file, f->line);
	if (k >= 0 && (size_t)k < n && module)
		snprintf(buf + k, n - (size_t)k, " [%s]", module);
}

void stack_text_frame(char *buf, size_t n, const struct stack_frame *f)
{
	frame_text(buf, n, f, false);
}

void stack_text_frame_brief(char *buf, size_t n, const struct stack_frame *f)
{
	frame_text(buf, n, f, true);
}

void stack_text_sites(FILE *out, const struct rows *rs, size_t max, size_t max_frames)
{
	struct stacks_snapshot ss;
	struct row_site *sites;
	bool have = stacks_snapshot(&ss) == 0;
	long n = site_rows_build(rs, have ? &ss : NULL, &sites);
	if (have)
		stacks_snapshot_free(&ss);
	if (n <= 0) {
		if (n == 0)
			free(sites);
		return;
	}
	bool any = false;
	for (long i = 0; i < n; i++)
		any |= sites[i].stack != STACK_NONE;
	if (any)
		fprintf(out, "Live memory by allocation site:\n");
	for (long i = 0; any && i < n && (size_t)i < max; i++) {
		char bytes[FMT_LEN], age[FMT_LEN], line[1024];
		fmt_bytes(bytes, sizeof bytes, sites[i].live_bytes);
		fmt_age(age, sizeof age, sites[i].oldest_age_ns);
		fprintf(out, "%s in %" PRIu64 " allocation%s, oldest %s\n", bytes, sites[i].live_allocations,
			sites[i].live_allocations == 1 ? "" : "s", age);
		const struct stack *st = stacks_get(sites[i].stack);
		if (!st)
			fprintf(out, "    (no stack taken)\n");
		for (uint32_t k = 0; st && k < st->n && k < max_frames; k++) {
			stack_text_frame(line, sizeof line, &st->frame[k]);
			fprintf(out, "    %s\n", line);
		}
		if (st && (st->n > max_frames || st->truncated))
			fprintf(out, "    ...\n");
	}
	if (any && (size_t)n > max)
		fprintf(out, "... and %ld more sites\n", n - (long)max);
	free(sites);
}
