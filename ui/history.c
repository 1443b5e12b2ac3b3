/* history.c — per-second ring buffers of a few figures (history.h). Pure bookkeeping on
 * snapshots the caller passes in; the UI thread owns the structure, so no locking. */
#include "history.h"
#include "rows.h"

#include <string.h>

#define SECOND_NS 1000000000ull

static uint64_t history_xfer_bytes(const struct stats_snapshot *s, enum copy_dir d)
{
	uint64_t b = 0;

	for (int m = 0; m < COPY_MODE_COUNT; m++)
		b += s->xfer[m][d].bytes;
	return b;
}

/* The counter (or level) behind each series, as the snapshot has it now. */
static void history_counters(const struct stats_snapshot *s, uint64_t out[HIST_COUNT])
{
	uint64_t calls = 0;

	for (size_t i = 0; i < s->n_api; i++)
		calls += s->api[i].calls;
	out[HIST_MEMORY] = s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED];
	out[HIST_LAUNCHES] = s->launches;
	out[HIST_H2D] = history_xfer_bytes(s, DIR_H2D);
	out[HIST_D2H] = history_xfer_bytes(s, DIR_D2H);
	out[HIST_CALLS] = calls;
}

void history_init(struct history *h)
{
	memset(h, 0, sizeof(*h));
}

static void history_push(struct history *h, const double v[HIST_COUNT])
{
	for (int k = 0; k < HIST_COUNT; k++)
		h->v[k][h->head] = v[k];
	h->head = (h->head + 1) % HISTORY_LEN;
	if (h->count < HISTORY_LEN)
		h->count++;
}

void history_sample(struct history *h, const struct stats_snapshot *s)
{
	uint64_t now[HIST_COUNT];
	double v[HIST_COUNT];

	history_counters(s, now);
	if (!h->primed || s->t_ns < h->last_ns) {
		h->primed = true;
		h->last_ns = s->t_ns;
		memcpy(h->last, now, sizeof(now));
		return;
	}
	uint64_t elapsed = s->t_ns - h->last_ns;
	if (elapsed < SECOND_NS)
		return;
	double secs = (double)elapsed / 1e9;
	for (int k = 0; k < HIST_COUNT; k++) {
		uint64_t delta = rows_delta(now[k], h->last[k]);

		v[k] = k == HIST_MEMORY ? (double)now[k] : (double)delta / secs;
	}
	uint64_t slots = elapsed / SECOND_NS;
	for (uint64_t i = 0; i < slots && i < HISTORY_LEN; i++)
		history_push(h, v);
	h->last_ns = s->t_ns;
	memcpy(h->last, now, sizeof(now));
}

int history_get(const struct history *h, enum history_series k, double *out)
{
	int first = (h->head - h->count + HISTORY_LEN) % HISTORY_LEN;

	for (int i = 0; i < h->count; i++)
		out[i] = h->v[k][(first + i) % HISTORY_LEN];
	return h->count;
}

