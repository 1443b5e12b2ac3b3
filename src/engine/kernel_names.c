/* kernel_names.c — a launched function handle's kernel id, named by asking the driver in the
 * stopped thread where nothing else named it, and the names the program's calls give
 * (kernel_names.h). */
#include "kernel_names.h"

#include "config.h"
#include "cuda_api.h"
#include "cuda_call.h"
#include "kernels.h"
#include "launchring.h"
#include "memory.h"
#include "probes.h"
#include "threads.h"
#include "tracee.h"
#include "xol.h"

/* A CUfunction or CUkernel first seen at a launch (or in a graph's kernel node), made before we
 * attached: ask the driver for its name, calling cuFuncGetName (or cuKernelGetName) in the
 * stopped thread. It stands at the entry of a driver launch call (or the return of a graph
 * call), holding no driver lock, so the call is as safe as any the program makes there. Asked
 * until named (a launch that parks is then let through the filter). Whether the driver answered:
 * a name, or an error from each function it has (not a call that could not be made). */
static bool ask_driver_name(struct tracee *p, struct thread *t, uint64_t f)
{
	const uint64_t fns[2] = { probes_func_get_name(p), probes_kernel_get_name(p) };
	bool answered = true;
	for (int i = 0; i < 2; i++) {
		uint64_t args[6] = { XOL_SCRATCH, f, 0, 0, 0, 0 }, ret = 1, scratch, name_at = 0;
		char name[1024];
		if (!fns[i])
			continue;
		if (xol_call(p, t, fns[i], args, &ret, &scratch) < 0) {
			answered = false;
			continue;
		}
		if ((uint32_t)ret != 0)
			continue;
		if (mem_read(t->tid, scratch, &name_at, sizeof name_at) == 0 && name_at &&
		    mem_read_string(t->tid, name_at, name, sizeof name) == 0) {
			kernels_learn_name(p, f, name);
			return true;
		}
		answered = false;
	}
	return answered;
}

int kernel_names_id(struct tracee *p, struct thread *t, uint64_t f)
{
	/* Not only a value never seen: one counted unnamed (its first launch's park given up on a
	 * loaded machine, its record drained) is asked at its next park, and one named by a
	 * host-side lambda placeholder (kernels.h: doubtful) at its first: the driver's name is
	 * the device's, CUPTI's. Once the driver answered, the name it has stays. */
	if (f && !kernels_named(p, f) && ask_driver_name(p, t, f))
		kernels_asked(p, f);
	return kernels_id_of(p, t->tid, f);
}

void kernel_names_learn(struct tracee *p, struct thread *t, const struct cuda_call *c)
{
	uint64_t value = c->name.value;
	char name[1024];
	switch (c->name.src) {
	case NAME_REGISTER:	/* __cudaRegisterFunction: its name string lives as long as the module */
		if (mem_read_string(t->tid, c->name.from, name, sizeof name) == 0)
			kernels_learn_name(p, value, name);
		break;
	case NAME_FROM_STUB:
		if (value)
			kernels_learn_from_stub(p, value, c->name.from);
		break;
	case NAME_FROM_STRING:
		if (!value)
			break;
		/* Recorded by the call stub and read after the return, the caller's buffer may
		 * hold another name by now (a loop over names in one array): the handle is named
		 * at its first launch instead, asking the driver (kernel_names_id) at the park of a
		 * handle not seen yet. One named already is asked again at its next launch: the
		 * driver may have reused it for another kernel after a module's unload. */
		if (c->source == CALL_RECORDED) {
			if (kernels_recheck(p, value))
				launchring_unsee(p, value);
			break;
		}
		if (mem_read_string(t->tid, c->name.from, name, sizeof name) < 0)
			break;
		kernels_learn_name(p, value, name);	/* its launches so far: hit.c read them first */	/* the ring was drained first (trap.c) */
		/* Named: its first launch needs no park, unless its launch site is wanted,
		 * --gpu-time waits for a thread held at a launch to load its library, or the name
		 * is doubtful (kernels.h: the driver is asked at that park). */
		if (c->spec->layer == LAYER_DRIVER && !(config.stacks & CONFIG_STACKS_LAUNCHES) && !config.gpu_time &&
		    kernels_named(p, value))
			launchring_seen(p, value);
		break;
	case NAME_FROM_HANDLE:
		if (value)
			kernels_learn_alias(p, value, c->name.from);
		break;
	}
}
