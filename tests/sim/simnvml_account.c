/* simnvml_account.c — SIMULATED: the simulated CUDA libraries' account of this process's
 * "device memory", for the SIMULATED NVML (tests/sim/nvml.c), which gputop reads. No GPU is
 * involved. With SIMNVML_DIR set, every device or managed allocation and free rewrites
 * $SIMNVML_DIR/proc.PID.LIBRARY with one line "DEVICE BYTES SM_UTIL": device 0, the live bytes
 * plus, in the runtime library, a simulated CUDA context of SIMNVML_CONTEXT_BYTES made at its
 * first allocation; SM_UTIL is SIMNVML_SM_UTIL (default 0). The file goes at exit. */
#define _GNU_SOURCE
#include "simmem.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t account_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long live;
static int written;
static char path[4096];

static unsigned long long env_ull(const char *name)
{
	const char *s = getenv(name);
	return s ? strtoull(s, NULL, 10) : 0;
}

void simnvml_account(long long delta)
{
	const char *dir = getenv("SIMNVML_DIR");
	char tmp[4200];

	if (!dir || !*dir)
		return;
	pthread_mutex_lock(&account_lock);
	live += (unsigned long long)delta;
	unsigned long long context = strcmp(simmem_library, "runtime") == 0
					     ? env_ull("SIMNVML_CONTEXT_BYTES") : 0;
	snprintf(path, sizeof(path), "%s/proc.%d.%s", dir, (int)getpid(), simmem_library);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "0 %llu %llu\n", live + context, env_ull("SIMNVML_SM_UTIL"));
		if (fclose(f) == 0 && rename(tmp, path) == 0)
			written = 1;
	}
	pthread_mutex_unlock(&account_lock);
}

/* The process leaves the GPU when it exits. */
__attribute__((destructor)) static void simnvml_leave(void)
{
	if (written)
		unlink(path);
}
