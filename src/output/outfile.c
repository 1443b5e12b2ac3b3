/* outfile.c — the output files the command line names, opened and proven writable at start,
 * renamed into place at the end (outfile.h). Nothing here writes an output's contents:
 * json.c, trace.c, folded.c and timeline.c do, through the descriptor opened here. */
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* File systems whose "files" are the kernel's knobs and views, not storage: a write there is
 * lost (/proc/version answers EIO) or, worse, does something (/proc/self/comm renames). */
static const struct { unsigned long magic; char name[16]; } pseudo_fs[] = {
	{ PROC_SUPER_MAGIC, "/proc" }, { SYSFS_MAGIC, "/sys" }, { DEBUGFS_MAGIC, "debugfs" },
	{ TRACEFS_MAGIC, "tracefs" }, { SECURITYFS_MAGIC, "securityfs" },
	{ CGROUP_SUPER_MAGIC, "cgroup" }, { CGROUP2_SUPER_MAGIC, "cgroup2" },
	{ BPF_FS_MAGIC, "bpffs" }, { PSTOREFS_MAGIC, "pstore" }, { EFIVARFS_MAGIC, "efivarfs" },
	{ SELINUX_MAGIC, "selinuxfs" }, { SMACK_MAGIC, "smackfs" }, { BINFMTFS_MAGIC, "binfmt_misc" },
};

static const char *pseudo_fs_name(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof pseudo_fs / sizeof pseudo_fs[0]; i++)
		if ((unsigned long)sf.f_type == pseudo_fs[i].magic)
			return pseudo_fs[i].name;
	return NULL;
}

/* A write that leaves the file as it was: an empty write (refused by files that take no data),
 * and in an empty file one byte written and taken back (a full disk, a quota, a file size
 * limit say so now). A file with contents is left untouched. */
static int probe_write(int fd)
{
	struct stat st;
	if (write(fd, "", 0) < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size == 0) {
		ssize_t n = pwrite(fd, "\n", 1, 0);
		int err = n == 1 ? 0 : n < 0 ? errno : ENOSPC;
		if (ftruncate(fd, 0) < 0 && !err)
			err = errno;
		if (err)
			return -err;
	}
	return 0;
}

static int refuse(struct outfile *o, const char *why)
{
	log_error("cannot write %s file '%s': %s", o->what, o->path, why);
	outfile_discard(o);
	return -1;
}

static const char *open_error(void)
{
	return errno == ELOOP ? "it is a symbolic link" : errno == EINVAL ? "not a regular file" : strerror(errno);
}

/* The file open as fd: a regular file of storage. Its mode in *mode. 0, or -1 after saying
 * why. (Its opens below: O_NOFOLLOW, as in a shared directory a planted symlink must not
 * redirect our write; O_NONBLOCK, as opening a FIFO for writing would wait for a reader
 * forever; O_WRONLY without O_TRUNC: this user may write it, and nothing changes yet.) */
static int check_existing(struct outfile *o, int fd, mode_t *mode)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return refuse(o, "not a regular file");
	const char *fs = pseudo_fs_name(fd);
	if (fs) {
		char why[128];
		snprintf(why, sizeof why, "a file of %s (the kernel's, not storage: what is written there "
			 "is lost or changes something)", fs);
		return refuse(o, why);
	}
	*mode = st.st_mode & 07777;
	return 0;
}

/* -o into a character device (/dev/null, a terminal), as a shell's redirection would: nothing
 * to prove writable or to empty, and nothing of storage to protect. */
static bool char_device(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
}

static int open_in_place(struct outfile *o)
{
	mode_t mode;
	o->fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	o->created = o->fd >= 0;
	if (o->fd < 0 && errno == EEXIST) {
		o->fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (o->fd < 0 && errno == ENXIO)
			errno = EINVAL;	/* a FIFO nobody reads, or a socket */
	}
	o->existed = o->fd >= 0 && !o->created;
	if (o->fd < 0)
		return refuse(o, open_error());
	o->device = char_device(o->fd);
	if (!o->device && check_existing(o, o->fd, &mode) < 0)
		return -1;
	fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) & ~O_NONBLOCK);
	int err = o->device ? 0 : probe_write(o->fd);
	return err < 0 ? refuse(o, strerror(-err)) : 0;
}

/* The file, if there, is only checked (it stays as it is until the rename); what is written
 * goes to a temporary file beside it, with its mode (a new one: 0644 less the umask, as a
 * file gputop made itself would have). */
static int open_beside(struct outfile *o)
{
	mode_t mode = umask(0);	/* at the start, no other thread: the umask is read and put back */
	umask(mode);
	mode = 0644 & ~mode;
	int fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENXIO)
		errno = EINVAL;
	if (fd < 0 && errno != ENOENT)
		return refuse(o, open_error());
	o->existed = fd >= 0;
	if (fd >= 0) {
		int bad = check_existing(o, fd, &mode);
		close(fd);
		if (bad < 0)
			return -1;
	}
	mode_t ignored;
	if ((o->fd = outfile_temp_beside(o->path, &o->temp)) < 0)
		return refuse(o, strerror(errno));
	if (check_existing(o, o->fd, &ignored) < 0)
		return -1;
	int err = fchmod(o->fd, mode) < 0 ? -errno : probe_write(o->fd);
	return err < 0 ? refuse(o, strerror(-err)) : 0;
}

int outfile_open(struct outfile *o)
{
	o->fd = -1;
	o->temp = NULL;
	o->existed = o->created = o->device = false;
	o->err = 0;
	if (!o->path || strcmp(o->path, "-") == 0)
		return 0;
	return o->in_place ? open_in_place(o) : open_beside(o);
}

int outfile_open_all(struct outfile *files, int n)
{
	for (int i = 0; i < n; i++)
		if (outfile_open(&files[i]) < 0) {
			while (i-- > 0)
				outfile_discard(&files[i]);
			return -1;
		}
	return 0;
}

int outfile_commit(struct outfile *o, int err)
{
	if (!o->temp)
		return 0;
	/* Synced first: a disk's EIO, or a full one under delayed allocation, comes no later. */
	if (!err && o->fd >= 0 && fdatasync(o->fd) < 0)
		err = -errno;
	if (o->fd >= 0 && close(o->fd) < 0 && !err)
		err = -errno;
	o->fd = -1;
	if (!err && rename(o->temp, o->path) < 0)
		err = -errno;
	if (err)
		unlink(o->temp);
	free(o->temp);
	o->temp = NULL;
	o->err = err;
	return err ? -1 : 0;
}

void outfile_say_failed(const struct outfile *o)
{
	if (o->err)
		log_error("cannot write %s file '%s': %s (%s)", o->what, o->path, strerror(-o->err),
			  o->existed ? "it is left as it was" : "it was not made");
}

void outfile_discard(struct outfile *o)
{
	outfile_close(o);
	if (o->created)
		unlink(o->path);
	o->created = false;
}

void outfile_close(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->temp)
		unlink(o->temp);
	free(o->temp);
	o->temp = NULL;
}

/* The directory part of path and its last name, in dir and name (size bytes each). */
static void split(const char *path, char *dir, char *name, size_t size)
{
	char a[4096], b[4096];
	snprintf(a, sizeof a, "%s", path);
	snprintf(b, sizeof b, "%s", path);
	snprintf(dir, size, "%s", dirname(a));
	snprintf(name, size, "%s", basename(b));
}

bool outfile_same(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	char da[4096], na[4096], db[4096], nb[4096];
	split(a, da, na, sizeof da);
	split(b, db, nb, sizeof db);
	if (strcmp(na, nb) != 0)
		return false;
	if (stat(da, &sa) == 0 && stat(db, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return strcmp(da, db) == 0;	/* no such directory: refused later, by the open */
}

int outfile_temp_beside(const char *path, char **tmp)
{
	char dir[4096], name[4096];
	split(path, dir, name, sizeof dir);
	if (asprintf(tmp, "%s/.%s.XXXXXX", dir, name) < 0) {
		*tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	int fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0) {
		int saved = errno;
		free(*tmp);
		*tmp = NULL;
		errno = saved;
	}
	return fd;
}
