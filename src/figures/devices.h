/* devices.h — what the GPUs themselves say (NVML, cuda/nvml_lib.h): each device's meters and
 * the device memory and SM utilization of the traced processes. A thread of its own polls
 * NVML (a call can take milliseconds), never the tracer's; presenters read snapshots. Where
 * there is no driver there are no meters: said once, not an error. */
#ifndef GPUTOP_DEVICES_H
#define GPUTOP_DEVICES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvml_lib.h"

#define DEVICES_MAX		16
#define DEVICES_WATCH_MAX	16

struct device_meter {
	int index;			/* NVML's index */
	bool readable;			/* false: NVML could not read it (reading is empty) */
	struct nvml_device_reading r;
	int64_t nvlink_tx_bps, nvlink_rx_bps;	/* NVLink data rates between the last two polls,
						 * bytes/s; -1: not known (no NVLink, first poll) */
};

/* A traced process as the GPUs see it. */
struct device_process {
	pid_t pid;			/* as gputop knows it */
	bool from_start;		/* its CUDA context was made while gputop watched */
	bool polled;			/* at least one poll since it was watched */
	bool on_gpu;			/* NVML lists it now */
	bool unmatched;			/* not listed, but NVML lists PIDs that /proc does not
					 * have: another PID namespace; it cannot be matched */
	bool bytes_known;
	uint64_t bytes;			/* its device memory, all its GPUs */
	uint64_t peak_bytes;		/* the most bytes any poll saw (0: none known) */
	int sm_util;			/* percent, the highest of its GPUs; -1: not known */
	uint32_t device_mask;		/* bit i: on device index i */
};

struct devices_snapshot {
	bool available;			/* NVML is loaded and answers */
	char why[160];			/* !available: why not ("" before the first poll) */
	uint64_t t_ns;			/* monotonic time of the last poll; 0 before the first */
	int n_dev;
	struct device_meter dev[DEVICES_MAX];
	int n_proc;
	struct device_process proc[DEVICES_WATCH_MAX];
};

/* Starts the polling thread (every interval_ms); it loads NVML (config.nvml_path) itself, so
 * that a slow driver never delays the attach. 0, or -errno when no thread can be made. */
int devices_start(unsigned interval_ms);
/* Follows pid. from_start: gputop saw it from its first instruction (launch mode); otherwise
 * the first poll tells (not on a GPU yet: its context will come while gputop watches). */
void devices_watch(pid_t pid, bool from_start);
/* One last poll, then the thread ends and NVML is unloaded; snapshots keep the last figures. */
void devices_stop(void);
void devices_snapshot(struct devices_snapshot *out);
/* The process pid in s, or NULL. */
static inline const struct device_process *devices_find(const struct devices_snapshot *s, pid_t pid)
{
	for (int i = 0; i < s->n_proc; i++)
		if (s->proc[i].pid == pid)
			return &s->proc[i];
	return NULL;
}

#endif
