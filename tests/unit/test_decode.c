/* test_decode.c — unit test of src/cuda/decode.c and decode_call.c with fake registers and a
 * fake stack (no traced program): arguments from registers and the stack, the return address,
 * copy directions, launch dimensions in each launch ABI, ring records, a reader's error passed
 * on, and the call's event (cuda_call.h) from each source: arguments, return, record. x86-64
 * SysV registers are set by name: this test is the ABI's.
 * Prints one "ok"/"not ok" line per check. */
#include "decode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void check(const char *what, bool ok)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

/* The fake program's memory: one stack page and one config block. */
#define STACK 0x7ffd0000ull
#define CONFIG 0x5000ull
static uint64_t stack[64];
static uint32_t config_block[6] = { 40, 2, 1, 256, 1, 1 };
static int reads, fail_reads;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	(void)ctx;
	reads++;
	if (fail_reads)
		return -EFAULT;
	if (addr >= STACK && addr + n <= STACK + sizeof stack) {
		memcpy(buf, (uint8_t *)stack + (addr - STACK), n);
		return 0;
	}
	if (addr == CONFIG && n <= sizeof config_block) {
		memcpy(buf, config_block, n);
		return 0;
	}
	return -EFAULT;
}

static int fail_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	(void)ctx, (void)addr, (void)buf, (void)n;
	failures++;
	printf("not ok - memory read where the stub's record should be used\n");
	return -EFAULT;
}

static bool device_above_1m(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr >= 0x100000;
}

static const struct api_spec *row(const char *name)
{
	int i = cuda_api_find(name);
	if (i < 0) {
		printf("not ok - the API table has %s\n", name);
		failures++;
		static const struct api_spec none;
		return &none;
	}
	return cuda_api_get(i);
}

static arch_regs_t at_entry(void)
{
	arch_regs_t r;
	memset(&r, 0, sizeof r);
	r.rsp = STACK;	/* [rsp] the return address, then the stack arguments */
	return r;
}

int main(void)
{
	uint64_t a[DECODE_MAX_ARGS + 1], ret;
	struct cuda_call ev;
	uint32_t g[3], b[3];

	/* cudaMalloc(void **p, size_t n), with its return address. */
	arch_regs_t r = at_entry();
	r.rdi = 0x7ffd1000, r.rsi = 4096;
	stack[0] = 0x401234;
	memset(a, 0, sizeof a);
	reads = 0;
	check("cudaMalloc: arguments and return address read",
	      decode_args(row("cudaMalloc"), &r, fake_read, NULL, a, &ret) == 0 && a[1] == 0x7ffd1000 &&
		      a[2] == 4096 && ret == 0x401234);
	check("cudaMalloc: one memory read (the return address)", reads == 1);
	decode_call(cuda_api_find("cudaMalloc"), a, fake_read, NULL, device_above_1m, &ev);
	check("cudaMalloc: the event keeps the out-pointer, the size and height 1",
	      ev.alloc.out == 0x7ffd1000 && ev.alloc.requested == 4096 && ev.alloc.height == 1 && !ev.alloc.pitch_out);

	/* cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra): bz and on
	 * are on the stack, after the return address. */
	r = at_entry();
	r.rdi = 0xabc, r.rsi = 64, r.rdx = 2, r.rcx = 3, r.r8 = 128, r.r9 = 4;
	stack[0] = 0x401000, stack[1] = 5, stack[2] = 0, stack[3] = 0;
	memset(a, 0, sizeof a);
	check("cuLaunchKernel: the 7th argument from the stack",
	      decode_args(row("cuLaunchKernel"), &r, fake_read, NULL, a, NULL) == 0 && a[1] == 0xabc &&
		      a[7] == 5);
	decode_launch_dims(row("cuLaunchKernel"), a, fake_read, NULL, g, b);
	check("cuLaunchKernel: grid (64,2,3) block (128,4,5)",
	      g[0] == 64 && g[1] == 2 && g[2] == 3 && b[0] == 128 && b[1] == 4 && b[2] == 5);
	decode_call(cuda_api_find("cuLaunchKernel"), a, fake_read, NULL, device_above_1m, &ev);
	check("a launch's event keeps the handle and the dimensions unchanged", ev.op == OP_LAUNCH &&
	      ev.launch.handle == 0xabc && !memcmp(g, ev.launch.grid, sizeof g) && !memcmp(b, ev.launch.block, sizeof b));

	/* cudaLaunchKernel(func, dim3 grid, dim3 block, ...): dim3 by value in register pairs. */
	r = at_entry();
	r.rdi = 0x4000, r.rsi = 7 | (uint64_t)8 << 32, r.rdx = 9, r.rcx = 32 | (uint64_t)2 << 32, r.r8 = 1;
	memset(a, 0, sizeof a);
	decode_args(row("cudaLaunchKernel"), &r, fake_read, NULL, a, NULL);
	decode_launch_dims(row("cudaLaunchKernel"), a, fake_read, NULL, g, b);
	check("cudaLaunchKernel: dim3 by value, grid (7,8,9) block (32,2,1)",
	      g[0] == 7 && g[1] == 8 && g[2] == 9 && b[0] == 32 && b[1] == 2 && b[2] == 1);

	/* cudaLaunchKernelExC(const cudaLaunchConfig_t *config, ...): dims read through it. */
	r = at_entry();
	r.rdi = CONFIG;
	memset(a, 0, sizeof a);
	decode_args(row("cudaLaunchKernelExC"), &r, fake_read, NULL, a, NULL);
	decode_launch_dims(row("cudaLaunchKernelExC"), a, fake_read, NULL, g, b);
	check("cudaLaunchKernelExC: grid (40,2,1) block (256,1,1) from the config",
	      g[0] == 40 && g[1] == 2 && g[2] == 1 && b[0] == 256 && b[1] == 1 && b[2] == 1);
	fail_reads = 1;
	decode_launch_dims(row("cudaLaunchKernelExC"), a, fake_read, NULL, g, b);
	check("an unreadable config gives zero dimensions, not garbage", g[0] == 0 && b[0] == 0);
	check("an unreadable stack is an error, not a guess",
	      decode_args(row("cudaMalloc"), &r, fake_read, NULL, a, &ret) == -EFAULT);
	fail_reads = 0;

	/* Copy directions: by the kind argument, by the pointers (cudaMemcpyDefault), fixed. */
	const struct api_spec *memcpy_row = row("cudaMemcpy");
	uint64_t c[DECODE_MAX_ARGS + 1] = { 0 };
	c[memcpy_row->arg_dst] = 0x200000, c[memcpy_row->arg_src] = 0x1000, c[memcpy_row->arg_size] = 64;
	c[memcpy_row->arg_kind] = 2;
	check("cudaMemcpy kind 2 is D2H", decode_copy_dir(memcpy_row, c, device_above_1m, NULL) == DIR_D2H);
	c[memcpy_row->arg_kind] = 4;	/* cudaMemcpyDefault */
	check("cudaMemcpyDefault: host source, device destination is H2D",
	      decode_copy_dir(memcpy_row, c, device_above_1m, NULL) == DIR_H2D);
	c[memcpy_row->arg_src] = 0x300000;
	check("cudaMemcpyDefault: device to device is D2D",
	      decode_copy_dir(memcpy_row, c, device_above_1m, NULL) == DIR_D2D);
	check("cuMemcpyHtoD is H2D whatever the pointers",
	      decode_copy_dir(row("cuMemcpyHtoD_v2"), c, device_above_1m, NULL) == DIR_H2D);

	/* Launch ring records: probe + 1, the six register arguments, the first stack one. */
	uint64_t w[8] = { 1, 0xf00, 16, 1, 1, 64, 1, 1 }, handle = 0;
	decode_ring_launch(row("cuLaunchKernel"), w, &handle, g, b);
	check("ring record of cuLaunchKernel: handle, grid (16,1,1), block (64,1,1)",
	      handle == 0xf00 && g[0] == 16 && b[0] == 64 && b[2] == 1);
	uint32_t dims[6] = { 3, 2, 1, 96, 1, 1 };
	uint64_t wx[8] = { 1, CONFIG, 0xbee, 0, 0, 0, 0, 0 };
	memcpy(&wx[3], dims, sizeof dims);
	decode_ring_launch(row("cuLaunchKernelEx"), wx, &handle, g, b);
	check("ring record of cuLaunchKernelEx: the function in the second word, dims in place",
	      handle == 0xbee && g[0] == 3 && g[1] == 2 && b[0] == 96);
	/* Runtime launches through the ring (no libcuda): cudaLaunchKernel's dim3s by value in
	 * the registers the stub records (x | y << 32, then z), cudaLaunchKernelExC's config as
	 * CUlaunchConfig's. */
	uint64_t wr[8] = { 1, 0xcafe, 7 | (uint64_t)5 << 32, 3, 128 | (uint64_t)2 << 32, 4, 0, 0 };
	decode_ring_launch(row("cudaLaunchKernel"), wr, &handle, g, b);
	check("ring record of cudaLaunchKernel: handle, grid (7,5,3), block (128,2,4)",
	      handle == 0xcafe && g[0] == 7 && g[1] == 5 && g[2] == 3 && b[0] == 128 && b[1] == 2 && b[2] == 4);
	wx[2] = 0xbad;
	decode_ring_launch(row("cudaLaunchKernelExC"), wx, &handle, g, b);
	check("ring record of cudaLaunchKernelExC: the function in the second word, dims in place",
	      handle == 0xbad && g[0] == 3 && g[1] == 2 && g[2] == 1 && b[0] == 96);

	/* ncclReduce(send, recv, count, datatype, op, root, comm, stream): count 1000 of
	 * ncclFloat64 (8), the communicator the 7th argument, on the stack after the return address. */
	r = at_entry();
	r.rdi = 0x1000, r.rsi = 0x2000, r.rdx = 1000, r.rcx = 8, r.r8 = 0, r.r9 = 0;
	stack[0] = 0x401234, stack[1] = 0xc0ff, stack[2] = 0x5757;
	memset(a, 0, sizeof a);
	check("ncclReduce: arguments read, the communicator from the stack",
	      decode_args(row("ncclReduce"), &r, fake_read, NULL, a, &ret) == 0 && a[7] == 0xc0ff);
	decode_call(cuda_api_find("ncclReduce"), a, fake_read, NULL, device_above_1m, &ev);
	check("ncclReduce: 8000 bytes, its communicator, no peer, op Reduce", ev.op == OP_COLLECTIVE &&
	      ev.coll.bytes == 8000 && ev.coll.comm == 0xc0ff && ev.coll.peer == -1 && ev.coll.coll == COLL_REDUCE);
	/* ncclSend(buff, count, datatype, peer, comm, stream): 300 x ncclBfloat16 to rank 3. */
	r = at_entry();
	r.rdi = 0x1000, r.rsi = 300, r.rdx = 9, r.rcx = 3, r.r8 = 0xc0ff, r.r9 = 0;
	memset(a, 0, sizeof a);
	decode_args(row("ncclSend"), &r, fake_read, NULL, a, NULL);
	decode_call(cuda_api_find("ncclSend"), a, fake_read, NULL, device_above_1m, &ev);
	check("ncclSend: 600 bytes to peer 3 on its communicator",
	      ev.coll.bytes == 600 && ev.coll.comm == 0xc0ff && ev.coll.peer == 3 && ev.coll.coll == COLL_SEND);
	/* An unknown datatype has no size: no bytes rather than wrong ones. */
	r.rdx = 42;
	decode_args(row("ncclSend"), &r, fake_read, NULL, a, NULL);
	decode_call(cuda_api_find("ncclSend"), a, fake_read, NULL, device_above_1m, &ev);
	check("ncclSend with an unknown datatype: 0 bytes", ev.coll.bytes == 0);
	/* ncclCommInitRank(comm *, nranks, ncclUniqueId [128 bytes, on the stack], rank): the rank
	 * is in the third integer register. */
	r = at_entry();
	r.rdi = 0x7ffd1000, r.rsi = 8, r.rdx = 5;
	decode_args(row("ncclCommInitRank"), &r, fake_read, NULL, a, NULL);
	decode_call(cuda_api_find("ncclCommInitRank"), a, fake_read, NULL, device_above_1m, &ev);
	check("ncclCommInitRank: out-pointer, 8 ranks, rank 5 (the unique id takes no register)",
	      ev.comm_init.out == 0x7ffd1000 && ev.comm_init.nranks == 8 && ev.comm_init.rank == 5);
	check("NCCL rows are found by name, of layer nccl",
	      row("ncclAllReduce")->layer == LAYER_NCCL && row("ncclGroupEnd")->layer == LAYER_NCCL);
	check("pncclAllReduce (NCCL's alias) and ncclBcast (it calls ncclBroadcast) are no rows",
	      cuda_api_find("pncclAllReduce") < 0 && cuda_api_find("ncclBcast") < 0);

	/* The call's event (cuda_call.h), from the same words, for every source. */
	struct call_return rt = { 0 };
	uint64_t out, out2;

	/* cudaMallocPitch(void **p, size_t *pitch, width, height): the pitch read at the return. */
	r = at_entry();
	r.rdi = STACK + 8 * 40, r.rsi = STACK + 8 * 41, r.rdx = 100, r.rcx = 3;
	stack[40] = 0x7000000, stack[41] = 512;
	memset(a, 0, sizeof a);
	decode_args(row("cudaMallocPitch"), &r, fake_read, NULL, a, NULL);
	decode_call(cuda_api_find("cudaMallocPitch"), a, fake_read, NULL, device_above_1m, &ev);
	check("event of cudaMallocPitch: its row, out-pointers, width, height, device memory",
	      ev.spec == row("cudaMallocPitch") && ev.op == OP_ALLOC && ev.alloc.out == STACK + 8 * 40 &&
		      ev.alloc.pitch_out == STACK + 8 * 41 && ev.alloc.requested == 100 && ev.alloc.height == 3 &&
		      ev.alloc.kind == MEM_DEVICE && !ev.returned);
	decode_call_outs(&ev, &out, &out2);
	check("the return stub reads the allocation and the pitch", out == STACK + 8 * 40 && out2 == STACK + 8 * 41);
	rt = (struct call_return){ .retval = 0, .ns = 900, .end_ns = 5000 };
	decode_call_return(&ev, &rt, 6000, fake_read, NULL);
	check("cudaMallocPitch returned: the pointer read, pitch x height bytes, its times",
	      ev.returned && ev.result == 0 && ev.alloc.ptr == 0x7000000 && ev.alloc.bytes == 1536 && ev.ns == 900 &&
		      ev.end_ns == 5000 && ev.seen_ns == 6000);
	decode_call(cuda_api_find("cudaMallocPitch"), a, fake_read, NULL, device_above_1m, &ev);
	rt = (struct call_return){ .retval = 2, .outs_read = true, .out = 0x7000000, .out2 = 512 };
	decode_call_return(&ev, &rt, 6000, fake_read, NULL);
	check("cudaMallocPitch failed (2): no pointer, no bytes; ends when seen",
	      ev.result == 2 && ev.alloc.ptr == 0 && ev.alloc.bytes == 0 && ev.end_ns == 6000);
	memset(a, 0, sizeof a);
	a[1] = 0x100, a[2] = 64;
	decode_call(cuda_api_find("cudaMallocHost"), a, fake_read, NULL, device_above_1m, &ev);
	rt = (struct call_return){ .outs_read = true, .out = 0x9000 };
	decode_call_return(&ev, &rt, 1, fail_read, NULL);
	check("cudaMallocHost recorded by a stub: pinned host memory, the recorded pointer, nothing read",
	      ev.alloc.kind == MEM_HOST && ev.alloc.ptr == 0x9000 && ev.alloc.bytes == 64);

	/* Copies: bytes, direction, mode, a peer copy's device arguments. */
	memset(c, 0, sizeof c);
	c[1] = 0x200000, c[2] = 1, c[3] = 0x300000, c[4] = 0, c[5] = 4096;
	decode_call(cuda_api_find("cudaMemcpyPeerAsync"), c, fake_read, NULL, device_above_1m, &ev);
	check("cudaMemcpyPeerAsync: 4096 bytes D2D, async, peer, from device 0 to device 1",
	      ev.op == OP_COPY && ev.copy.bytes == 4096 && ev.copy.dir == DIR_D2D && ev.copy.async && ev.copy.peer &&
		      !ev.copy.ctx_args && ev.copy.dst_arg == 1 && ev.copy.src_arg == 0 && ev.copy.src == 0x300000 &&
		      ev.copy.src_device == -1 && ev.copy.dst_device == -1);
	const struct api_spec *m2 = row("cudaMemcpy2D");
	memset(c, 0, sizeof c);
	c[m2->arg_size] = 100, c[m2->arg_height] = 3, c[m2->arg_kind] = 2;
	decode_call(cuda_api_find("cudaMemcpy2D"), c, fake_read, NULL, device_above_1m, &ev);
	check("cudaMemcpy2D: width x height bytes, D2H, synchronous",
	      ev.copy.bytes == 300 && ev.copy.dir == DIR_D2H && !ev.copy.async && !ev.copy.peer);
	const struct api_spec *ms = row("cuMemsetD32_v2");
	memset(c, 0, sizeof c);
	c[ms->arg_size] = 10;
	decode_call(cuda_api_find("cuMemsetD32_v2"), c, fake_read, NULL, device_above_1m, &ev);
	check("event of cuMemsetD32: 4 bytes an element", ev.op == OP_MEMSET && ev.memset_.bytes == 40);

	/* A launch from the registers at an int3, and from the ring. */
	r = at_entry();
	r.rdi = 0xabc, r.rsi = 64, r.rdx = 2, r.rcx = 3, r.r8 = 128, r.r9 = 4;
	stack[0] = 0x401000, stack[1] = 5;
	memset(a, 0, sizeof a);
	decode_args(row("cuLaunchKernel"), &r, fake_read, NULL, a, NULL);
	decode_call(cuda_api_find("cuLaunchKernel"), a, fake_read, NULL, device_above_1m, &ev);
	check("event of cuLaunchKernel: the handle, grid (64,2,3) block (128,4,5), kernel not found yet",
	      ev.op == OP_LAUNCH && ev.launch.handle == 0xabc && ev.launch.grid[0] == 64 && ev.launch.grid[2] == 3 &&
		      ev.launch.block[0] == 128 && ev.launch.block[2] == 5 && ev.launch.kernel == -1 && ev.result == 0);
	decode_ring_call(cuda_api_find("cuLaunchKernel"), w, &ev);
	check("event of a ring record: a launch seen in the ring, no return, the handle and dims",
	      ev.source == CALL_RING && !ev.returned && ev.launch.handle == 0xf00 && ev.launch.grid[0] == 16 &&
		      ev.launch.block[0] == 64);
	uint64_t wg[8] = { 1, 0xe1ec };
	decode_ring_call(cuda_api_find("cuGraphLaunch"), wg, &ev);
	check("event of a ring record of cuGraphLaunch: the executable graph", ev.op == OP_GRAPH_LAUNCH &&
	      ev.graph.exec == 0xe1ec);

	/* NCCL: a collective's bytes, a communicator made, a rank asked. */
	memset(a, 0, sizeof a);
	a[1] = 0x1000, a[2] = 0x2000, a[3] = 1000, a[4] = 7, a[5] = 0x5757;	/* ncclFloat32 */
	decode_call(cuda_api_find("ncclAllGather"), a, fake_read, NULL, device_above_1m, &ev);
	check("event of ncclAllGather: 1000 x ncclFloat32, no peer", ev.coll.coll == COLL_ALLGATHER &&
	      ev.coll.bytes == 4000 && ev.coll.comm == 0x5757 && ev.coll.peer == -1);
	memset(a, 0, sizeof a);
	a[1] = STACK + 8 * 42, a[2] = 8, a[3] = 5;
	stack[42] = 0xc044;
	decode_call(cuda_api_find("ncclCommInitRank"), a, fake_read, NULL, device_above_1m, &ev);
	rt = (struct call_return){ 0 };
	decode_call_return(&ev, &rt, 1, fake_read, NULL);
	check("ncclCommInitRank returned: the communicator read at its return, rank 5 of 8",
	      !ev.comm_init.all && ev.comm_init.comm == 0xc044 && ev.comm_init.rank == 5 && ev.comm_init.nranks == 8);
	memset(a, 0, sizeof a);
	a[1] = 0xc044, a[2] = STACK + 8 * 43;
	stack[43] = 3;
	decode_call(cuda_api_find("ncclCommUserRank"), a, fake_read, NULL, device_above_1m, &ev);
	decode_call_return(&ev, &rt, 1, fake_read, NULL);
	check("ncclCommUserRank returned: rank 3 of communicator 0xc044", ev.comm_query.what == COLL_RANK &&
	      ev.comm_query.comm == 0xc044 && ev.comm_query.value == 3);

	/* Graphs: the captured graph and the executable graph read at their returns. */
	memset(a, 0, sizeof a);
	a[1] = 0x5, a[2] = STACK + 8 * 44;
	stack[44] = 0x6a;
	decode_call(cuda_api_find("cudaStreamEndCapture"), a, fake_read, NULL, device_above_1m, &ev);
	decode_call_return(&ev, &rt, 1, fake_read, NULL);
	check("cudaStreamEndCapture returned: the stream and the captured graph",
	      cuda_call_is_graph(&ev) && ev.graph.stream == 0x5 && ev.graph.graph == 0x6a);
	memset(a, 0, sizeof a);
	a[1] = 0xe0, a[2] = 0x6a;
	decode_call(cuda_api_find("cuGraphExecUpdate"), a, fake_read, NULL, device_above_1m, &ev);
	check("cuGraphExecUpdate: the executable graph is its first argument, the graph its second",
	      ev.graph.exec == 0xe0 && ev.graph.graph == 0x6a);

	/* Names, contexts, a value returned (PyTorch's allocator), an error. */
	memset(a, 0, sizeof a);
	a[2] = 0x4010, a[3] = 0x5000;
	decode_call(cuda_api_find("__cudaRegisterFunction"), a, fake_read, NULL, device_above_1m, &ev);
	check("__cudaRegisterFunction: the stub is the value named, from the string",
	      ev.name.src == NAME_REGISTER && ev.name.value == 0x4010 && ev.name.from == 0x5000 && ev.name.out == 0);
	memset(a, 0, sizeof a);
	a[1] = 0x7ffd2000, a[2] = 1;
	decode_call(cuda_api_find("cuDevicePrimaryCtxRetain"), a, fake_read, NULL, device_above_1m, &ev);
	rt = (struct call_return){ .outs_read = true, .out = 0xc7c };
	decode_call_return(&ev, &rt, 1, fake_read, NULL);
	check("cuDevicePrimaryCtxRetain: context 0xc7c of device 1", ev.ctx.ctx == 0xc7c && ev.ctx.device == 1);
	int torch_alloc = -1;
	for (int i = 0; i < cuda_api_count(); i++)
		if (cuda_api_get(i)->op == OP_TORCH_ALLOC)
			torch_alloc = i;
	memset(a, 0, sizeof a);
	a[1] = 0xdca, a[3] = 1 << 20;
	decode_call(torch_alloc, a, fake_read, NULL, device_above_1m, &ev);
	rt = (struct call_return){ .retval = 0x7f0012345678, .ns = 10 };
	decode_call_return(&ev, &rt, 1, fake_read, NULL);
	check("alloc_found_block: a Block is a value, not an error",
	      ev.result == 0 && ev.torch.allocator == 0xdca && ev.torch.requested == 1 << 20 &&
		      ev.torch.block == 0x7f0012345678);
	memset(a, 0, sizeof a);
	decode_call(cuda_api_find("cudaSetDevice"), a, fake_read, NULL, device_above_1m, &ev);
	rt = (struct call_return){ .retval = 101 };
	decode_call_return(&ev, &rt, 1, fake_read, NULL);
	check("cudaSetDevice returning 101: its error", ev.result == 101 && !cuda_call_ok(&ev));

	printf("%d failure(s)\n", failures);
	return failures != 0;
}
