/* device_rows.h — the rows built from what the GPUs say (devices.h) that every presenter
 * shows the same way: the device memory gputop did not see allocated. Pure: it reads a
 * devices snapshot and a figure of the statistics, nothing else. */
#ifndef GPUTOP_DEVICE_ROWS_H
#define GPUTOP_DEVICE_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "devices.h"

/* A process's device memory (NVML) = what gputop saw allocated + this row. */
struct row_unseen {
	bool known;			/* the process's device memory is known now */
	const char *why;		/* !known: why not */
	uint64_t process_bytes;		/* NVML's figure, all its GPUs */
	uint64_t seen_bytes;		/* live device and managed bytes gputop saw allocated */
	uint64_t unseen_bytes;		/* process - seen; 0 where seen is larger (a free not yet
					 * reflected by the driver) */
	bool from_start;		/* gputop watched since before its CUDA context: the row is
					 * the context itself and memory outside the CUDA API (told
					 * also once it has left the GPU) */
	const char *label;		/* what the row is, for every presenter; where it is not
					 * known but memory was allocated before the attach,
					 * UNSEEN_LABEL_NOT_KNOWN (NULL otherwise) */
	bool before_attach;		/* attached to a program that had loaded CUDA already */
	int sm_util;			/* its SM utilization, percent; -1: not known */
	uint64_t peak_bytes;		/* its most device memory in any poll; 0: none known */
};

#define UNSEEN_LABEL_ATTACHED	"allocated before gputop attached (or outside the CUDA API), " \
				"the CUDA context's own memory included"
#define UNSEEN_LABEL_FROM_START	"the CUDA context's own memory (and any outside the CUDA API)"
#define UNSEEN_LABEL_NOT_KNOWN	"allocated before gputop attached: not seen, and how much is not known"

/* before_attach: gputop attached to a program that had loaded CUDA already (session_state.h). */
void device_rows_unseen(struct row_unseen *r, const struct devices_snapshot *d, pid_t pid,
			uint64_t seen_bytes, bool before_attach);

#endif
