/* retfast.h — returns without a stop. A traced call's return address is swapped for the
 * return stub (arch/<arch>_ret.S) rather than a trapping breakpoint: the stub, in the program,
 * records the return value, a time stamp and the out-parameters in gputop's record table (a
 * read-write mapping in the program, gputop's own) and returns to the caller. The tracer reads
 * the record at its next stop or tick. An allocation, copy or synchronize call then costs one
 * stop instead of two. Used where the time stamp counter is reliable; otherwise every return
 * traps as before. */
#ifndef GPUTOP_RETFAST_H
#define GPUTOP_RETFAST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cuda_api.h"
#include "stub_layout.h"

struct thread;
struct tracee;
struct retfast_state;

/* A process's part (p->retfast, base/tracee.h): its record table and which records are taken;
 * made and freed with it. The functions below that take a process act on its table; the clock
 * conversions are gputop's own. */
struct retfast_state *retfast_state_new(void);
void retfast_state_free(struct retfast_state *st);


/* What the stub left in a record. */
struct ret_record {
	uint64_t key;		/* sp after the return; 0 = free */
	uint64_t ret;		/* the real return address */
	uint64_t out, out2;	/* out-parameters to read at a successful return, 0 = none */
	uint64_t retval;
	uint64_t tsc;		/* time stamp counter at the return */
	uint64_t out_value, out2_value;
	uint64_t state;		/* RET_IN_FLIGHT, then RET_DONE */
	uint64_t entry_tsc;	/* time stamp counter at the call's entry */
	uint64_t next;		/* where the entry stamp goes on: the breakpoint's slot */
};
#define RET_IN_FLIGHT 1
#define RET_DONE 2

/* Maps the table and installs the stub through the stopped thread t (after xol_init). Does
 * nothing, and retfast_ready(p) stays false, where the time stamp counter cannot be trusted
 * or GPUTOP_RETFAST=0. 0 or -errno. */
int retfast_init(struct tracee *p, struct thread *t);
bool retfast_ready(const struct tracee *p);
/* Whether the return of a call of row s, probed by an int3 at its entry, is recorded by the
 * return stub (one stop a call) rather than trapped at the trampoline (a second stop): not for
 * a name string read at the return while the caller's buffer surely lives, nor for rows whose
 * return must stop (API_STOPS). hit.c swaps the return by it; probes.c counts the stops. */
static inline bool retfast_records_return(const struct tracee *p, const struct api_spec *s)
{
	return retfast_ready(p) && s->name_src != NAME_FROM_STRING && !(s->flags & API_STOPS);
}
bool retfast_used(const struct tracee *p);		/* it was ready at some time in this session */
void retfast_forget(struct tracee *p);		/* exec: the mappings went with the old image */
int retfast_unmap(struct tracee *p, struct thread *t);	/* detach */

uint64_t retfast_stub(const struct tracee *p);		/* the address swapped in for a return address */
uint64_t retfast_entry_stamp(const struct tracee *p);	/* where a recorded call resumes at its entry */
uint64_t retfast_record_addr(const struct tracee *p, int rec);	/* for the scratch register at that resume */
bool retfast_in_stub(const struct tracee *p, uint64_t pc);
uint64_t retfast_fallback_trap(const struct tracee *p);	/* the stub's int3, for a return with no record */

/* Takes a free record for a call of thread tid that returns with sp == key and writes it,
 * and the stub's address into the return slot, in one system call; next is where the entry
 * stamp goes on. Returns the record's index, or -1 (no free record, or the write failed: the
 * caller takes the trapping way). */
int retfast_begin(struct tracee *p, pid_t tid, uint64_t key, uint64_t ret, uint64_t out, uint64_t out2,
		  uint64_t slot, uint64_t next);
/* Reads the records idx[0..n) of threads of pid (at most 64) into out. 0 or -errno. */
int retfast_read(const struct tracee *p, pid_t pid, const int32_t *idx, int n, struct ret_record *out);
/* Frees records: their keys are cleared in the program (so the stub never finds them) by the
 * next retfast_begin, in its own write, or by retfast_flush (the tick, detach). */
void retfast_free(struct tracee *p, pid_t pid, const int32_t *idx, int n);
void retfast_flush(struct tracee *p, pid_t pid);

/* Time stamp counter ticks as ns, and back (0 while the rate is not known). */
uint64_t retfast_ticks_to_ns(uint64_t ticks);
/* A time stamp counter reading as monotonic ns (clock.h), for the timeline. */
uint64_t retfast_tsc_to_mono(uint64_t tsc);
uint64_t retfast_ns_to_ticks(const struct tracee *p, uint64_t ns);

#endif
