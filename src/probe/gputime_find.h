/* gputime_find.h — where --gpu-time's two libraries are: gputop's own libgputop-gpu.so (next
 * to the gputop binary) and the libcupti the program should load (GPUTOP_CUPTI, else one the
 * program already has, else next to its CUDA libraries, else the toolkit's). */
#ifndef GPUTOP_GPUTIME_FIND_H
#define GPUTOP_GPUTIME_FIND_H

#include <stddef.h>
#include <sys/types.h>

/* libgputop-gpu.so next to gputop's executable (/proc/self/exe): 0, or -ENOENT with the path
 * looked at in out. */
int gputime_find_library(char *out, size_t size);
/* A libcupti for process pid, as a path in the program's file system (checked through
 * /proc/PID/root): 0, or -ENOENT. */
int gputime_find_cupti(pid_t pid, char *out, size_t size);

#endif
