/* gputime_find.h — where --gpu-time's two libraries are: gputop's own libgputop-gpu.so (next
 * to the gputop binary) and the libcupti the program should load (GPUTOP_CUPTI, else one the
 * program already has, else next to its CUDA libraries, else the toolkit's). */
#ifndef GPUTOP_GPUTIME_FIND_H
#define GPUTOP_GPUTIME_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* libgputop-gpu.so next to gputop's executable (/proc/self/exe): 0, or -ENOENT with the path
 * looked at in out. */
int gputime_find_library(char *out, size_t size);
/* Whether lib (gputop's library) is the same file at the same path in process pid's file
 * system, where the program's dlopen looks: 0; -ENOENT (not there: another mount namespace, a
 * container) or -ESTALE (another file stands there). */
int gputime_library_in(pid_t pid, const char *lib);
/* Whether path names a readable file in process pid's file system (0: in gputop's own). */
bool gputime_file_there(pid_t pid, const char *path);
/* A libcupti for process pid, as a path in the program's file system (checked through
 * /proc/PID/root): 0, or -ENOENT. */
int gputime_find_cupti(pid_t pid, char *out, size_t size);

#endif
