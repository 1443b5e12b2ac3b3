/* procfs.h — what /proc says about a process: its status fields, command line, rank in a
 * distributed job, descendants. Plain reads; nothing here touches the process. */
#ifndef GPUTOP_PROCFS_H
#define GPUTOP_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The file's contents, NUL-terminated, into buf: its length, or -errno. */
int proc_read_file(const char *path, char *buf, size_t size);
/* A numeric field of /proc/PID/status ("PPid:", "TracerPid:"); -1 when not there. */
long proc_status_field(pid_t pid, const char *key);
/* Its command line, arguments joined by spaces ("?" when it cannot be read). */
void proc_command(pid_t pid, char *buf, size_t size);
/* A process's place in a distributed job, from its environment as it was at its exec. */
struct proc_job {
	int rank, local_rank;	/* RANK, LOCAL_RANK; mpirun's OMPI_COMM_WORLD_*, Slurm's
				 * SLURM_PROCID; -1 where not set */
	char id[64];		/* the job: TORCHELASTIC_RUN_ID (torchrun's --rdzv-id, unless
				 * "none"), else SLURM_JOB_ID; "" where neither is set */
};
void proc_job(pid_t pid, struct proc_job *job);
/* The processes below pid (children, their children...), parents first: at most max into out
 * (which has room for max + 1); returns how many. */
int proc_descendants(pid_t pid, pid_t *out, int max);
/* Free address ranges of the process, nearest to `near` first: up to max start addresses
 * (aligned to `align`) where `size` bytes lie in a gap between its mappings and within
 * `reach` bytes of near, start and end. Returns how many (the kernel may still refuse one:
 * the process maps meanwhile). */
/* A hash of the paths of the process's executable mappings (FNV-1a): a new library changes it;
 * a thread's stack or a heap arena does not. 0 when the maps cannot be read. */
uint64_t proc_exec_maps_hash(pid_t pid);
int proc_free_ranges_near(pid_t pid, uint64_t near, uint64_t size, uint64_t align, uint64_t reach,
			  uint64_t *out, int max);

#endif
