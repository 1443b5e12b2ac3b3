/* devices.c — the NVML polling thread and its snapshot (devices.h). The tracer never waits for
 * it: it only reads /proc and NVML, and publishes each poll whole under a lock. */
#define _GNU_SOURCE		/* pthread_timedjoin_np */
#include "devices.h"
#include "clock.h"
#include "config.h"
#include "log.h"
#include "nspid.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define DEVICES_PROCS_READ	256	/* processes read per device */
/* The PCIe rates and the processes' SM utilization are read at most this often: on a GSP GPU
 * (H100, H200) the driver polls the GSP for each answer, milliseconds of CPU a GPU each time
 * (perf on an H200: most of the poller's CPU at every half-second poll), and NVML samples each
 * PCIe counter for 20 ms. Between two reads the figures shown are the last read's, as between
 * two polls; the processes' memory is read at every poll. */
#define SLOW_EVERY_NS	2000000000ull

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* on CLOCK_MONOTONIC: devices_start */
	struct devices_snapshot shown;	/* under lock: the last poll */
	struct device_process watched[DEVICES_WATCH_MAX];	/* under lock */
	int n_watched;
	bool running, stopping;
	pthread_t poller;
	unsigned interval;
	/* The poller's own (one thread): what NVML said about each device's processes. */
	struct nvml_process_reading procs[DEVICES_MAX][DEVICES_PROCS_READ];
	struct nvml_process_reading procs_was[DEVICES_PROCS_READ];	/* a device's, the poll before */
	int n_procs[DEVICES_MAX];
	unsigned long long last_sample_us[DEVICES_MAX];
	struct nvml_device_reading last_reading[DEVICES_MAX];	/* for the NVLink rates */
	uint64_t slow_read_ns;	/* when the PCIe rates and utilization were last read; 0: never */
} devices = { .lock = PTHREAD_MUTEX_INITIALIZER };

void devices_watch(pid_t pid, bool from_start)
{
	pthread_mutex_lock(&devices.lock);
	if (devices.n_watched < DEVICES_WATCH_MAX)
		devices.watched[devices.n_watched++] = (struct device_process){ .pid = pid, .from_start = from_start,
								.sm_util = -1 };
	pthread_mutex_unlock(&devices.lock);
}

/* Adds to p the processes of this poll that NVML names by one of ids; whether any did. */
static bool collect(struct device_process *p, int n_dev, const pid_t *ids, int n_ids)
{
	for (int d = 0; d < n_dev; d++) {
		for (int k = 0; k < devices.n_procs[d]; k++) {
			const struct nvml_process_reading *r = &devices.procs[d][k];
			bool mine = false;

			for (int j = 0; j < n_ids && !mine; j++)
				mine = (unsigned)ids[j] == r->pid;
			if (!mine)
				continue;
			p->on_gpu = true;
			p->device_mask |= 1u << d;
			p->bytes_known |= r->bytes_known;
			p->bytes += r->bytes;
			if (r->sm_util > p->sm_util)
				p->sm_util = r->sm_util;
		}
	}
	return p->on_gpu;
}

/* Whether NVML names a process this poll that /proc does not have: another PID namespace's. */
static bool foreign_pids(int n_dev)
{
	for (int d = 0; d < n_dev; d++)
		for (int k = 0; k < devices.n_procs[d]; k++)
			if (!nspid_visible((pid_t)devices.procs[d][k].pid))
				return true;
	return false;
}

/* The traced process p in this poll's process lists: by its PID here, else by its PID in a
 * namespace nested in gputop's (NSpid), where NVML would name it so. */
static void match_process(struct device_process *p, int n_dev)
{
	pid_t ids[NSPID_MAX];
	int n_ids = nspid_read(p->pid, ids, NSPID_MAX);
	bool was_polled = p->polled;

	p->on_gpu = p->bytes_known = false;
	p->bytes = 0;
	p->sm_util = -1;
	p->device_mask = 0;
	if (n_ids > 0 && !collect(p, n_dev, ids, 1))
		collect(p, n_dev, ids + 1, n_ids - 1);
	if (p->bytes_known && p->bytes > p->peak_bytes)
		p->peak_bytes = p->bytes;
	p->unmatched = !p->on_gpu && foreign_pids(n_dev);
	p->polled = true;
	/* Not on a GPU at the first look: its context comes while gputop watches. */
	if (!was_polled && !p->on_gpu && !p->unmatched)
		p->from_start = true;
}

/* Bytes per second from two readings of a KiB counter; -1 where they do not make a rate. */
static int64_t kib_rate(uint64_t before, uint64_t after, int64_t us)
{
	return us > 0 && after >= before ? (int64_t)((double)(after - before) * 1024.0 * 1e6 / (double)us)
					 : -1;
}

static void nvlink_rates(struct device_meter *m, struct nvml_device_reading *last)
{
	const struct nvml_device_reading *r = &m->r;
	bool both = m->readable && r->nvlink_known && last->nvlink_known;

	m->nvlink_tx_bps = both ? kib_rate(last->nvlink_tx_kib, r->nvlink_tx_kib, r->nvlink_us - last->nvlink_us) : -1;
	m->nvlink_rx_bps = both ? kib_rate(last->nvlink_rx_kib, r->nvlink_rx_kib, r->nvlink_us - last->nvlink_us) : -1;
	*last = m->readable ? *r : (struct nvml_device_reading){ 0 };
}

static bool stop_asked(void)
{
	pthread_mutex_lock(&devices.lock);
	bool stop = devices.stopping;
	pthread_mutex_unlock(&devices.lock);
	return stop;
}

/* Each process's utilization as the last read of it said (a poll that does not read it). */
static void keep_utilization(struct nvml_process_reading *now, int n, const struct nvml_process_reading *was,
			     int n_was)
{
	for (int k = 0; k < n; k++)
		for (int j = 0; j < n_was; j++)
			if (was[j].pid == now[k].pid) {
				now[k].sm_util = was[j].sm_util;
				break;
			}
}

/* One poll of every GPU, published whole. A GPU takes ~45 ms, 40 of them NVML's sampling of
 * the two PCIe counters: the last poll, which the session waits for, keeps the rates before it
 * (~5 ms a GPU), and a poll in progress when the session ends is left at the next GPU. */
static void poll_once(struct devices_snapshot *s, bool last)
{
	int n = s->n_dev;
	uint64_t now = now_ns();
	bool slow = !devices.slow_read_ns || now - devices.slow_read_ns >= SLOW_EVERY_NS;

	if (slow && !last)
		devices.slow_read_ns = now;
	for (int d = 0; d < n; d++) {
		struct device_meter *m = &s->dev[d];
		char why[160];

		if (!last && d > 0 && stop_asked())
			return;
		m->index = d;
		m->readable = nvml_read_device(d, &m->r, slow && !last, why, sizeof(why)) == 0;
		nvlink_rates(m, &devices.last_reading[d]);
		/* The last poll reads the utilization too: the figures the session ends with. */
		bool util = slow || last;
		int n_was = devices.n_procs[d];
		if (!util)
			memcpy(devices.procs_was, devices.procs[d], sizeof(devices.procs_was[0]) * (size_t)n_was);
		devices.n_procs[d] = m->readable ? nvml_read_processes(d, devices.procs[d], DEVICES_PROCS_READ,
							       util ? &devices.last_sample_us[d] : NULL, why,
							       sizeof(why)) : 0;
		if (devices.n_procs[d] < 0)
			devices.n_procs[d] = 0;
		if (!util)
			keep_utilization(devices.procs[d], devices.n_procs[d], devices.procs_was, n_was);
	}
	pthread_mutex_lock(&devices.lock);
	for (int i = 0; i < devices.n_watched; i++)
		match_process(&devices.watched[i], n);
	s->n_proc = devices.n_watched;
	memcpy(s->proc, devices.watched, sizeof(devices.watched[0]) * (size_t)devices.n_watched);
	s->t_ns = now_ns();
	devices.shown = *s;
	pthread_mutex_unlock(&devices.lock);
}

static bool wait_interval(void)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += devices.interval / 1000;
	until.tv_nsec += (long)(devices.interval % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&devices.lock);
	while (!devices.stopping && pthread_cond_timedwait(&devices.wake, &devices.lock, &until) != ETIMEDOUT)
		;
	bool go_on = !devices.stopping;
	pthread_mutex_unlock(&devices.lock);
	return go_on;
}

static void *poll_loop(void *arg)
{
	struct devices_snapshot s = { 0 };	/* the poll being made (5.5 KiB) */
	int n = nvml_open(config.nvml_path, s.why, sizeof(s.why));

	if (n < 0) {
		log_info("no GPU meters: %s", s.why);
		pthread_mutex_lock(&devices.lock);
		memcpy(devices.shown.why, s.why, sizeof(devices.shown.why));
		pthread_mutex_unlock(&devices.lock);
		return NULL;
	}
	s.available = true;
	s.n_dev = n < DEVICES_MAX ? n : DEVICES_MAX;
	do
		poll_once(&s, false);
	while (wait_interval());
	uint64_t t0 = now_ns();
	poll_once(&s, true);	/* the figures the session ends with */
	uint64_t t1 = now_ns();
	nvml_close();
	log_debug("GPU meters: the last poll of %d GPUs %.1f ms, NVML's shutdown %.1f ms", s.n_dev,
		  (double)(t1 - t0) / 1e6, (double)(now_ns() - t1) / 1e6);
	return NULL;
}

int devices_start(unsigned interval_ms)
{
	sigset_t all, old;
	int err;

	if (config.nvml_off) {
		snprintf(devices.shown.why, sizeof(devices.shown.why), "GPUTOP_NVML=0");
		return 0;
	}
	devices.interval = interval_ms ? interval_ms : 500;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&devices.wake, &attr);
	pthread_condattr_destroy(&attr);
	/* Signals to gputop belong to the tracer thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&devices.poller, NULL, poll_loop, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	devices.running = err == 0;
	return -err;
}

void devices_stop(void)
{
	if (!devices.running)
		return;
	pthread_mutex_lock(&devices.lock);
	devices.stopping = true;
	pthread_cond_signal(&devices.wake);
	pthread_mutex_unlock(&devices.lock);
	/* A driver that hangs must not keep gputop from ending: the last poll gets 3 s. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	if (pthread_timedjoin_np(devices.poller, NULL, &until) != 0)
		log_warn("NVML did not answer within 3 s: the GPU meters are from an earlier poll");
	devices.running = false;
}

void devices_snapshot(struct devices_snapshot *out)
{
	pthread_mutex_lock(&devices.lock);
	*out = devices.shown;
	pthread_mutex_unlock(&devices.lock);
}
