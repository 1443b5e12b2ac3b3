/* hit_drain.c — one drain of a process's stubs (hit_drain.h): the records, then the tallies,
 * then the consumers' .drained. Memory reads only; nothing here stops a thread. */
#include "hit_drain.h"
#include "account.h"
#include "hit.h"
#include "hit_tallies.h"
#include "hit_internal.h"

void hit_drain(struct tracee *p, uint64_t now, enum hit_drain_how how)
{
	hit_quiet_launches(p);
	hit_collect_returns(p, now);
	hit_drain_launches(p);
	if (how == HIT_DRAIN_RECORDS)
		return;
	static const enum hit_tally_read read[] = {
		[HIT_DRAIN_TICK] = HIT_TALLY_TICK, [HIT_DRAIN_WHOLE] = HIT_TALLY_WHOLE, [HIT_DRAIN_LAST] = HIT_TALLY_LAST,
	};
	account_drained(p, hit_read_tallies(p, read[how]));
}
