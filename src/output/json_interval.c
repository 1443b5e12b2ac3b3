/* json_interval.c — --json-interval (json_interval.h): the summary written to a temporary file
 * next to FILE and renamed over it, every interval, from a thread of its own. rename(2) within
 * one directory is atomic: a reader opens the old summary or the new one, never half of one. */
#define _GNU_SOURCE
#include "json_interval.h"
#include "clock.h"
#include "job_live.h"
#include "log.h"
#include "outfile.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
	const char *path;
	double seconds;
	struct report_info base;	/* what is known of the session from its start */
	void (*info)(struct report_info *out, const struct stats_snapshot *s);
	pthread_t thread;
	bool running, stopping, failed;	/* failed: the last rewrite failed (said once) */
	pthread_mutex_t lock;
	pthread_cond_t wake;
} jiv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int rewrite(const char *path, const struct report_info *final)
{
	char *tmp;
	struct stats_snapshot snap;
	int fd = outfile_temp_beside(path, &tmp), err;

	if (fd < 0)
		return -errno;
	fchmod(fd, 0644);	/* mkstemp's 0600: the summary is for other agents to read */
	FILE *f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
	} else if ((err = stats_snapshot(&snap)) == 0) {
		struct report_info info = jiv.base;
		struct devices_snapshot devices;
		struct job *live = NULL;
		if (!final) {
			jiv.info(&info, &snap);
			devices_snapshot(&devices);	/* what NVML said last, as --json has it */
			info.devices = &devices;
			/* The job as it is now; the last summary, at the end, has no now. */
			info.job = live = job_live_copy(jiv.base.job_live);
		}
		err = json_write(f, final ? final : &info, &snap);
		job_free(live);
		stats_snapshot_free(&snap);
	}
	if (f && fclose(f) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

/* Says so when writing starts failing, and again when it works again: not every interval. */
static int rewrite_noted(void)
{
	int err = rewrite(jiv.path, NULL);

	if (err && !jiv.failed)
		log_warn("cannot rewrite '%s': %s", jiv.path, strerror(-err));
	else if (!err && jiv.failed)
		log_info("'%s' is written again", jiv.path);
	jiv.failed = err != 0;
	return err;
}

static void *writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&jiv.lock);
	while (!jiv.stopping) {
		pthread_mutex_unlock(&jiv.lock);
		rewrite_noted();
		pthread_mutex_lock(&jiv.lock);
		struct timespec until = deadline_in(jiv.seconds);
		while (!jiv.stopping && pthread_cond_timedwait(&jiv.wake, &jiv.lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&jiv.lock);
	return NULL;
}

int json_interval_check(const char *path)
{
	struct stat st;
	char *tmp;
	int fd;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		log_error("cannot write --json-interval file '%s': %s", path,
			  S_ISLNK(st.st_mode) ? "it is a symbolic link" : "not a regular file");
		return -EINVAL;
	}
	if ((fd = outfile_temp_beside(path, &tmp)) < 0) {
		int err = errno;
		log_error("cannot write --json-interval file '%s': %s", path, strerror(err));
		return -err;
	}
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

int json_interval_start(const char *path, double seconds, const struct report_info *base,
			void (*info)(struct report_info *out, const struct stats_snapshot *s))
{
	pthread_condattr_t ca;	/* timed waits on the monotonic clock */
	sigset_t all, old;

	jiv.path = path;
	jiv.seconds = seconds;
	jiv.base = *base;
	jiv.info = info;
	jiv.stopping = false;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&jiv.wake, &ca);
	pthread_condattr_destroy(&ca);
	/* gputop's signals belong to the tracer thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&jiv.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	jiv.running = err == 0;
	if (err)
		log_error("cannot start the --json-interval writer: %s", strerror(err));
	return -err;
}

int json_interval_stop(const struct report_info *final)
{
	if (!jiv.running)
		return 0;
	pthread_mutex_lock(&jiv.lock);
	jiv.stopping = true;
	pthread_cond_signal(&jiv.wake);
	pthread_mutex_unlock(&jiv.lock);
	pthread_join(jiv.thread, NULL);
	jiv.running = false;
	int err = rewrite(jiv.path, final);
	if (err)
		log_error("cannot write '%s': %s", jiv.path, strerror(-err));
	return err;
}
