/* device_rows.c — the "before attach" row (device_rows.h). */
#include "device_rows.h"

#include <string.h>

void device_rows_unseen(struct row_unseen *r, const struct devices_snapshot *d, pid_t pid,
			uint64_t seen_bytes, bool before_attach)
{
	const struct device_process *p = d ? devices_find(d, pid) : NULL;

	memset(r, 0, sizeof(*r));
	r->seen_bytes = seen_bytes;
	r->sm_util = -1;
	r->peak_bytes = p ? p->peak_bytes : 0;
	r->from_start = p && p->from_start;
	r->before_attach = before_attach;
	if (!d || !d->available)
		r->why = d && d->why[0] ? d->why : "no NVML";
	else if (!p || !p->polled)
		r->why = "not polled yet";
	else if (p->unmatched)
		r->why = "NVML names processes by another PID namespace's IDs: cannot match this one";
	else if (!p->on_gpu)
		r->why = "no CUDA context on a GPU";
	else if (!p->bytes_known)
		r->why = "NVML does not tell its memory";
	if (r->why) {
		r->label = before_attach ? UNSEEN_LABEL_NOT_KNOWN : NULL;
		return;
	}
	r->known = true;
	r->process_bytes = p->bytes;
	r->unseen_bytes = p->bytes > seen_bytes ? p->bytes - seen_bytes : 0;
	r->label = p->from_start ? UNSEEN_LABEL_FROM_START : UNSEEN_LABEL_ATTACHED;
	r->sm_util = p->sm_util;
}
