/* outfile.c — the output files the command line names, opened and proven writable at start
 * (outfile.h). Nothing here writes an output's contents: json.c, trace.c, folded.c and
 * timeline.c do, through the descriptor opened here. */
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
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
 * limit say so now). A file with contents is left untouched: it is replaced at the end. */
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

int outfile_open(struct outfile *o)
{
	o->fd = -1;
	o->created = false;
	if (!o->path || strcmp(o->path, "-") == 0)
		return 0;
	/* O_NOFOLLOW: in a shared directory a planted symlink must not redirect our write.
	 * O_NONBLOCK: opening a FIFO for writing would wait for a reader forever. */
	o->fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	o->created = o->fd >= 0;
	if (o->fd < 0 && errno == EEXIST) {
		o->fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (o->fd < 0 && errno == ENXIO)
			errno = EINVAL;	/* a FIFO nobody reads, or a socket */
	}
	if (o->fd < 0)
		return refuse(o, errno == ELOOP ? "it is a symbolic link" : errno == EINVAL ? "not a regular file"
											  : strerror(errno));
	struct stat st;
	if (fstat(o->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return refuse(o, "not a regular file");
	const char *fs = pseudo_fs_name(o->fd);
	if (fs) {
		char why[128];
		snprintf(why, sizeof why, "a file of %s (the kernel's, not storage: what is written there "
			 "is lost or changes something)", fs);
		return refuse(o, why);
	}
	fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) & ~O_NONBLOCK);
	int err = probe_write(o->fd);
	if (err < 0)
		return refuse(o, strerror(-err));
	return 0;
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

void outfile_discard(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->created)
		unlink(o->path);
	o->fd = -1;
	o->created = false;
}

void outfile_close(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}
