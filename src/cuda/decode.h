/* decode.h — what a probed call's registers and memory say, by its API table row: its
 * arguments (registers, then the stack), a copy's direction, a launch's dimensions, what a
 * launch ring record holds, and from them the call's event (cuda_call.h) for every source: the
 * arguments at an int3 or in the call stub's record, the return's registers or record, a ring
 * record. Pure: memory comes through a reader the caller gives, so it is unit-tested with fake
 * registers and a fake stack (tests/unit/test_decode.c). */
#ifndef GPUTOP_DECODE_H
#define GPUTOP_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "arch.h"
#include "cuda_api.h"
#include "cuda_call.h"

#define DECODE_MAX_ARGS 12

/* Reads n bytes at addr of the traced program into buf: 0 or -errno. */
typedef int (*decode_read_fn)(void *ctx, uint64_t addr, void *buf, size_t n);
/* Whether addr is device memory, as far as the allocations seen tell (ctx: the reader's, the
 * process's). */
typedef bool (*decode_is_device_fn)(void *ctx, uint64_t addr);

/* Arguments 1..the highest the row reads into a[] (a[0] unused) and, if ret is given, the
 * return address, with at most one memory read (the stack words from the return address up).
 * At a function's entry. 0 or the reader's error. */
int decode_args(const struct api_spec *s, const arch_regs_t *r, decode_read_fn read, void *ctx,
		uint64_t a[DECODE_MAX_ARGS + 1], uint64_t *ret);

/* A copy's direction: fixed by the function, the kind argument, or the pointers (is_device
 * asked with ctx). */
enum copy_dir decode_copy_dir(const struct api_spec *s, const uint64_t *a, decode_is_device_fn is_device,
			      void *ctx);

/* An NCCL call's bytes: its count argument times its datatype's size (0 for a type NCCL 2.x
 * does not have). The count the call is given: per rank for AllGather (sendcount), of the
 * result for ReduceScatter (recvcount), per peer for AlltoAll. */
uint64_t decode_nccl_bytes(const struct api_spec *s, const uint64_t *a);

/* A launch's grid and block (zeros where they cannot be read), from its arguments a[] (and
 * memory, for a config passed by pointer). */
void decode_launch_dims(const struct api_spec *s, const uint64_t *a,
			decode_read_fn read, void *ctx, uint32_t grid[3], uint32_t block[3]);

/* A launch ring record (stub_layout.h: probe + 1, six register arguments, first stack
 * argument) of the row s: the launched function and its dimensions. */
void decode_ring_launch(const struct api_spec *s, const uint64_t *w, uint64_t *handle, uint32_t grid[3],
			uint32_t block[3]);

/* The event of a call of row api from its arguments a[1..] (decode_args at an int3, or the six
 * words of the call stub's record): the row, and every field its arguments tell. The caller fills
 * who made it (pid, tid, devices), whether it counts, its return address and stack, and what
 * only the process knows (a launch's kernel id, a copy's devices); a launch's config passed by
 * pointer is read through read; read and is_device are given ctx. */
void decode_call(int api, const uint64_t *a, decode_read_fn read, void *ctx, decode_is_device_fn is_device,
		 struct cuda_call *c);

/* What a return says, as a trap's registers or a stub's record hold it. */
struct call_return {
	uint64_t retval;	/* the return register */
	uint64_t ns;		/* the call's time */
	uint64_t end_ns;	/* when it returned (monotonic); 0: not stamped (now) */
	uint64_t start_ns;	/* when it was called, on end_ns's clock; 0: not stamped */
	bool outs_read;		/* out and out2 are what the out-parameters pointed to at the
				 * return (a stub read them); else they are read now, through read */
	uint64_t out, out2;
};

/* The call c came back at now (monotonic): its result (0 for a row whose return is a value),
 * times and, where it succeeded, its out-parameters. */
void decode_call_return(struct cuda_call *c, const struct call_return *r, uint64_t now, decode_read_fn read,
			void *ctx);

/* Where the out-parameters the return stub is to read are (cuda_api_out_pointer): *out the
 * allocation, handle or context made, *out2 the pitch; 0 where none. */
void decode_call_outs(const struct cuda_call *c, uint64_t *out, uint64_t *out2);

/* The event of a launch ring record w of row api (a kernel or graph launch): no thread, no
 * return. */
void decode_ring_call(int api, const uint64_t *w, struct cuda_call *c);

#endif
