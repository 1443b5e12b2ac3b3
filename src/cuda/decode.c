/* decode.c — a probed call's arguments read by its API table row (decode.h). */
#include "decode.h"

#include <string.h>

/* The highest argument position a row reads. */
static int max_arg(const struct api_spec *s)
{
	int m = 0;
	const int8_t pos[] = { s->arg_out, s->arg_size, s->arg_height, s->arg_pitch_out, s->arg_ptr,
			       s->arg_dst, s->arg_src, s->arg_kind, s->arg_name, s->arg_dev, s->arg_src_dev,
			       s->arg_count, s->arg_dtype, s->arg_comm, s->arg_peer, s->arg_rank, s->arg_nranks };
	for (size_t i = 0; i < sizeof pos; i++)
		if (pos[i] > m)
			m = pos[i];
	if (s->op == OP_LAUNCH && s->launch == LAUNCH_DRV)
		m = m > 7 ? m : 7;	/* blockDimZ is the 7th */
	if (s->op == OP_LAUNCH && s->launch == LAUNCH_RT)
		m = m > ARCH_RT_LAUNCH_SLOTS ? m : ARCH_RT_LAUNCH_SLOTS;
	return m;
}

int decode_args(const struct api_spec *s, const arch_regs_t *r, decode_read_fn read, void *ctx,
		uint64_t a[DECODE_MAX_ARGS + 1], uint64_t *ret)
{
	int n = max_arg(s), on_stack = 0, first_on_stack = 0;
	uint64_t words[DECODE_MAX_ARGS + 1], stack_base = 0;
	for (int i = 1; i <= n; i++) {
		uint64_t where;
		if (!arch_arg(r, i, &a[i], &where)) {
			if (!on_stack) {
				first_on_stack = i;
				stack_base = where;
			}
			on_stack = i - first_on_stack + 1;
		}
	}
	if (!on_stack && !ret)
		return 0;
	uint64_t from = ret ? arch_return_slot(r) : stack_base;
	int count = on_stack + (ret ? 1 : 0);
	/* With the return address: the stack arguments follow it directly. */
	int err = read(ctx, from, words, 8 * (size_t)count);
	if (err < 0)
		return err;
	if (ret)
		*ret = words[0];
	for (int i = 0; i < on_stack; i++)
		a[first_on_stack + i] = words[i + (ret ? 1 : 0)];
	return 0;
}

uint64_t decode_nccl_bytes(const struct api_spec *s, const uint64_t *a)
{
	return a[s->arg_count] * cuda_nccl_type_size(a[s->arg_dtype]);
}

enum copy_dir decode_copy_dir(const struct api_spec *s, const uint64_t *a, decode_is_device_fn is_device,
			      void *ctx)
{
	if (s->fixed_dir)
		return (enum copy_dir)(s->fixed_dir - 1);
	if (s->flags & API_PEER)
		return DIR_D2D;
	if (s->arg_kind && a[s->arg_kind] <= 3)
		return (enum copy_dir)a[s->arg_kind];	/* cudaMemcpyKind: H2H H2D D2H D2D */
	/* cudaMemcpyDefault or a driver cuMemcpy: the pointers say, as far as we know them. */
	bool dst_dev = is_device(ctx, a[s->arg_dst]);
	bool src_dev = is_device(ctx, a[s->arg_src]);
	return src_dev ? (dst_dev ? DIR_D2D : DIR_D2H) : (dst_dev ? DIR_H2D : DIR_H2H);
}

void decode_launch_dims(const struct api_spec *s, const uint64_t *a,
			decode_read_fn read, void *ctx, uint32_t grid[3], uint32_t block[3])
{
	memset(grid, 0, 3 * sizeof grid[0]);
	memset(block, 0, 3 * sizeof block[0]);
	switch (s->launch) {
	case LAUNCH_RT:
		arch_rt_launch_dims(a, grid, block);
		break;
	case LAUNCH_DRV:
		for (int i = 0; i < 3; i++) {
			grid[i] = (uint32_t)a[2 + i];
			block[i] = (uint32_t)a[5 + i];
		}
		break;
	case LAUNCH_RT_EXC:
	case LAUNCH_DRV_EX: {
		/* cudaLaunchConfig_t and CUlaunchConfig both begin with grid x,y,z, block x,y,z. */
		uint32_t dims[6];
		if (read(ctx, a[1], dims, sizeof dims) == 0) {
			memcpy(grid, dims, 3 * sizeof dims[0]);
			memcpy(block, dims + 3, 3 * sizeof dims[0]);
		}
		break;
	}
	}
}

void decode_ring_launch(const struct api_spec *s, const uint64_t *w, uint64_t *handle, uint32_t g[3],
			uint32_t b[3])
{
	memset(g, 0, 3 * sizeof g[0]);
	memset(b, 0, 3 * sizeof b[0]);
	if (s->launch == LAUNCH_DRV_EX || s->launch == LAUNCH_RT_EXC) {
		/* cudaLaunchConfig_t and CUlaunchConfig: the stub copied their first 24 bytes. */
		*handle = w[2];
		if (w[1]) {	/* the config's first 24 bytes: grid x,y,z, block x,y,z */
			uint32_t d[6];
			memcpy(d, &w[3], sizeof d);
			memcpy(g, d, 3 * sizeof d[0]);
			memcpy(b, d + 3, 3 * sizeof d[0]);
		}
		return;
	}
	*handle = w[1];
	if (s->launch == LAUNCH_RT) {	/* the registers, as decode_args reads them */
		arch_rt_launch_dims(w, g, b);
		return;
	}
	for (int i = 0; i < 3; i++) {
		g[i] = (uint32_t)w[2 + i];
		b[i] = (uint32_t)w[5 + i];
	}
}
