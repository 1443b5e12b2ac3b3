/* nccl_job.c — known NCCL and multi-GPU work, for gputop's communication tests, on the
 * SIMULATED runtime and NCCL (tests/sim; nothing moves). It writes its own account of what it
 * issued to $NCCL_JOB_ACCOUNT (one JSON object: pid, rank, nranks, collectives by op with calls
 * and bytes, point-to-point sends by source and destination device), so that the tests compare
 * gputop's figures with the program's, not with numbers written in the test.
 *
 *   nccl_job all ITER     one process drives every device (cudaGetDeviceCount) through
 *                         ncclCommInitAll: grouped collectives on each, a ring of sends
 *   nccl_job rank R N ITER  rank R of N processes (device R, ncclCommInitRank; the rank is not
 *                         in the environment): collectives, then a send to the next rank and a
 *                         receive from the previous one
 *   nccl_job peer ITER    peer copies between devices (cudaMemcpyPeer, cudaMemcpyPeerAsync,
 *                         cudaMemcpy D2D and cudaMemcpyDefault across devices), allocations and
 *                         synchronize calls on each device
 *   nccl_job ctx          the driver API on two devices: contexts made current (cuCtxSetCurrent,
 *                         cuCtxPushCurrent/PopCurrent), an allocation under each, a
 *                         cuMemcpyPeer between the contexts' devices, a synchronize; its
 *                         account adds "allocations": allocations per device
 *   nccl_job errors N     NCCL calls that fail without a communicator or a GPU, N times each
 *                         (for the real NCCL of the toolkit, on a machine without a GPU); one
 *                         line "nccl_job: NAME calls=N failed=F" per function
 * With NCCL_JOB_GO=FILE a rank prints "ready PID" once its communicator is made and waits for
 * FILE before its collectives (gputop -p attaches there).
 * With NCCL_JOB_STOP=FILE it waits, after its work and its account, until FILE exists (at most
 * 120 s), so that a test can look at a TUI while the program still runs. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

#define MAX_DEV 8
static const char *const op_name[] = { "AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter",
				       "AlltoAll", "Send", "Recv" };
enum { AR, BC, RD, AG, RS, A2A, SEND, RECV, N_OPS };
static unsigned long long calls[N_OPS], bytes[N_OPS];
static unsigned long long p2p_calls[MAX_DEV][MAX_DEV], p2p_bytes[MAX_DEV][MAX_DEV];
static int failures;

static size_t type_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8: case ncclUint8: return 1;
	case ncclFloat16: case ncclBfloat16: return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
	default: return 8;
	}
}

/* A call that succeeded counts in the account. */
static void note_call(int op, ncclResult_t r, size_t count, ncclDataType_t t)
{
	if (r != ncclSuccess) {
		fprintf(stderr, "nccl_job: %s failed: %d\n", op_name[op], r);
		failures++;
		return;
	}
	calls[op]++;
	bytes[op] += count * type_size(t);
}

static void note_p2p(int src, int dst, size_t n)
{
	p2p_calls[src][dst]++;
	p2p_bytes[src][dst] += n;
}

static void hold(void)
{
	const char *stop = getenv("NCCL_JOB_STOP");
	for (int i = 0; stop && i < 2400 && access(stop, F_OK) != 0; i++)
		progs_sleep_ms(50);
}

static unsigned long long dev_allocs[MAX_DEV];

static void write_account(int rank, int nranks)
{
	const char *path = getenv("NCCL_JOB_ACCOUNT");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, "{\"pid\":%d,\"rank\":%d,\"nranks\":%d,\"allocations\":[", (int)getpid(), rank, nranks);
	for (int d = 0; d < MAX_DEV; d++)
		fprintf(f, "%s%llu", d ? "," : "", dev_allocs[d]);
	fprintf(f, "],\"collectives\":{");
	int first = 1;
	for (int i = 0; i < N_OPS; i++)
		if (calls[i]) {
			fprintf(f, "%s\"%s\":{\"calls\":%llu,\"bytes\":%llu}", first ? "" : ",", op_name[i], calls[i], bytes[i]);
			first = 0;
		}
	fprintf(f, "},\"p2p\":[");
	first = 1;
	for (int s = 0; s < MAX_DEV; s++)
		for (int d = 0; d < MAX_DEV; d++)
			if (p2p_calls[s][d]) {
				fprintf(f, "%s{\"src_device\":%d,\"dst_device\":%d,\"calls\":%llu,\"bytes\":%llu}",
					first ? "" : ",", s, d, p2p_calls[s][d], p2p_bytes[s][d]);
				first = 0;
			}
	fprintf(f, "]}\n");
	fclose(f);
}

static void account_and_hold(int rank, int nranks)
{
	write_account(rank, nranks);
	hold();
}

/* The collectives of one iteration on comm, with counts that differ per op and per iteration. */
static void collectives(ncclComm_t comm, void *buf, int it)
{
	size_t n = 1000 + 10 * (size_t)it;
	note_call(AR, ncclAllReduce(buf, buf, n, ncclFloat32, ncclSum, comm, NULL), n, ncclFloat32);
	note_call(AG, ncclAllGather(buf, buf, n / 2, ncclFloat16, comm, NULL), n / 2, ncclFloat16);
	note_call(RS, ncclReduceScatter(buf, buf, n / 4, ncclBfloat16, ncclMax, comm, NULL), n / 4, ncclBfloat16);
	if (it % 2 == 0)
		note_call(BC, ncclBcast(buf, 333, ncclInt64, 0, comm, NULL), 333, ncclInt64);
	else
		note_call(BC, ncclBroadcast(buf, buf, 77, ncclUint8, 0, comm, NULL), 77, ncclUint8);
	note_call(RD, ncclReduce(buf, buf, 64, ncclFloat64, ncclSum, 0, comm, NULL), 64, ncclFloat64);
	note_call(A2A, ncclAlltoAll(buf, buf, 128, ncclInt32, comm, NULL), 128, ncclInt32);
}

static void *device_buffer(size_t n)
{
	void *p = NULL;
	if (cudaMalloc(&p, n) != cudaSuccess) {
		fprintf(stderr, "nccl_job: cudaMalloc failed\n");
		exit(1);
	}
	return p;
}

static int run_all(int iters)
{
	int ndev = 0;
	ncclComm_t comms[MAX_DEV];
	void *buf[MAX_DEV];
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2 || ndev > MAX_DEV) {
		fprintf(stderr, "nccl_job: needs 2 to %d devices (SIMCUDA_DEVICES)\n", MAX_DEV);
		return 1;
	}
	for (int d = 0; d < ndev; d++) {
		cudaSetDevice(d);
		buf[d] = device_buffer(1 << 20);
	}
	if (ncclCommInitAll(comms, ndev, NULL) != ncclSuccess) {
		fprintf(stderr, "nccl_job: ncclCommInitAll failed\n");
		return 1;
	}
	for (int it = 0; it < iters; it++) {
		ncclGroupStart();
		for (int d = 0; d < ndev; d++)
			collectives(comms[d], buf[d], it);
		ncclGroupEnd();
		/* A ring: rank d sends to d+1 and receives from d-1 (rank d is device d). */
		size_t n = 4096 * (size_t)(it + 1);
		ncclGroupStart();
		for (int d = 0; d < ndev; d++) {
			int next = (d + 1) % ndev, prev = (d + ndev - 1) % ndev;
			ncclResult_t r = ncclSend(buf[d], n, ncclFloat32, next, comms[d], NULL);
			note_call(SEND, r, n, ncclFloat32);
			if (r == ncclSuccess)
				note_p2p(d, next, n * 4);
			note_call(RECV, ncclRecv(buf[d], n, ncclFloat32, prev, comms[d], NULL), n, ncclFloat32);
		}
		ncclGroupEnd();
	}
	/* Wrong on purpose: an unknown datatype fails, and is no collective. */
	if (ncclAllReduce(buf[0], buf[0], 8, (ncclDataType_t)99, ncclSum, comms[0], NULL) == ncclSuccess)
		failures++;
	for (int d = 0; d < ndev; d++)
		ncclCommDestroy(comms[d]);
	account_and_hold(-1, ndev);
	printf("nccl_job: all ok devices=%d iterations=%d\n", ndev, iters);
	return failures != 0;
}

static int run_rank(int rank, int nranks, int iters)
{
	ncclUniqueId id;
	ncclComm_t comm;
	memset(&id, 0, sizeof id);
	if (cudaSetDevice(rank) != cudaSuccess) {
		fprintf(stderr, "nccl_job: cudaSetDevice(%d) failed (SIMCUDA_DEVICES)\n", rank);
		return 1;
	}
	void *buf = device_buffer(1 << 20);
	if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) {
		fprintf(stderr, "nccl_job: ncclCommInitRank failed\n");
		return 1;
	}
	const char *go = getenv("NCCL_JOB_GO");
	if (go) {
		progs_ready();
		for (int i = 0; i < 2400 && access(go, F_OK) != 0; i++)
			progs_sleep_ms(50);
	}
	for (int it = 0; it < iters; it++) {
		collectives(comm, buf, it);
		size_t n = 512 * (size_t)(rank + 1);
		int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
		ncclGroupStart();
		ncclResult_t r = ncclSend(buf, n, ncclInt64, next, comm, NULL);
		note_call(SEND, r, n, ncclInt64);
		if (r == ncclSuccess)
			note_p2p(rank, next, n * 8);	/* rank r runs on device r */
		note_call(RECV, ncclRecv(buf, 512 * (size_t)(prev + 1), ncclInt64, prev, comm, NULL),
			  512 * (size_t)(prev + 1), ncclInt64);
		ncclGroupEnd();
	}
	ncclCommDestroy(comm);
	account_and_hold(rank, nranks);
	printf("nccl_job: rank %d of %d ok iterations=%d\n", rank, nranks, iters);
	return failures != 0;
}

static void peer_copy(int dst, void *d, int src, const void *s, size_t n, int async)
{
	cudaError_t e = async ? cudaMemcpyPeerAsync(d, dst, s, src, n, NULL) : cudaMemcpyPeer(d, dst, s, src, n);
	if (e != cudaSuccess) {
		fprintf(stderr, "nccl_job: cudaMemcpyPeer%s %d->%d failed: %d\n", async ? "Async" : "", src, dst, e);
		failures++;
		return;
	}
	note_p2p(src, dst, n);
}

static void copy(void *d, int dst, const void *s, int src, size_t n, enum cudaMemcpyKind kind)
{
	if (cudaMemcpy(d, s, n, kind) != cudaSuccess) {
		fprintf(stderr, "nccl_job: cudaMemcpy %d->%d failed\n", src, dst);
		failures++;
		return;
	}
	if (src != dst)
		note_p2p(src, dst, n);
}

static int run_peer(int iters)
{
	int ndev = 0;
	void *buf[MAX_DEV];
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 4 || ndev > MAX_DEV) {
		fprintf(stderr, "nccl_job: needs 4 to %d devices (SIMCUDA_DEVICES)\n", MAX_DEV);
		return 1;
	}
	for (int d = 0; d < ndev; d++) {
		cudaSetDevice(d);
		buf[d] = device_buffer(1 << 20);
		cudaDeviceSynchronize();
	}
	cudaSetDevice(0);
	for (int it = 0; it < iters; it++) {
		peer_copy(1, buf[1], 0, buf[0], 65536, 0);
		peer_copy(3, buf[3], 2, buf[2], 8192, 1);
		copy(buf[2], 2, buf[1], 1, 4096 * (size_t)(it + 1), cudaMemcpyDeviceToDevice);
		copy(buf[0], 0, buf[3], 3, 1000, cudaMemcpyDefault);
		copy(buf[0], 0, (char *)buf[0] + 4096, 0, 2048, cudaMemcpyDeviceToDevice);	/* same device */
	}
	account_and_hold(-1, -1);
	printf("nccl_job: peer ok devices=%d iterations=%d\n", ndev, iters);
	return failures != 0;
}

static int drv(const char *what, CUresult r)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "nccl_job: %s failed: %d\n", what, (int)r);
		failures++;
	}
	return r == CUDA_SUCCESS;
}

/* The driver, loaded at run time (as cudart does): nccl_job's other modes run where there is
 * no libcuda.so.1 at all (tests/e2e/real_nccl.sh). */
static struct {
	__typeof__(cuInit) *Init;
	__typeof__(cuDevicePrimaryCtxRetain) *PrimaryCtxRetain;
	__typeof__(cuCtxSetCurrent) *SetCurrent;
	__typeof__(cuCtxPushCurrent) *PushCurrent;
	__typeof__(cuCtxPopCurrent) *PopCurrent;
	__typeof__(cuMemAlloc) *MemAlloc;
	__typeof__(cuMemcpyPeer) *MemcpyPeer;
	__typeof__(cuCtxSynchronize) *Synchronize;
} cu;

static int driver_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib)
		return 0;
	cu.Init = (__typeof__(cu.Init))dlsym(lib, "cuInit");
	cu.PrimaryCtxRetain = (__typeof__(cu.PrimaryCtxRetain))dlsym(lib, "cuDevicePrimaryCtxRetain");
	cu.SetCurrent = (__typeof__(cu.SetCurrent))dlsym(lib, "cuCtxSetCurrent");
	cu.PushCurrent = (__typeof__(cu.PushCurrent))dlsym(lib, "cuCtxPushCurrent_v2");
	cu.PopCurrent = (__typeof__(cu.PopCurrent))dlsym(lib, "cuCtxPopCurrent_v2");
	cu.MemAlloc = (__typeof__(cu.MemAlloc))dlsym(lib, "cuMemAlloc_v2");
	cu.MemcpyPeer = (__typeof__(cu.MemcpyPeer))dlsym(lib, "cuMemcpyPeer");
	cu.Synchronize = (__typeof__(cu.Synchronize))dlsym(lib, "cuCtxSynchronize");
	return cu.Init && cu.PrimaryCtxRetain && cu.SetCurrent && cu.PushCurrent && cu.PopCurrent && cu.MemAlloc &&
	       cu.MemcpyPeer && cu.Synchronize;
}

static CUdeviceptr drv_alloc(int dev)
{
	CUdeviceptr p = 0;
	if (drv("cuMemAlloc", cu.MemAlloc(&p, 1 << 16)))
		dev_allocs[dev]++;
	return p;
}

static int run_ctx(void)
{
	CUcontext c0, c1, popped;
	if (!driver_load()) {
		fprintf(stderr, "nccl_job: no libcuda.so.1 with the driver API's functions\n");
		return 1;
	}
	if (!drv("cuInit", cu.Init(0)) || !drv("cuDevicePrimaryCtxRetain", cu.PrimaryCtxRetain(&c0, 0)) ||
	    !drv("cuDevicePrimaryCtxRetain", cu.PrimaryCtxRetain(&c1, 1)))
		return 1;
	drv("cuCtxSetCurrent", cu.SetCurrent(c1));
	CUdeviceptr a1 = drv_alloc(1);
	drv("cuCtxPushCurrent", cu.PushCurrent(c0));
	CUdeviceptr a0 = drv_alloc(0);
	drv("cuCtxPopCurrent", cu.PopCurrent(&popped));
	drv_alloc(1);
	if (drv("cuMemcpyPeer", cu.MemcpyPeer(a1, c1, a0, c0, 4096)))
		note_p2p(0, 1, 4096);
	drv("cuCtxSynchronize", cu.Synchronize());
	account_and_hold(-1, -1);
	printf("nccl_job: ctx ok\n");
	return failures != 0;
}

static void tally(const char *name, int n, ncclResult_t (*call)(void))
{
	int failed = 0;
	for (int i = 0; i < n; i++)
		failed += call() != ncclSuccess;
	printf("nccl_job: %s calls=%d failed=%d\n", name, n, failed);
}

static ncclResult_t allreduce_no_comm(void)
{
	static float x[4];
	return ncclAllReduce(x, x, 4, ncclFloat32, ncclSum, NULL, NULL);
}

static ncclResult_t send_no_comm(void)
{
	static float x[4];
	return ncclSend(x, 4, ncclFloat32, 1, NULL, NULL);
}

static ncclResult_t group_start(void)
{
	return ncclGroupStart();
}

static ncclResult_t group_end(void)
{
	return ncclGroupEnd();
}

static ncclResult_t init_rank(void)
{
	ncclUniqueId id;
	ncclComm_t comm = NULL;
	memset(&id, 0, sizeof id);
	ncclResult_t r = ncclCommInitRank(&comm, 2, id, 5);	/* rank 5 of 2: never valid */
	if (r == ncclSuccess)
		ncclCommDestroy(comm);
	return r;
}

static int run_errors(int n)
{
	tally("ncclGroupStart", n, group_start);
	tally("ncclAllReduce", n, allreduce_no_comm);
	tally("ncclSend", n, send_no_comm);
	tally("ncclGroupEnd", n, group_end);
	tally("ncclCommInitRank", n, init_rank);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "all") == 0)
		return run_all(atoi(argv[2]));
	if (argc == 5 && strcmp(argv[1], "rank") == 0)
		return run_rank(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && strcmp(argv[1], "peer") == 0)
		return run_peer(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "ctx") == 0)
		return run_ctx();
	if (argc == 3 && strcmp(argv[1], "errors") == 0)
		return run_errors(atoi(argv[2]));
	fprintf(stderr, "usage: nccl_job all ITER | rank R N ITER | peer ITER | ctx | errors N\n");
	return 2;
}
