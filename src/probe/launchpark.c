/* launchpark.c — the park slots of the launch ring (launchpark.h). */
#include "launchpark.h"

#include <errno.h>
#include <stddef.h>

#include "launchring.h"
#include "memory.h"
#include "stub_layout.h"
#include "xol.h"

/* A slot, as arch_park writes it. Only the parked thread writes the state; gputop writes the
 * answer, naming the park by its number, so that an answer that comes late (the thread gave
 * up meanwhile) cannot be taken by a later park of the slot. */
struct park_slot {
	uint64_t state;		/* PARK_* */
	uint64_t tid;		/* gettid() in the program: its own PID namespace's */
	uint64_t sp;		/* the registers it saved */
	uint64_t number;	/* the slot's parks so far: this one's number */
	uint64_t answer;	/* gputop's: number * 2, + 1 for "go on" */
};
_Static_assert(sizeof(struct park_slot) == LR_PARK_SIZE, "arch_park's slot");

/* As x86_64_launch.S names them. */
enum { PARK_FREE, PARK_WAITING, PARK_CLAIMED = 4 };

static int read_slots(const struct tracee *p, struct park_slot s[LR_PARK_SLOTS])
{
	uint64_t ring = launchring_base(p);
	if (!ring)
		return -ENOENT;
	return launchring_io(p, ring + LR_OFF_PARK, s, LR_PARK_SLOTS * sizeof *s, false);
}

/* Parked, and not answered yet (an answered thread may sleep up to a wait before it sees it). */
static bool waiting(const struct park_slot *s)
{
	return s->state == PARK_WAITING && s->tid && s->answer >> 1 != s->number;
}

int launchpark_waiting(struct tracee *p, struct lr_parked out[])
{
	struct park_slot s[LR_PARK_SLOTS];
	int n = 0;
	if (read_slots(p, s) < 0)
		return 0;
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (waiting(&s[i]))
			out[n++] = (struct lr_parked){ .slot = i, .own_tid = (pid_t)s[i].tid, .sp = s[i].sp,
						       .number = s[i].number };
	return n;
}

bool launchpark_still(struct tracee *p, const struct lr_parked *k)
{
	struct park_slot s;
	uint64_t ring = launchring_base(p);
	return ring && k->slot >= 0 && k->slot < LR_PARK_SLOTS &&
	       launchring_io(p, ring + LR_OFF_PARK + (uint64_t)k->slot * LR_PARK_SIZE, &s, sizeof s, false) == 0 &&
	       waiting(&s) && s.tid == (uint64_t)k->own_tid && s.sp == k->sp && s.number == k->number;
}

int launchpark_find(struct tracee *p, pid_t own_tid, struct lr_parked *k)
{
	struct park_slot s[LR_PARK_SLOTS];
	if (read_slots(p, s) < 0)
		return -1;
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (waiting(&s[i]) && s[i].tid == (uint64_t)own_tid) {
			*k = (struct lr_parked){ .slot = i, .own_tid = own_tid, .sp = s[i].sp, .number = s[i].number };
			return i;
		}
	return -1;
}

int launchpark_answer(struct tracee *p, const struct lr_parked *k, bool served)
{
	uint64_t ring = launchring_base(p), answer = k->number << 1 | !served;
	if (!ring || k->slot < 0 || k->slot >= LR_PARK_SLOTS)
		return -EINVAL;
	return launchring_io(p, ring + LR_OFF_PARK + (uint64_t)k->slot * LR_PARK_SIZE + offsetof(struct park_slot, answer),
			     &answer, sizeof answer, true);
}

bool launchpark_in(const struct tracee *p, uint64_t pc)
{
	uint64_t off;
	if (!launchring_base(p) || !xol_in_shared_code(p, pc, &off))
		return false;
	return off >= (uint64_t)(arch_park - arch_launch_stub) && off < (uint64_t)(arch_park_end - arch_launch_stub);
}

bool launchpark_at_syscall(const struct tracee *p, uint64_t pc)
{
	uint64_t off;
	return launchring_base(p) && xol_in_shared_code(p, pc, &off) &&
	       off == (uint64_t)(arch_park_syscall - arch_launch_stub) + ARCH_SYSCALL_LEN;
}

int launchpark_regs(pid_t tid, uint64_t sp, arch_regs_t *at)
{
	uint64_t saved[ARCH_PARK_SAVED];
	int err = mem_read(tid, sp, saved, sizeof saved);
	if (err < 0)
		return err;
	arch_park_regs(saved, sp, at);
	return 0;
}
