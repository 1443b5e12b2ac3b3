/* graph_query.c — a graph's nodes, asked from the driver in a stopped thread (graph_query.h).
 * The layouts read are cuda.h's CUDA_KERNEL_NODE_PARAMS_v2, CUDA_MEMCPY3D and
 * CUDA_MEMSET_NODE_PARAMS on x86-64 (offsets checked against the header when it is there). */
#include "graph_query.h"

#include <errno.h>
#include <string.h>

#include "memory.h"
#include "threads.h"
#include "xol.h"

static const char fn_names[GQ_FN_COUNT][32] = {
	[GQ_GET_NODES] = "cuGraphGetNodes",
	[GQ_NODE_TYPE] = "cuGraphNodeGetType",
	[GQ_KERNEL_PARAMS] = "cuGraphKernelNodeGetParams_v2",
	[GQ_MEMCPY_PARAMS] = "cuGraphMemcpyNodeGetParams",
	[GQ_MEMSET_PARAMS] = "cuGraphMemsetNodeGetParams",
};

int graph_query_fn_index(const char *symbol)
{
	if (strncmp(symbol, "cuGraph", 7) != 0)
		return -1;
	for (int i = 0; i < GQ_FN_COUNT; i++)
		if (strcmp(symbol, fn_names[i]) == 0)
			return i;
	return -1;
}

/* Offsets (bytes) in the parameter structures. */
#define KP_FUNC 0
#define KP_GRID 8	/* grid x,y,z then block x,y,z: six u32 */
#define KP_KERN 56
#define KP_SIZE 72
#define M3_SRC_TYPE 32
#define M3_SRC_HOST 40
#define M3_SRC_DEVICE 48
#define M3_DST_TYPE 120
#define M3_DST_HOST 128
#define M3_DST_DEVICE 136
#define M3_WIDTH 176
#define M3_HEIGHT 184
#define M3_DEPTH 192
#define M3_SIZE 200
#define MS_ELEMENT 20
#define MS_WIDTH 24
#define MS_HEIGHT 32
#define MS_SIZE 40
#define NODES_AT 1024	/* the node list's offset in the scratch; the parameters go below it */
_Static_assert(NODES_AT + 8 * GQ_MAX_NODES <= XOL_SCRATCH_SIZE, "the node list fits the scratch");

/* fn(a, b) in the thread; 0 when it returned CUDA_SUCCESS. */
static int call2(struct tracee *p, struct thread *t, uint64_t fn, uint64_t a, uint64_t b, uint64_t c, uint64_t *scratch)
{
	uint64_t args[6] = { a, b, c, 0, 0, 0 }, ret = 1;
	int err = xol_call(p, t, fn, args, &ret, scratch);
	return err < 0 ? err : (uint32_t)ret ? -EIO : 0;
}

static uint64_t u64_at(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static uint32_t u32_at(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static uint64_t at_least_1(uint64_t v)
{
	return v ? v : 1;
}

static int describe(struct tracee *p, struct thread *t, const uint64_t *fns, uint64_t node, uint64_t scratch,
		    struct graph_query_node *out)
{
	uint8_t raw[M3_SIZE];
	memset(out, 0, sizeof *out);
	int err = call2(p, t, fns[GQ_NODE_TYPE], node, scratch, 0, NULL);
	if (err == 0)
		err = mem_read(t->tid, scratch, &out->type, sizeof out->type);
	if (err < 0)
		return err;
	switch (out->type) {
	case GQ_TYPE_KERNEL:
		if ((err = call2(p, t, fns[GQ_KERNEL_PARAMS], node, scratch, 0, NULL)) < 0 ||
		    (err = mem_read(t->tid, scratch, raw, KP_SIZE)) < 0)
			return err;
		out->func = u64_at(raw, KP_FUNC);
		out->kern = u64_at(raw, KP_KERN);
		for (int i = 0; i < 3; i++) {
			out->grid[i] = u32_at(raw, KP_GRID + 4 * i);
			out->block[i] = u32_at(raw, KP_GRID + 12 + 4 * i);
		}
		break;
	case GQ_TYPE_MEMCPY:
		if ((err = call2(p, t, fns[GQ_MEMCPY_PARAMS], node, scratch, 0, NULL)) < 0 ||
		    (err = mem_read(t->tid, scratch, raw, M3_SIZE)) < 0)
			return err;
		out->bytes = u64_at(raw, M3_WIDTH) * at_least_1(u64_at(raw, M3_HEIGHT)) * at_least_1(u64_at(raw, M3_DEPTH));
		out->src_type = u32_at(raw, M3_SRC_TYPE);
		out->dst_type = u32_at(raw, M3_DST_TYPE);
		out->src = out->src_type == 1 ? u64_at(raw, M3_SRC_HOST) : u64_at(raw, M3_SRC_DEVICE);
		out->dst = out->dst_type == 1 ? u64_at(raw, M3_DST_HOST) : u64_at(raw, M3_DST_DEVICE);
		break;
	case GQ_TYPE_MEMSET:
		if ((err = call2(p, t, fns[GQ_MEMSET_PARAMS], node, scratch, 0, NULL)) < 0 ||
		    (err = mem_read(t->tid, scratch, raw, MS_SIZE)) < 0)
			return err;
		out->bytes = u32_at(raw, MS_ELEMENT) * u64_at(raw, MS_WIDTH) * at_least_1(u64_at(raw, MS_HEIGHT));
		break;
	}
	return 0;
}

int graph_query_nodes(struct tracee *p, struct thread *t, const uint64_t fns[GQ_FN_COUNT], uint64_t graph,
		      struct graph_query_node *out, uint32_t *n)
{
	uint64_t nodes[GQ_MAX_NODES];	/* 63 KiB: the tracer is the main thread */
	uint64_t scratch = 0, count = 0;
	*n = 0;
	for (int i = 0; i < GQ_FN_COUNT; i++)
		if (!fns[i])
			return -ENOSYS;
	/* The count first (a NULL list), then the list, of at most that many. */
	int err = call2(p, t, fns[GQ_GET_NODES], graph, 0, XOL_SCRATCH, &scratch);
	if (err == 0)
		err = mem_read(t->tid, scratch, &count, sizeof count);
	if (err < 0)
		return err;
	if (count > GQ_MAX_NODES)
		return -E2BIG;
	if (count && ((err = mem_write(t->tid, scratch, &count, sizeof count)) < 0 ||
		      (err = call2(p, t, fns[GQ_GET_NODES], graph, scratch + NODES_AT, scratch, NULL)) < 0 ||
		      (err = mem_read(t->tid, scratch + NODES_AT, nodes, 8 * count)) < 0))
		return err;
	for (uint64_t i = 0; i < count; i++)
		if ((err = describe(p, t, fns, nodes[i], scratch, &out[i])) < 0)
			return err;
	*n = (uint32_t)count;
	return 0;
}
