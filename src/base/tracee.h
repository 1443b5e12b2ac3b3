/* tracee.h — one traced process: everything gputop keeps about it, in one structure reached
 * from the session. Each layer's module keeps its part behind a pointer only it knows
 * (engine/tracee_ctl.c makes and frees them). Every function that works on a process is handed
 * it (struct tracee *p), as strace hands its struct tcb *: there is no current process. */
#ifndef GPUTOP_TRACEE_H
#define GPUTOP_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Each module's part of a process, defined in the module's .c file and made and freed with the
 * process (X_state_new, X_state_free in the module's header) by engine/tracee_ctl.c. */
struct threads_state;
struct memory_state;
struct symbols_state;
struct xol_state;
struct breakpoints_state;
struct launchring_state;
struct retfast_state;
struct probes_state;
struct kernels_state;
struct hit_state;
struct pystack_state;
struct stack_capture_state;
struct nccl_counter_find;
struct gputime_state;
struct torch_state;
struct tallies_state;

/* Which threads stop at their exit (engine/exit_watch.c). */
enum exit_stops { EXIT_STOPS_NONE, EXIT_STOPS_LEADER, EXIT_STOPS_ALL };

struct tracee {
	pid_t pid;			/* the thread group */
	pid_t ppid;			/* its parent when it was first seen */
	bool launched;			/* started by gputop (the first process of a launch) */
	bool followed;			/* a descendant gputop followed (fork, vfork, exec) */
	bool set_up;			/* its image is probed; a followed process is only watched
					 * (its fork, exec and exit stops) until CUDA appears in it */
	bool exec_checked;		/* a followed process's executable was looked at */
	bool rtld_adding;		/* the dynamic linker's last stop said a library comes */
	bool probe_at_first_stop;	/* a fork of a process with CUDA: probed before it runs */
	uint8_t late_tries;		/* world stops to probe it that a thread outlasted */
	uint64_t late_retry_ns;		/* not tried again before this (monotonic) */
	uint8_t exit_stops;		/* enum exit_stops: which threads stop at their exit */
	uint64_t seen_ns;		/* when gputop took it */
	uint64_t drain_round;		/* the tracer's last drain round that drained it */
	int rescue_slot;		/* probe/rescue.c's table for it; -1: none */
	int stats_id;			/* figures/stats.c's figures of it */

	/* The engine's. */
	bool stopping_world;		/* detaching: threads that stop are kept stopped */
	uint64_t stops;			/* every stop at a breakpoint of ours */
	uint64_t exited_threads_cpu;	/* CPU time of threads gone, so the sum never goes back */
	bool exited;			/* the process ended: exit_status, term_signal */
	int exit_status;		/* exit code, or 128 + signal */
	int term_signal;
	bool no_cuda_timeout;		/* the timeout came before any CUDA library */
	uint64_t maps_hash;		/* --no-int3: its executable mappings, as engine/libwatch.c
					 * last saw them */
	uint8_t parks;			/* may the stubs park (engine/seccomp_watch.c, its enum) */
	uint64_t parks_ring;		/* the ring that verdict is of */
	uint64_t seccomp_swept_ns;	/* the last look at its threads' seccomp filters */
	uint64_t seccomp_removed;	/* threads_removed() at that look */
	uint32_t seccomp_sweeps;	/* sweeps made (engine/seccomp_watch.c) */
	pid_t dead_tid;			/* engine/reap.c: the thread last found dead in an */
	int dead_ticks;			/* interrupted wait, and for how many ticks */

	/* The other modules' parts: only the module named looks inside its own. */
	struct threads_state *threads;		/* base/threads.c: the thread table */
	struct memory_state *memory;		/* base/memory.c: /proc/PID/mem */
	struct symbols_state *symbols;		/* base/symbols.c: libdw's view, the modules */
	struct xol_state *xol;			/* probe/xol.c: trampoline areas, slots */
	struct breakpoints_state *breakpoints;	/* probe/breakpoints.c: the breakpoint table */
	struct launchring_state *launchring;	/* probe/launchring.c: the ring, its probes */
	struct tallies_state *tallies;		/* probe/tallies.c: what was read of the stubs' tallies */
	struct retfast_state *retfast;		/* probe/retfast.c: the record table */
	struct probes_state *probes;		/* probe/probes.c: CUDA modules, launch policy */
	struct kernels_state *kernels;		/* probe/kernels.c: value -> kernel map */
	struct hit_state *hit;			/* engine/hit.c: stop cost, records in flight */
	struct pystack_state *pystack;		/* base/pystack.c: the interpreter found in it */
	struct gputime_state *gputime;		/* engine/gputime.c: --gpu-time's library */
	struct nccl_counter_find *nccl_counter;	/* engine/nccl_counter.c (--dump): NCCL's count
						 * looked for; one allocation, NULL until a collective */
	struct stack_capture_state *stack_capture;	/* engine/stack_capture.c: image id,
							 * launch sampling */
	struct torch_state *torch;		/* probe/torch_alloc.c: PyTorch's allocator */
};

#endif
