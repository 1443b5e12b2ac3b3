/* decode_call.c — a call's event (cuda_call.h) from its API row and the raw words of its source:
 * the arguments at an int3 or in the call stub's record, its return, a launch ring record
 * (decode.h). The only place that knows which argument of a row is what, once decoded. Pure. */
#include "decode.h"

#include <string.h>

static int64_t int_arg(const uint64_t *a, int pos)
{
	return pos ? (int64_t)(int32_t)a[pos] : -1;
}

static void common(int api, struct cuda_call *c)
{
	memset(c, 0, sizeof *c);
	c->spec = cuda_api_get(api);
	c->api = (int16_t)api;
	c->op = c->spec->op;
	c->device = c->thread_device = -1;
}

static void decode_alloc(const struct api_spec *s, const uint64_t *a, struct call_alloc *m)
{
	m->out = a[s->arg_out];
	m->requested = a[s->arg_size];
	m->pitch_out = s->arg_pitch_out ? a[s->arg_pitch_out] : 0;
	m->height = s->arg_height ? a[s->arg_height] : 1;
	m->kind = s->flags & API_HOST ? MEM_HOST : s->flags & API_MANAGED ? MEM_MANAGED : MEM_DEVICE;
}

static void decode_copy(const struct api_spec *s, const uint64_t *a, decode_is_device_fn is_device,
			void *ctx, struct call_copy *m)
{
	m->bytes = a[s->arg_size] * (s->flags & API_2D ? a[s->arg_height] : 1);
	m->dir = (uint8_t)decode_copy_dir(s, a, is_device, ctx);
	m->dir_known = s->fixed_dir || (s->flags & API_PEER) || (s->arg_kind && a[s->arg_kind] < DIR_COUNT);
	m->async = s->flags & API_ASYNC;
	m->peer = s->flags & API_PEER;
	m->ctx_args = s->flags & API_CTX_ARGS;
	m->dst = a[s->arg_dst];
	m->src = a[s->arg_src];
	m->dst_arg = s->arg_dev ? a[s->arg_dev] : 0;
	m->src_arg = s->arg_src_dev ? a[s->arg_src_dev] : 0;
	m->src_device = m->dst_device = -1;
}

static void decode_graph(const struct api_spec *s, const uint64_t *a, struct call_graph *m)
{
	uint64_t out = s->arg_out ? a[s->arg_out] : 0, ptr = s->arg_ptr ? a[s->arg_ptr] : 0;
	switch (s->op) {
	case OP_CAPTURE_BEGIN:
		m->stream = ptr;
		break;
	case OP_CAPTURE_END:
		m->out = out;
		m->stream = ptr;
		break;
	case OP_GRAPH_INSTANTIATE:
		m->out = out;
		m->graph = ptr;
		break;
	case OP_GRAPH_UPDATE:	/* its first argument is the executable graph itself */
		m->exec = out;
		m->graph = ptr;
		break;
	default:		/* LAUNCH, EXEC_DESTROY */
		m->exec = ptr;
	}
}

void decode_call(int api, const uint64_t *a, decode_read_fn read, void *ctx, decode_is_device_fn is_device,
		 struct cuda_call *c)
{
	common(api, c);
	const struct api_spec *s = c->spec;
	switch (s->op) {
	case OP_ALLOC:
		decode_alloc(s, a, &c->alloc);
		break;
	case OP_FREE:
		c->free_.ptr = a[s->arg_ptr];
		break;
	case OP_LAUNCH:
		c->launch.handle = a[s->arg_ptr];
		c->launch.kernel = -1;
		decode_launch_dims(s, a, read, ctx, c->launch.grid, c->launch.block);
		break;
	case OP_COPY:
		decode_copy(s, a, is_device, ctx, &c->copy);
		break;
	case OP_MEMSET:
		c->memset_.bytes = a[s->arg_size] * (s->elem_size ? s->elem_size : 1) *
				   (s->flags & API_2D ? a[s->arg_height] : 1);
		break;
	case OP_SET_DEVICE:
		c->set_device.device = (int)a[1];
		break;
	case OP_KERNEL_NAME:
		c->name.src = s->name_src;
		c->name.from = a[s->arg_name];
		if (s->name_src == NAME_REGISTER)
			c->name.value = a[s->arg_out];	/* the stub: a value, not an out-pointer */
		else
			c->name.out = a[s->arg_out];
		break;
	case OP_CTX_LEARN:
		c->ctx.out = a[s->arg_out];
		c->ctx.device = (int)a[s->arg_dev];
		break;
	case OP_CTX_SET:
	case OP_CTX_PUSH:
		c->ctx.ctx = a[s->arg_ptr];
		break;
	case OP_COLLECTIVE:
		c->coll.coll = s->coll;
		c->coll.bytes = decode_nccl_bytes(s, a);
		c->coll.comm = s->arg_comm ? a[s->arg_comm] : 0;
		c->coll.peer = (int)int_arg(a, s->arg_peer);
		break;
	case OP_COMM_INIT:
		c->comm_init.out = a[s->arg_out];
		c->comm_init.nranks = (int)int_arg(a, s->arg_nranks);
		c->comm_init.rank = (int)int_arg(a, s->arg_rank);
		c->comm_init.all = s->arg_dev != 0;	/* ncclCommInitAll's devlist */
		c->comm_init.devlist = s->arg_dev ? a[s->arg_dev] : 0;
		break;
	case OP_COMM_QUERY:
		c->comm_query.what = s->coll;
		c->comm_query.out = a[s->arg_out];
		c->comm_query.comm = a[s->arg_comm];
		c->comm_query.value = -1;
		break;
	case OP_TORCH_ALLOC:
	case OP_TORCH_FREE:
		c->torch.allocator = a[1];	/* `this` */
		c->torch.requested = s->arg_size ? a[s->arg_size] : 0;
		c->torch.block = s->arg_ptr ? a[s->arg_ptr] : 0;
		break;
	case OP_CAPTURE_BEGIN:
	case OP_CAPTURE_END:
	case OP_GRAPH_INSTANTIATE:
	case OP_GRAPH_UPDATE:
	case OP_GRAPH_LAUNCH:
	case OP_GRAPH_EXEC_DESTROY:
		decode_graph(s, a, &c->graph);
		break;
	}
}

/* A pointer-sized out-parameter at the return: as the stub read it, else read now (0 if it
 * cannot be). */
static uint64_t out_word(uint64_t addr, bool recorded, uint64_t value, decode_read_fn read, void *ctx)
{
	uint64_t v = 0;
	if (recorded)
		return value;
	return read(ctx, addr, &v, sizeof v) < 0 ? 0 : v;
}

void decode_call_return(struct cuda_call *c, const struct call_return *r, uint64_t now, decode_read_fn read,
			void *ctx)
{
	const struct api_spec *s = c->spec;
	c->returned = true;
	c->retval = r->retval;
	c->result = s->flags & API_VALUE_RET ? 0 : (int)(uint32_t)r->retval;
	c->ns = r->ns;
	c->seen_ns = now;
	c->end_ns = r->end_ns ? r->end_ns : now;
	c->start_ns = r->end_ns && r->start_ns <= r->end_ns ? r->start_ns : 0;
	if (c->result)
		return;	/* the out-parameters hold nothing of it */
	switch (c->op) {
	case OP_ALLOC:
		c->alloc.ptr = out_word(c->alloc.out, r->outs_read, r->out, read, ctx);
		c->alloc.bytes = c->alloc.requested;
		if (c->alloc.ptr && (s->flags & API_PITCH))
			c->alloc.bytes = out_word(c->alloc.pitch_out, r->outs_read, r->out2, read, ctx) *
					 c->alloc.height;
		break;
	case OP_KERNEL_NAME:
		if (c->name.src != NAME_REGISTER)
			c->name.value = out_word(c->name.out, r->outs_read, r->out, read, ctx);
		break;
	case OP_CTX_LEARN:
		c->ctx.ctx = out_word(c->ctx.out, r->outs_read, r->out, read, ctx);
		break;
	/* The rows below stop at their return (API_STOPS): read there, where the caller's memory
	 * surely holds them. */
	case OP_COMM_INIT:
		if (!c->comm_init.all)
			c->comm_init.comm = out_word(c->comm_init.out, false, 0, read, ctx);
		break;
	case OP_COMM_QUERY: {
		int32_t v;
		if (read(ctx, c->comm_query.out, &v, sizeof v) == 0 && v >= 0)
			c->comm_query.value = v;
		break;
	}
	case OP_CAPTURE_END:
		c->graph.graph = out_word(c->graph.out, false, 0, read, ctx);
		break;
	case OP_GRAPH_INSTANTIATE:
		c->graph.exec = out_word(c->graph.out, false, 0, read, ctx);
		break;
	case OP_TORCH_ALLOC:
		c->torch.block = r->retval;	/* the Block handed out */
		break;
	}
}

void decode_call_outs(const struct cuda_call *c, uint64_t *out, uint64_t *out2)
{
	*out = *out2 = 0;
	if (c->op == OP_ALLOC) {
		*out = c->alloc.out;
		*out2 = c->alloc.pitch_out;
	} else if (c->op == OP_KERNEL_NAME) {
		*out = c->name.out;
	} else if (c->op == OP_CTX_LEARN) {
		*out = c->ctx.out;
	}
}

void decode_ring_call(int api, const uint64_t *w, struct cuda_call *c)
{
	uint32_t g[3], b[3];
	uint64_t handle;
	common(api, c);
	c->source = CALL_RING;
	decode_ring_launch(c->spec, w, &handle, g, b);
	if (c->op == OP_GRAPH_LAUNCH) {
		c->graph.exec = handle;
		return;
	}
	c->launch.handle = handle;
	c->launch.kernel = -1;
	memcpy(c->launch.grid, g, sizeof g);
	memcpy(c->launch.block, b, sizeof b);
}
