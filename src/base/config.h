/* config.h — gputop's own settings that are not on the command line: the GPUTOP_* variables of
 * its environment (experiments, tests, debugging; man/gputop.1 ENVIRONMENT), read once at start
 * into one structure. Every module reads `config`; none reads a GPUTOP_* variable itself. */
#ifndef GPUTOP_CONFIG_H
#define GPUTOP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

enum launch_layer { LAUNCH_LAYER_AUTO, LAUNCH_LAYER_RUNTIME, LAUNCH_LAYER_DRIVER, LAUNCH_LAYER_BOTH };

struct config {
	bool debug;			/* GPUTOP_DEBUG: debug messages on stderr */
	bool launch_ring;		/* GPUTOP_LAUNCH_RING=0 turns the launch ring off */
	uint64_t launch_ring_cap;	/* GPUTOP_LAUNCH_RING_CAP: a smaller ring (tests), 0 = full */
	bool retfast;			/* GPUTOP_RETFAST=0 turns the return stub off */
	bool call_stub;			/* GPUTOP_CALL_STUB=0 turns the call stub off */
	bool launch_records;		/* GPUTOP_LAUNCH_RECORDS=1: every kernel launch recorded, as
					 * before quiet launches (for benchmarks) */
	enum launch_layer launch_layer;	/* GPUTOP_LAUNCH_LAYER=runtime|driver|both */
	bool launch_layer_forced;	/* GPUTOP_LAUNCH_LAYER is set at all */
	long spin_us;			/* GPUTOP_SPIN_US, -1 = by the number of CPUs */
	double duty;			/* GPUTOP_DUTY, -1 = the budget decides */
	const char *cupti_path;		/* GPUTOP_CUPTI=PATH: the libcupti --gpu-time loads; NULL:
					 * the program's own, else the toolkit's */
	const char *nvml_path;		/* GPUTOP_NVML=PATH: this libnvidia-ml.so.1 (tests: the
					 * simulated one); NULL: the dynamic linker's */
	bool nvml_off;			/* GPUTOP_NVML=0: no device meters */
	unsigned nvml_poll_ms;		/* GPUTOP_NVML_POLL_MS: NVML polled this often (500) */
	bool tracing;			/* --trace is on: every call is wanted, in order */
	bool no_int3;			/* --no-int3: no int3 is planted in the program's code */
	bool gpu_time;			/* --gpu-time: its library is loaded at a held thread */
	bool follow;			/* launch mode, and attach mode with --children: the
					 * program's descendants are followed (fork, vfork, exec),
					 * those that load CUDA probed (engine/follow.c) */
	/* Call stacks (set from the command line): frames kept (--stack-depth, 0 = none) and
	 * which calls stop for one (--stacks, CONFIG_STACKS_* bits). */
	int stack_depth;
	unsigned stacks;
	/* Where gputop runs, for --listen's labels (Kubernetes' downward API sets them in the
	 * sidecar: contrib/kubernetes): GPUTOP_POD_NAME, GPUTOP_POD_NAMESPACE, GPUTOP_NODE_NAME;
	 * NULL where not set. */
	const char *pod_name, *pod_namespace, *node_name;
	/* PyTorch's memory written as _snapshot() (--memory-snapshot: at a detach and on the key
	 * S; --oom-snapshot: at an out-of-memory) and the report of an out-of-memory
	 * (--oom-report); NULL: not asked for. */
	const char *memory_snapshot, *oom_snapshot, *oom_report;
	/* GPUTOP_TEST_CRASH=SIG:N (tests only): gputop crashes at its Nth stop. */
	uint64_t crash_at;
	int crash_signal;		/* SIGSEGV or SIGABRT */
	bool crash_in_thread;		/* in another thread of gputop */
};

enum {
	CONFIG_STACKS_ALLOCS = 1,	/* allocation calls */
	CONFIG_STACKS_FREES = 2,	/* free calls: the sites of frees that fail */
	CONFIG_STACKS_SYNCS = 4,	/* synchronize calls */
	CONFIG_STACKS_LAUNCHES = 8,	/* launches, sampled */
};
#define CONFIG_STACK_DEPTH_DEFAULT 32
#define CONFIG_STACK_DEPTH_MAX 256

extern struct config config;

/* Reads the environment into config; called once, before anything else runs. */
void config_load(void);

#endif
