/* timeline_file.h — the --timeline file itself (timeline.c writes its events through it): events
 * gathered in a buffer and written with one pwrite together with the document's closing, the
 * next write starting over that closing, so that the file on disk is a whole JSON document after
 * every write; bounded in size (the cut said in a last event). Knows nothing of what the events
 * mean. */
#ifndef GPUTOP_TIMELINE_FILE_H
#define GPUTOP_TIMELINE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jw;

/* Writes the document's closing (after the events' array: "],...}") into buf, at most room
 * bytes; its length. */
typedef size_t timeline_closing_fn(char *buf, size_t room);

enum { TIMELINE_FILE_BUF = 1 << 16, TIMELINE_FILE_TAIL = 512 };

/* The file, which its owner (timeline.c) keeps; fd -1 until opened. */
struct timeline_file {
	int fd;
	off_t off;		/* where the next events go (over the closing) */
	uint64_t max_bytes;
	bool full, any;
	int err;		/* the first failed write's errno: nothing more is written */
	size_t len;
	uint64_t last_flush;
	timeline_closing_fn *closing;
	char buf[TIMELINE_FILE_BUF + TIMELINE_FILE_TAIL];
};

/* Starts the file on a copy of fd (the caller keeps fd), emptied, at most max_bytes long.
 * 0 or -errno. */
int timeline_file_open(struct timeline_file *f, int fd, uint64_t max_bytes, timeline_closing_fn *closing);
/* Writes what is pending and closes the copy; 0, or the first failed write's -errno. */
int timeline_file_close(struct timeline_file *f);
bool timeline_file_on(const struct timeline_file *f);
/* Whether events are still taken: not once the file reached its bound or a write failed. */
bool timeline_file_taking(const struct timeline_file *f);
/* Appends the event w holds (then frees it); largest: its largest real, for their precision.
 * reserve: room left for events that must follow it (past the bound, neither is written). */
void timeline_file_emit(struct timeline_file *f, struct jw *w, double largest, size_t reserve);
/* Writes what is pending now. */
void timeline_file_flush(struct timeline_file *f);

#endif
