/* tally_spec.c — a row's spec for the stubs' tallies, and what its classes mean (tally_spec.h). */
#include "tally_spec.h"

#include <string.h>

/* An argument position the call stub records (a register argument), else 0. */
static uint8_t reg(int pos)
{
	return pos >= 1 && pos <= 6 ? (uint8_t)pos : 0;
}

void cuda_tally_spec(const struct api_spec *s, struct tally_spec *out)
{
	memset(out, 0, sizeof *out);
	if (!(s->flags & API_RETURN) || (s->flags & API_VALUE_RET))
		out->flags |= TALLY_VOID;	/* no error code to count */
	switch (s->op) {
	case OP_ALLOC:
		if (!reg(s->arg_out))
			break;	/* the stub cannot read where the address went */
		out->effect = TALLY_INSERT;
		out->key = TALLY_OUT;
		if (s->flags & API_PITCH) {
			out->value = TALLY_OUT2;	/* the pitch, times the height */
			out->times = reg(s->arg_height);
		} else {
			out->value = reg(s->arg_size);
		}
		break;
	case OP_FREE:
		out->effect = TALLY_REMOVE;
		out->key = reg(s->arg_ptr);
		break;
	case OP_LAUNCH:
		out->flags |= TALLY_DIMS;	/* a kernel's: quiet while no one wants its record */
		/* fall through */
	case OP_GRAPH_LAUNCH:
		out->effect = TALLY_HANDLE;
		out->key = reg(s->arg_ptr);
		break;
	case OP_COPY:
		out->value = reg(s->arg_size);
		if (s->flags & API_2D)
			out->times = reg(s->arg_height);
		out->class_arg = s->fixed_dir || (s->flags & API_PEER) ? 0 : reg(s->arg_kind);
		break;
	case OP_MEMSET:
		out->value = reg(s->arg_size);
		if (s->flags & API_2D)
			out->times = reg(s->arg_height);
		break;
	case OP_KERNEL_NAME:
		if (s->name_src == NAME_REGISTER) {
			out->effect = TALLY_NAME;
			out->key = reg(s->arg_out);	/* the host function */
			out->value = reg(s->arg_name);	/* its kernel's name */
		}
		break;
	case OP_TORCH_ALLOC:	/* the Block it returns, the size asked */
		out->effect = TALLY_BLOCK_IN;
		out->key = TALLY_RETVAL;
		out->value = reg(s->arg_size);
		out->owner = 1;	/* `this`: the device's DeviceCachingAllocator */
		break;
	case OP_TORCH_FREE:
		out->effect = TALLY_BLOCK_OUT;
		out->key = reg(s->arg_ptr);
		break;
	case OP_COLLECTIVE:
		out->value = reg(s->arg_count);
		out->class_arg = reg(s->arg_dtype);
		break;
	}
}

bool cuda_tally_copy_dir(const struct api_spec *s, unsigned cls, enum copy_dir *dir)
{
	if (s->op != OP_COPY)
		return false;
	if (s->fixed_dir) {
		*dir = (enum copy_dir)(s->fixed_dir - 1);
		return true;
	}
	if (s->flags & API_PEER) {
		*dir = DIR_D2D;
		return true;
	}
	if (reg(s->arg_kind) && cls < DIR_COUNT) {
		*dir = (enum copy_dir)cls;	/* cudaMemcpyKind: H2H H2D D2H D2D */
		return true;
	}
	return false;
}

uint64_t cuda_tally_bytes(const struct api_spec *s, uint64_t sum)
{
	return s->op == OP_MEMSET && s->elem_size ? sum * s->elem_size : sum;
}

bool cuda_tally_copy_in_place(const struct cuda_call *c)
{
	const struct api_spec *s = c->spec;
	return c->tallied && c->op == OP_COPY && c->copy.dir_known &&
	       (s->fixed_dir || (s->flags & API_PEER) || reg(s->arg_kind));
}
