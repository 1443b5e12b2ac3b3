/* launchpark.c — the park slots of the launch ring (launchpark.h). */
#include "launchpark.h"

#include <errno.h>

#include "launchring.h"
#include "memory.h"
#include "stub_layout.h"
#include "xol.h"

/* A slot, as arch_park writes it. */
struct park_slot {
	uint64_t state;		/* PARK_* */
	uint64_t tid;		/* gettid() in the program: its own PID namespace's */
	uint64_t sp;		/* the registers it saved */
	uint64_t waits;
};
_Static_assert(sizeof(struct park_slot) == LR_PARK_SIZE, "arch_park's slot");

/* As x86_64_launch.S names them. */
enum { PARK_FREE, PARK_WAITING, PARK_SERVED, PARK_GO_ON, PARK_CLAIMED };

static int read_slots(const struct tracee *p, struct park_slot s[LR_PARK_SLOTS])
{
	uint64_t ring = launchring_base(p);
	if (!ring)
		return -ENOENT;
	return launchring_io(p, ring + LR_OFF_PARK, s, LR_PARK_SLOTS * sizeof *s, false);
}

int launchpark_waiting(struct tracee *p, struct lr_parked out[])
{
	struct park_slot s[LR_PARK_SLOTS];
	int n = 0;
	if (read_slots(p, s) < 0)
		return 0;
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (s[i].state == PARK_WAITING && s[i].tid)
			out[n++] = (struct lr_parked){ .slot = i, .own_tid = (pid_t)s[i].tid };
	return n;
}

int launchpark_slot_of(struct tracee *p, pid_t own_tid, uint64_t *sp)
{
	struct park_slot s[LR_PARK_SLOTS];
	if (read_slots(p, s) < 0)
		return -1;
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (s[i].state == PARK_WAITING && s[i].tid == (uint64_t)own_tid) {
			*sp = s[i].sp;
			return i;
		}
	return -1;
}

int launchpark_answer(struct tracee *p, int slot, bool served)
{
	uint64_t ring = launchring_base(p), state = served ? PARK_SERVED : PARK_GO_ON;
	if (!ring || slot < 0 || slot >= LR_PARK_SLOTS)
		return -EINVAL;
	return launchring_io(p, ring + LR_OFF_PARK + (uint64_t)slot * LR_PARK_SIZE, &state, sizeof state, true);
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

int launchpark_regs(pid_t tid, const arch_regs_t *now, uint64_t sp, arch_regs_t *at)
{
	uint64_t saved[ARCH_PARK_SAVED];
	int err = mem_read(tid, sp, saved, sizeof saved);
	if (err < 0)
		return err;
	arch_park_regs(now, saved, sp, at);
	return 0;
}
