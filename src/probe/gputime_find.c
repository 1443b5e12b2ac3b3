/* gputime_find.c — finding libgputop-gpu.so and the program's libcupti (gputime_find.h). */
#define _GNU_SOURCE
#include "gputime_find.h"
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


int gputime_find_library(char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(out, size, "%s/libgputop-gpu.so", exe);
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}

/* path exists in the program's file system (its root may not be ours: a container). */
static bool there(pid_t pid, const char *path)
{
	char full[PATH_MAX + 64];
	snprintf(full, sizeof full, "/proc/%d/root%s", pid, path);
	return access(full, R_OK) == 0;
}

bool gputime_file_there(pid_t pid, const char *path)
{
	return pid > 0 ? there(pid, path) : access(path, R_OK) == 0;
}

int gputime_library_in(pid_t pid, const char *lib)
{
	char full[PATH_MAX + 64];
	struct stat ours, theirs;
	snprintf(full, sizeof full, "/proc/%d/root%s", pid, lib);
	if (stat(lib, &ours) < 0 || stat(full, &theirs) < 0)
		return -ENOENT;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino ? 0 : -ESTALE;
}

static const char sonames[][20] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so" };

/* In dir, or where NVIDIA's wheels put CUPTI beside the runtime (nvidia/cuda_runtime/lib ->
 * nvidia/cuda_cupti/lib; CUDA 13's nvidia/cu13/lib holds both). */
static bool try_dir(pid_t pid, const char *dir, char *out, size_t size)
{
	const char *const subs[] = { "", "/../../cuda_cupti/lib" };
	for (size_t s = 0; s < sizeof subs / sizeof subs[0]; s++)
		for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
			if ((size_t)snprintf(out, size, "%s%s/%s", dir, subs[s], sonames[i]) >= size)
				continue;
			if (there(pid, out))
				return true;
		}
	return false;
}

/* The program's mappings: a libcupti already loaded (the same one, no second copy), else the
 * folders of its CUDA libraries. */
static bool from_maps(pid_t pid, char *out, size_t size)
{
	char path[64], line[PATH_MAX + 256], dirs[8][PATH_MAX];
	int n_dirs = 0;
	bool found = false;
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		char *base = strrchr(file, '/') + 1;
		if (strncmp(base, "libcupti.so", 11) == 0) {
			snprintf(out, size, "%s", file);
			found = true;
		} else if ((strncmp(base, "libcudart.so", 12) == 0 || strncmp(base, "libcuda.so", 10) == 0) &&
			   n_dirs < 8) {
			base[-1] = 0;
			bool dup = false;
			for (int i = 0; i < n_dirs; i++)
				dup |= strcmp(dirs[i], file) == 0;
			if (!dup)
				snprintf(dirs[n_dirs++], PATH_MAX, "%s", file);
		}
	}
	fclose(f);
	for (int i = 0; !found && i < n_dirs; i++)
		found = try_dir(pid, dirs[i], out, size);
	return found;
}

int gputime_find_cupti(pid_t pid, char *out, size_t size)
{
	const char *env = config.cupti_path;
	if (env) {
		snprintf(out, size, "%s", env);
		return there(pid, out) ? 0 : -ENOENT;
	}
	if (from_maps(pid, out, size))
		return 0;
	const char *const dirs[] = { "/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64",
				     "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu",
				     "/usr/lib64" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (try_dir(pid, dirs[i], out, size))
			return 0;
	return -ENOENT;
}
