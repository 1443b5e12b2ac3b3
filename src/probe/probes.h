/* probes.h — which functions of which modules get breakpoints: every CUDA API function of the
 * table found in any module (libcudart.so, libcuda.so, an executable with static cudart), the
 * dynamic linker's hook (to see libraries loaded later), and the launch-layer policy that keeps
 * a launch to one stop. */
#ifndef GPUTOP_PROBES_H
#define GPUTOP_PROBES_H

#include <stdbool.h>
#include <stdint.h>

struct api_spec;

struct thread;
struct tracee;
struct api_spec;
struct probes_state;

/* A process's part (p->probes, base/tracee.h): its CUDA modules and the launch policy's state;
 * made and freed with it. Every function below acts for the process p it is given. */
struct probes_state *probes_state_new(void);
void probes_state_free(struct probes_state *st);

/* Looks at the program's modules again, probing the new ones; t is a stopped thread (used to
 * map trampoline areas). 0 or -errno. */
int probes_refresh(struct tracee *p, struct thread *t);
/* Before the program is stopped (an attach, a followed process found to load CUDA): the
 * symbols of its modules walked now (module_scan.h), while it runs, so that the stop only
 * plants what they say. */
void probes_prepare(const struct tracee *p);
/* At an attach, a function whose jump cannot go in because a stopped thread stands inside its
 * first bytes waits (instead of an int3 for good: a stop per call, and a SIGTRAP for the
 * program if gputop is killed at the wrong instant); the engine lets the world run a moment,
 * stops it and tries again (probes_retry_inside; last: those still refused take an int3). */
void probes_defer_inside(struct tracee *p, bool on);
int probes_inside_left(const struct tracee *p);
void probes_retry_inside(struct tracee *p, struct thread *t, bool last);
void probes_reset(struct tracee *p);		/* after exec */

bool probes_cuda_seen(const struct tracee *p);	/* some CUDA API function is probed */
/* Whether a call of row s (NULL: a CUDA row) returning to addr comes from a library whose calls
 * can be part of another traced call: a module with CUDA functions for CUDA rows (NCCL's, which
 * links cudart statically, is one), one with NCCL functions for NCCL's. */
bool probes_in_scope(const struct tracee *p, const struct api_spec *s, uint64_t addr);

/* libcuda's cuFuncGetName and cuKernelGetName (0 if not loaded): the driver names a
 * CUfunction/CUkernel whose creation we did not see (made before we attached). */
/* The driver functions that tell a graph's nodes (graph_query.h's enum), 0 where not found. */
const uint64_t *probes_graph_fns(const struct tracee *p);
uint64_t probes_func_get_name(const struct tracee *p);
uint64_t probes_kernel_get_name(const struct tracee *p);
uint64_t probes_rtld_state_addr(const struct tracee *p);	/* &_r_debug.r_state, 0 if unknown */

/* Launches are counted at one layer: the driver's when libcuda is probed (one stop per
 * launch, whatever the caller), else the runtime's. GPUTOP_LAUNCH_LAYER=runtime|driver|both
 * overrides it, for experiments. */
void probes_apply_launch_policy(struct tracee *p);

/* --stacks: calls of the API table's row spec stop at their entry, so that their stack is taken there
 * (a call the stubs record without a stop has none). */
bool probes_stops_for_stack(const struct api_spec *spec);

/* --max-overhead: arm or disarm every launch probe of the counting layer. */
void probes_set_launches_armed(struct tracee *p, bool armed);

#endif
