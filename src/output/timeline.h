/* timeline.h — --timeline FILE: what the program did with CUDA over time, as Chrome trace
 * event JSON (ui.perfetto.dev, chrome://tracing, speedscope): one track per process and
 * thread, each traced call a complete event ("X") with its arguments, each launch an instant
 * event ("i"), live allocated bytes per device a counter ("C"). Written as it goes from the
 * figures gputop already has (entry and return stamps), bounded in size, and a valid JSON
 * document after every write, so that any end of the session leaves one. Formats and writes;
 * knows nothing of how calls were caught: it consumes their events (timeline_calls.c). */
#ifndef GPUTOP_TIMELINE_H
#define GPUTOP_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cuda_call.h"

/* Starts the timeline on a copy of fd (the caller keeps fd), at most max_bytes long; pid is
 * the first traced process, named after its command (others are named when they show up).
 * 0 or -errno. */
int timeline_open(int fd, uint64_t max_bytes, pid_t pid);
/* Writes what is pending; the file stays valid. 0, or the first failed write's -errno: after
 * it nothing more was written. */
int timeline_close(void);
bool timeline_on(void);

/* What a call's event says besides its name and time; zero fields are left out. */
struct timeline_args {
	uint64_t bytes;
	uint64_t ptr;			/* an allocation's address */
	const char *copy_kind;		/* "H2D" ... */
	const char *kernel;
	const uint32_t *grid, *block;
	int device;			/* -1: not known */
	int error;
	const char *error_name;
};

/* Times are monotonic ns (clock.h). tid 0: a launch the ring recorded without its thread. */
void timeline_call(pid_t pid, pid_t tid, const char *api, uint64_t start_ns, uint64_t dur_ns,
		   const struct timeline_args *a);
void timeline_launch(pid_t pid, pid_t tid, const char *kernel, uint64_t at_ns, const uint32_t grid[3],
		     const uint32_t block[3]);
/* An allocation (bytes > 0) or a free (bytes 0) at ptr on device: the live bytes counter of
 * the device moves. */
void timeline_alloc(pid_t pid, uint64_t ptr, uint64_t bytes, int device, uint64_t at_ns);
void timeline_free(pid_t pid, uint64_t ptr, uint64_t at_ns);

/* The calls' events, as the consumer of calls (cuda/cuda_call.h) timeline_calls.c writes them. */
extern const struct cuda_consumer timeline_consumer;

#endif
