/* trace.h — --trace FILE: one line per traced call, in the order gputop sees them. Formats and
 * writes; knows nothing of how the calls were caught. */
#ifndef GPUTOP_TRACE_H
#define GPUTOP_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens path ("-": stderr). 0 or -errno. (config.tracing is the session's: --trace given.) */
int trace_open(const char *path);
void trace_close(void);

void trace_launch(pid_t tid, const char *api, const uint32_t grid[3], const uint32_t block[3]);
/* A CUDA graph launch (its executable graph's handle): each of its nodes runs once. */
void trace_graph_launch(pid_t tid, const char *api, uint64_t exec);
void trace_alloc(pid_t tid, const char *api, uint64_t ptr, uint64_t bytes);
/* A call's return: its error (0, or the code and its name) and its time. */
void trace_return(pid_t tid, const char *api, int err, const char *err_name, uint64_t ns);
/* A failed allocation: the error alone. */
void trace_error(pid_t tid, const char *api, int err, const char *err_name);

#endif
