/* timeline.h — --timeline FILE: what the program did with CUDA over time, as Chrome trace
 * event JSON (ui.perfetto.dev, chrome://tracing, speedscope): one track per process and
 * thread, each traced call a complete event ("X") named by its function alone (speedscope
 * makes a frame of a name and its "args": one frame a function), each launch an instant event
 * ("i") with its kernel, grid and block, each failed call an instant with its error, live
 * allocated bytes per device and bytes copied per direction counters ("C"). A thread's calls
 * nest by construction: one that would overlap the thread's previous call (two clocks that
 * disagree: a stop's time and a stub's stamp) is clamped to it and counted, the count in the
 * file (otherData.clamped_calls) and in gputop's last words. Written as it goes from the
 * figures gputop already has (entry and return stamps), bounded in size, and a valid JSON
 * document after every write, so that any end of the session leaves one.
 *
 * --timeline-compact: a run of calls of one function on one thread, one after another (each
 * starting within 50 us of the previous one's end, the run at most 10 ms long) with one result
 * is one complete event from the first's start to the last's end; where it stands for more than
 * one call, or failed, an instant right after it in the file, at its start, says how many
 * ("args": {"call", "calls", "inside_us"}, and "error"); launches are counters of each kernel's
 * launches; a counter is written at most every 50 ms (its latest value, at its time) and at the
 * end. otherData.compact says so. Formats and writes; knows nothing of how calls were caught: it
 * consumes their events (timeline_calls.c). */
#ifndef GPUTOP_TIMELINE_H
#define GPUTOP_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cuda_call.h"

/* Starts the timeline on a copy of fd (the caller keeps fd), at most max_bytes long; pid is
 * the first traced process, named after its command (others are named when they show up);
 * compact: --timeline-compact. 0 or -errno. */
int timeline_open(int fd, uint64_t max_bytes, pid_t pid, bool compact);
/* Writes what is pending (the runs and counters compact mode holds too); the file stays
 * valid. 0, or the first failed write's -errno: after it nothing more was written. */
int timeline_close(void);
bool timeline_on(void);

/* Calls whose times were clamped so far (timeline_call). */
uint64_t timeline_clamped(void);

/* Times are monotonic ns (clock.h). tid 0: a launch the ring recorded without its thread.
 * A call of api (a string that outlives the timeline: its API row's), failed where error is
 * not 0 (error_name its name, as lasting). */
void timeline_call(pid_t pid, pid_t tid, const char *api, uint64_t start_ns, uint64_t end_ns, int error,
		   const char *error_name);
/* Compact mode: writes the runs and counters' values that stopped changing 200 ms before now
 * (monotonic ns), so that the file keeps up while the program is quiet. */
void timeline_tick(uint64_t now);
/* device -1: not known. */
void timeline_launch(pid_t pid, pid_t tid, const char *kernel, uint64_t at_ns, const uint32_t grid[3],
		     const uint32_t block[3], int device);
/* A copy of bytes in direction dir (enum copy_dir, its name dir_name) ending at at_ns: the
 * process's counter of bytes copied that way moves. */
void timeline_copy(pid_t pid, int dir, const char *dir_name, uint64_t bytes, uint64_t at_ns);
/* An allocation (bytes > 0) or a free (bytes 0) at ptr on device: the live bytes counter of
 * the device moves. */
void timeline_alloc(pid_t pid, uint64_t ptr, uint64_t bytes, int device, uint64_t at_ns);
void timeline_free(pid_t pid, uint64_t ptr, uint64_t at_ns);

/* The calls' events, as the consumer of calls (cuda/cuda_call.h) timeline_calls.c writes them. */
extern const struct cuda_consumer timeline_consumer;

#endif
