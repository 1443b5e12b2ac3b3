/* outfile.h — the files gputop writes that the command line names (--json, --trace, --folded,
 * --timeline, -o): each checked and proven writable before anything touches a program, so that
 * a path that cannot take the output is refused at once (exit status 6), never found out after
 * the run. What gputop writes goes to a temporary file beside the file and is renamed over it
 * at the end, only if every write succeeded: a failed write (a full disk, EIO) leaves the old
 * file, or none, never half of one. -o is the exception: the program writes it as it runs,
 * as a shell's redirection (it is opened in place). A session that never starts leaves
 * nothing: the temporary files are removed, and a file gputop made in place. */
#ifndef GPUTOP_OUTFILE_H
#define GPUTOP_OUTFILE_H

#include <stdbool.h>

struct outfile {
	const char *path;	/* NULL: not asked for; "-": standard error, no file */
	const char *what;	/* "--json"..., for messages */
	bool in_place;		/* -o: the file itself is opened, and stays as it is written */
	int fd;			/* -1 when not open: the file in place, else the temporary file */
	char *temp;		/* not in place: the temporary file's name ("DIR/.NAME.XXXXXX") */
	bool existed;		/* the file was there at the start */
	bool created;		/* in place: gputop made the file */
	bool device;		/* in place: a character device (-o /dev/null), written as it is */
	int err;		/* the end: the write that failed (-errno), or 0 */
};

/* Opens o: a regular file only (a FIFO, a device, a symbolic link, a file of /proc or /sys are
 * refused; in place, a character device such as /dev/null or a terminal is taken, as a shell's
 * redirection takes it), and proven writable by a write that changes nothing a reader could
 * see. 0 (also when no file is asked for), or -1 after saying why. */
int outfile_open(struct outfile *o);
/* Opens every file of the array, or none: -1 after saying why, every one already made removed. */
int outfile_open_all(struct outfile *files, int n);
/* The end of what was written to o->fd (err: 0, or the first write's -errno): synced and
 * renamed over the file if all went well; else the temporary file is removed and the file left
 * as it was. 0, or -1 (the error kept in o->err, for outfile_say_failed). Nothing to do in
 * place. */
int outfile_commit(struct outfile *o, int err);
/* Says that o was not written, and why, if so. */
void outfile_say_failed(const struct outfile *o);
/* The session did not start: closes o and removes what gputop made. */
void outfile_discard(struct outfile *o);
/* Closes o: a file in place stays; a temporary file not committed is removed. */
void outfile_close(struct outfile *o);

/* Whether paths a and b name the same file: the same file where both exist (st_dev and st_ino:
 * a hard link too), or the same name in the same directory (./F and F, a/../F). */
bool outfile_same(const char *a, const char *b);
/* A new temporary file beside path ("DIR/.NAME.XXXXXX", close-on-exec), its name (malloc'ed)
 * in *tmp. Its descriptor, or -1 (errno). */
int outfile_temp_beside(const char *path, char **tmp);

#endif
