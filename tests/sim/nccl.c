/* nccl.c — a *** SIMULATED *** NCCL for gputop's tests (bin/simnccl/libnccl.so.2): no GPU, no
 * network, nothing moves. It exports the real NCCL 2.x entry points with the signatures of the
 * toolkit's nccl.h (included, so the compiler checks them), each with a p-prefixed alias as NCCL
 * has, and checks its arguments as NCCL would: communicators are real (rank, size, the device
 * current at their making), collectives on a bad communicator, datatype or peer fail. As in
 * NCCL, ncclBcast calls ncclBroadcast through the PLT, and each communicator has device buffers
 * (NCCL_SIM_BUFFER_BYTES, 1 MiB) made with the library's own cudart (nccl_cudart.c) on the
 * communicator's device, freed when it is destroyed.
 * With NCCL_SIM_JOB=FILE, the processes of a job (one rank each) meet in their collectives as
 * NCCL's do: each collective waits in the call until every rank of the communicator has reached
 * it (their counts in FILE, a shared mapping), so that one rank late stalls the others inside
 * their collective. Each communicator counts its collectives (opCount, as NCCL's does), among
 * other fields that move with them. */
#define _GNU_SOURCE
#include <nccl.h>

#include <dlfcn.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API(ret, name, ...) \
	__attribute__((visibility("default"), alias(#name))) ret p##name(__VA_ARGS__); \
	__attribute__((visibility("default"))) ret name(__VA_ARGS__)

#define SIM_MAGIC 0x5e1cc1u

#define NCCL_SIM_BUFFER_BYTES (1u << 20)

/* As in NCCL 2.28.9 (its DWARF: struct ncclComm is 1,082,968 bytes): the counters lie past the
 * first MiB, behind the channels. opCount and collOpCount move only when a plan has proxy work
 * (a network; not on one node's NVLink: never here); every collective counts in seqNumber[] of
 * its function (ncclProfilerStartTaskEvents), among fields that move with the collectives as
 * NCCL's do. gputop finds it by value (engine/nccl_counter.c), and takes none of the others
 * (tests/e2e/dump_job.sh compares with sim_nccl_counter_offset, AllReduce's, and the count). */
enum { FUNC_BROADCAST, FUNC_REDUCE, FUNC_ALLGATHER, FUNC_REDUCESCATTER, FUNC_ALLREDUCE, FUNC_P2P, N_FUNCS = 5 };
struct ncclComm {
	uint32_t magic;
	int rank, nranks, device;
	void *buffers;
	uint64_t lastNs;	/* when its last collective began */
	uint64_t workIndex;	/* 1 a collective, 1 more every 8th (a ring wrapping round) */
	uint64_t calls;		/* every call on it: collectives, and queries of its rank or size */
	char channels[1u << 20];
	uint64_t workIndexCopy;	/* the same as workIndex, 1 ahead (its first work at the init) */
	uint64_t opCount, collOpCount;	/* with proxy work only */
	uint64_t polls;		/* times a collective polled for its peers */
	void *profilerContext;
	uint64_t seqNumber[N_FUNCS];	/* collectives made on it, by function */
	uint64_t *made;		/* every collective (the job's meeting), outside the struct */
};

__attribute__((visibility("default"))) const size_t sim_nccl_counter_offset =
	offsetof(struct ncclComm, seqNumber) + 8 * FUNC_ALLREDUCE;

#define SIM_JOB_RANKS 64

/* NCCL_SIM_JOB's mapping: each rank's collectives reached; NULL without (or if it cannot be
 * made: then no rank waits). */
static uint64_t *job_counts(void)
{
	static uint64_t *counts;
	static int tried;
	const char *path = getenv("NCCL_SIM_JOB");
	if (tried || !path)
		return counts;
	tried = 1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, 4096) == 0) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		counts = m == MAP_FAILED ? NULL : m;
	}
	close(fd);
	return counts;
}

/* A collective on comm: counted, then (NCCL_SIM_JOB) held until every rank has reached it. */
static ncclResult_t meet(ncclComm_t comm, int func, ncclResult_t r)
{
	if (r != ncclSuccess)
		return r;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	comm->lastNs = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	comm->calls++;
	comm->workIndex += comm->workIndex % 8 == 7 ? 2 : 1;
	comm->workIndexCopy = comm->workIndex + 1;
	if (func < N_FUNCS)
		comm->seqNumber[func]++;
	uint64_t n = ++*comm->made, *counts = job_counts();
	if (!counts || comm->nranks > SIM_JOB_RANKS)
		return r;
	__atomic_store_n(&counts[comm->rank], n, __ATOMIC_RELEASE);
	for (int k = 0; k < comm->nranks; k++)
		while (__atomic_load_n(&counts[k], __ATOMIC_ACQUIRE) < n) {
			struct timespec ms = { 0, 1000000 };
			comm->polls++;
			nanosleep(&ms, NULL);
		}
	return r;
}

/* nccl_cudart.c: the library's own cudart (local symbols). */
__attribute__((visibility("hidden"))) int sim_nccl_malloc(void **p, size_t n);
__attribute__((visibility("hidden"))) int sim_nccl_free(void *p);

static __thread int group_depth;

/* The thread's current device, from the (simulated) runtime the program uses; 0 without. */
static int current_device(void)
{
	int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaGetDevice");
	int dev = 0;
	if (!get || get(&dev) != 0)
		dev = 0;
	return dev;
}

static ncclResult_t make_comm(ncclComm_t *out, int rank, int nranks, int device)
{
	if (!out || nranks < 1 || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	struct ncclComm *c = calloc(1, sizeof *c);
	if (!c)
		return ncclSystemError;
	if (!(c->made = calloc(1, sizeof *c->made))) {
		free(c);
		return ncclSystemError;
	}
	c->magic = SIM_MAGIC, c->rank = rank, c->nranks = nranks, c->device = device;
	/* The buffers on the communicator's device (ncclCommInitAll makes several in one thread). */
	int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaGetDevice");
	int (*set)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "cudaSetDevice");
	int was = 0;
	if (get && set && get(&was) == 0 && was != device)
		set(device);
	if (sim_nccl_malloc(&c->buffers, NCCL_SIM_BUFFER_BYTES) != 0)
		c->buffers = NULL;
	if (get && set && was != device)
		set(was);
	*out = c;
	return ncclSuccess;
}

static int comm_ok(const struct ncclComm *c)
{
	return c && c->magic == SIM_MAGIC;
}

static ncclResult_t check(ncclComm_t comm, ncclDataType_t type, int peer)
{
	if (!comm_ok(comm) || (unsigned)type >= ncclNumTypes)
		return ncclInvalidArgument;
	if (peer != -1 && (peer < 0 || peer >= comm->nranks))
		return ncclInvalidArgument;
	return ncclSuccess;
}

API(ncclResult_t, ncclGetVersion, int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

API(ncclResult_t, ncclGetUniqueId, ncclUniqueId *id)
{
	if (!id)
		return ncclInvalidArgument;
	memset(id, 0, sizeof *id);
	pid_t pid = getpid();
	memcpy(id->internal, &pid, sizeof pid);
	return ncclSuccess;
}

API(const char *, ncclGetErrorString, ncclResult_t result)
{
	return result == ncclSuccess ? "no error" : "simulated NCCL error";
}

API(ncclResult_t, ncclCommInitRank, ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	(void)id;
	return make_comm(comm, rank, nranks, current_device());
}

API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
    ncclConfig_t *config)
{
	(void)id;
	(void)config;
	return make_comm(comm, rank, nranks, current_device());
}

API(ncclResult_t, ncclCommInitAll, ncclComm_t *comms, int ndev, const int *devlist)
{
	if (!comms || ndev < 1)
		return ncclInvalidArgument;
	for (int i = 0; i < ndev; i++) {
		ncclResult_t r = make_comm(&comms[i], i, ndev, devlist ? devlist[i] : i);
		if (r != ncclSuccess)
			return r;
	}
	return ncclSuccess;
}

/* One process drives the whole split: every rank gives the same color here. */
API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
	(void)color;
	(void)key;
	(void)config;
	if (!comm_ok(comm))
		return ncclInvalidArgument;
	return make_comm(newcomm, comm->rank, comm->nranks, comm->device);
}

API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int *rank)
{
	if (!comm_ok(comm) || !rank)
		return ncclInvalidArgument;
	((struct ncclComm *)comm)->calls++;
	*rank = comm->rank;
	return ncclSuccess;
}

API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int *count)
{
	if (!comm_ok(comm) || !count)
		return ncclInvalidArgument;
	((struct ncclComm *)comm)->calls++;
	*count = comm->nranks;
	return ncclSuccess;
}

API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int *device)
{
	if (!comm_ok(comm) || !device)
		return ncclInvalidArgument;
	*device = comm->device;
	return ncclSuccess;
}

static ncclResult_t comm_free(ncclComm_t comm)
{
	if (!comm_ok(comm))
		return ncclInvalidArgument;
	comm->magic = 0;
	if (comm->buffers)
		sim_nccl_free(comm->buffers);
	free(comm->made);
	free(comm);
	return ncclSuccess;
}

API(ncclResult_t, ncclCommFinalize, ncclComm_t comm)
{
	return comm_ok(comm) ? ncclSuccess : ncclInvalidArgument;
}

API(ncclResult_t, ncclCommDestroy, ncclComm_t comm)
{
	return comm_free(comm);
}

API(ncclResult_t, ncclCommAbort, ncclComm_t comm)
{
	return comm_free(comm);
}

API(ncclResult_t, ncclAllReduce, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)op, (void)stream;
	return meet(comm, FUNC_ALLREDUCE, check(comm, datatype, -1));
}

API(ncclResult_t, ncclBroadcast, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
    int root, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)stream;
	return meet(comm, FUNC_BROADCAST, check(comm, datatype, root));
}

API(ncclResult_t, ncclBcast, void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
    cudaStream_t stream)
{
	return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

API(ncclResult_t, ncclReduce, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
    ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)op, (void)stream;
	return meet(comm, FUNC_REDUCE, check(comm, datatype, root));
}

API(ncclResult_t, ncclAllGather, const void *sendbuff, void *recvbuff, size_t sendcount,
    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)sendcount, (void)stream;
	return meet(comm, FUNC_ALLGATHER, check(comm, datatype, -1));
}

API(ncclResult_t, ncclReduceScatter, const void *sendbuff, void *recvbuff, size_t recvcount,
    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)recvcount, (void)op, (void)stream;
	return meet(comm, FUNC_REDUCESCATTER, check(comm, datatype, -1));
}

API(ncclResult_t, ncclAlltoAll, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
    ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)stream;
	return meet(comm, FUNC_P2P, check(comm, datatype, -1));
}

API(ncclResult_t, ncclSend, const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
    ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)count, (void)stream;
	return check(comm, datatype, peer);
}

API(ncclResult_t, ncclRecv, void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
    cudaStream_t stream)
{
	(void)recvbuff, (void)count, (void)stream;
	return check(comm, datatype, peer);
}

API(ncclResult_t, ncclGroupStart, void)
{
	group_depth++;
	return ncclSuccess;
}

API(ncclResult_t, ncclGroupEnd, void)
{
	if (group_depth == 0)
		return ncclInvalidUsage;
	group_depth--;
	return ncclSuccess;
}
