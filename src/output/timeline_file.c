/* timeline_file.c — the --timeline file (timeline_file.h). Each event is dumped by jansson
 * (json_writer.h) into a buffer, written with one pwrite together with the closing; the next
 * write starts over the closing. */
#define _GNU_SOURCE
#include "timeline_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "json_writer.h"

enum { BUF = TIMELINE_FILE_BUF, EVENT_MAX = 2048, TAIL_MAX = TIMELINE_FILE_TAIL };
#define FLUSH_NS 200000000ull	/* at least this often while events come */

bool timeline_file_on(const struct timeline_file *f)
{
	return f->fd >= 0;
}

bool timeline_file_taking(const struct timeline_file *f)
{
	return f->fd >= 0 && !f->full && !f->err;
}

void timeline_file_flush(struct timeline_file *f)
{
	if (f->fd < 0 || f->err || (!f->len && f->off))
		return;
	size_t tail = f->closing(f->buf + f->len, TAIL_MAX);
	ssize_t n = pwrite(f->fd, f->buf, f->len + tail, f->off);
	if (n == (ssize_t)(f->len + tail))
		f->off += (off_t)f->len;
	else
		f->err = n < 0 ? errno : ENOSPC;	/* a short write: the file system is full */
	f->len = 0;
	f->last_flush = now_ns();
}

/* Appends raw text (an event, or the header) to the buffer. */
static void put(struct timeline_file *f, const char *s, size_t n)
{
	if (f->len + n > BUF)
		timeline_file_flush(f);
	if (n <= BUF) {
		memcpy(f->buf + f->len, s, n);
		f->len += n;
	}
}

int timeline_file_open(struct timeline_file *f, int fd, uint64_t max_bytes, timeline_closing_fn *closing)
{
	timeline_file_close(f);
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return -errno;
	if (ftruncate(copy, 0) < 0) {
		int err = -errno;
		close(copy);
		return err;
	}
	f->fd = copy;
	f->off = 0;
	f->len = 0;
	f->err = 0;
	f->full = f->any = false;
	f->closing = closing;
	f->max_bytes = max_bytes < 4096 ? 4096 : max_bytes;
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
	put(f, head, sizeof head - 1);
	return 0;
}

int timeline_file_close(struct timeline_file *f)
{
	if (f->fd < 0)
		return 0;
	timeline_file_flush(f);
	int err = f->err ? -f->err : 0;
	close(f->fd);
	f->fd = -1;
	return err;
}

/* Reals with 3 decimals (µs to the ns, GB/s) as %.Pg, P the digits of the largest of the event
 * before the point + 3, at most 17: up to 15 (times under 10^12 µs) each is written as it was
 * rounded, never with the binary fraction's noise of %.17g (jansson's default: 12.345 as
 * 12.345000000000001); past that the values stay exact, with some noise. */
static size_t precision_for(double largest)
{
	int digits = 1;
	for (double v = fabs(largest); v >= 10 && digits < 17; v /= 10)
		digits++;
	return JSON_REAL_PRECISION(digits + 3 > 17 ? 17 : digits + 3);
}

void timeline_file_emit(struct timeline_file *f, struct jw *w, double largest, size_t reserve)
{
	char ev[EVENT_MAX], *big = NULL;
	const char *sep = f->any ? ",\n" : "\n";
	size_t lead = strlen(sep), room = sizeof ev - lead;

	if (!timeline_file_taking(f))
		goto out;
	size_t flags = JSON_COMPACT | precision_for(largest);
	char *text = ev;
	size_t len = jw_dumpb(w, ev + lead, room, flags);
	if (len > room) {	/* a long kernel name */
		if (!(big = malloc(lead + len)))
			goto out;
		text = big;
		len = jw_dumpb(w, big + lead, len, flags);
	}
	if (!len)
		goto out;
	memcpy(text, sep, lead);
	len += lead;
	if ((uint64_t)f->off + f->len + (uint64_t)len + reserve + 256 > f->max_bytes) {
		f->full = true;
		const char *note = ",\n{\"name\":\"gputop: --timeline-max-mb reached, later events left out\","
				   "\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":0}";
		put(f, f->any ? note : note + 1, strlen(f->any ? note : note + 1));
		timeline_file_flush(f);
		goto out;
	}
	put(f, text, len);
	f->any = true;
	if (!reserve && (f->len > BUF / 2 || now_ns() - f->last_flush > FLUSH_NS))
		timeline_file_flush(f);	/* not between an event and those that must follow it */
out:
	free(big);
	jw_free(w);
}
