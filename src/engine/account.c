/* account.c — the one place a CUDA call is delivered (account.h): what the engine learns from
 * it first, then whether a consumer's capture holds it, then every consumer registered, in the
 * order registered, then the thread's current device. The engine names no consumer: the
 * session registers them. No ptrace, no memory of the program: the event says everything. */
#include "account.h"
#include "hit_internal.h"

#include "kernel_names.h"
#include "log.h"
#include "tallies.h"

static struct {
	const struct cuda_consumer *consumers[ACCOUNT_MAX_CONSUMERS];
	int n_consumers;
} account;

void account_add(const struct cuda_consumer *c)
{
	if (account.n_consumers == ACCOUNT_MAX_CONSUMERS) {
		log_error("no room for the consumer of calls '%s'", c->name);
		return;
	}
	account.consumers[account.n_consumers++] = c;
}

void account_clear(void)
{
	account.n_consumers = 0;
}

static bool held(struct tracee *p, const struct cuda_call *c)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->hold && account.consumers[i]->hold(p, c))
			return true;
	return false;
}

static void retract(struct tracee *p, const struct cuda_call *c)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->retract)
			account.consumers[i]->retract(p, c);
}

void account_call(struct tracee *p, struct thread *t, struct cuda_call *c)
{
	/* What the engine learns from every call whose return it reads, part of another or not. */
	if (cuda_call_ok(c) && c->op == OP_KERNEL_NAME)
		kernel_names_learn(p, t, c);
	else if (cuda_call_ok(c) && c->op == OP_CTX_LEARN)
		hit_devices_learn(p, c);
	if (!c->counted) {
		/* Part of another traced call after all: what a stub tallied of it comes back out
		 * (a registration's tallies count nothing). */
		if (c->tallied && c->op != OP_KERNEL_NAME)
			retract(p, c);
		return;
	}
	c->held = cuda_call_ok(c) && held(p, c);
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->call)
			account.consumers[i]->call(p, c);
	if (c->held && c->tallied)
		retract(p, c);	/* a graph's node: its work comes back out of the tallies */
	if (t && cuda_call_ok(c))
		hit_devices_follow(p, t, c);
	if (!c->tallied && c->op == OP_FREE && cuda_call_ok(c))
		tallies_drop_alloc(p, c->free_.ptr);	/* freed where no stub saw it */
}

void account_tally(struct tracee *p, const struct cuda_tally *tally)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->tallied)
			account.consumers[i]->tallied(p, tally);
}

bool account_wants_launch_records(void)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->launch_records)
			return true;
	return false;
}

void account_launched(struct tracee *p, const struct api_spec *s, uint64_t handle, int kernel, uint64_t n,
		      const struct cuda_quiet *q)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->launched)
			account.consumers[i]->launched(p, s, handle, kernel, n, q);
}

void account_lost(struct tracee *p, int api, uint64_t n)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->lost)
			account.consumers[i]->lost(p, api, n);
}

void account_drained(struct tracee *p, bool tallied)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->drained)
			account.consumers[i]->drained(p, tallied);
}

void account_gone(struct tracee *p)
{
	for (int i = 0; i < account.n_consumers; i++)
		if (account.consumers[i]->gone)
			account.consumers[i]->gone(p);
}
