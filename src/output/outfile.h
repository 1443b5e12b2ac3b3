/* outfile.h — the files gputop writes that the command line names (--json, --trace, --folded,
 * --timeline, -o): each opened and proven writable before anything touches a program, so that
 * a path that cannot take the output is refused at once (exit status 6), never found out after
 * the run; and removed again, if gputop made it, when the session never starts. */
#ifndef GPUTOP_OUTFILE_H
#define GPUTOP_OUTFILE_H

#include <stdbool.h>

struct outfile {
	const char *path;	/* NULL: not asked for; "-": standard error, no file */
	const char *what;	/* "--json"..., for messages */
	int fd;			/* -1 when not open */
	bool created;		/* gputop made the file (it did not exist) */
};

/* Opens o->path for writing: a regular file only (a FIFO, a device, a symbolic link, a file of
 * /proc or /sys are refused), and proven writable by a write that changes nothing a reader
 * could see. 0 (also when no file is asked for), or -1 after saying why. */
int outfile_open(struct outfile *o);
/* Opens every file of the array, or none: -1 after saying why, every one already made removed. */
int outfile_open_all(struct outfile *files, int n);
/* Closes it and removes it if gputop made it: the session did not start. */
void outfile_discard(struct outfile *o);
/* Closes it, keeping the file. */
void outfile_close(struct outfile *o);

#endif
