/* threads.cpp — many threads launching at once, for counting every breakpoint hit.
 * Usage: threads [THREADS=4] [LAUNCHES=20000]
 * Calls: THREADS x LAUNCHES cudaLaunchKernel, nothing else; each launches
 * func = worker_kernel(int*) (a host stub, _Z13worker_kernelPi) with grid (1,1,1) block (32,1,1).
 * The threads start together (barrier). Prints "threads: total=<successful launches>
 * failures=<failed launches>" (total=80000 failures=0 with the defaults on a working runtime). */
#include <cuda_runtime_api.h>
#include <pthread.h>

#include "progs.h"

__attribute__((noinline)) void worker_kernel(int *out)
{
	static volatile int calls;
	calls = calls + 1;
	(void)out;
}

static int launches = 20000;
static pthread_barrier_t start;

struct result {
	long ok, failed;
	int first_error;
};

static void *worker(void *arg)
{
	struct result *r = (struct result *)arg;
	int *out = NULL;
	void *args[] = { &out };

	pthread_barrier_wait(&start);
	for (int i = 0; i < launches; i++) {
		cudaError_t e = cudaLaunchKernel((const void *)worker_kernel, dim3(1, 1, 1),
						 dim3(32, 1, 1), args, 0, 0);
		if (e == cudaSuccess) {
			r->ok++;
		} else {
			if (!r->failed)
				r->first_error = e;
			r->failed++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (argc > 2)
		launches = atoi(argv[2]);
	if (n < 1 || n > 1024 || launches < 0) {
		fprintf(stderr, "usage: threads [THREADS] [LAUNCHES]\n");
		return 2;
	}
	pthread_t *tid = (pthread_t *)calloc(n, sizeof(*tid));
	struct result *res = (struct result *)calloc(n, sizeof(*res));
	pthread_barrier_init(&start, NULL, n);
	for (int i = 0; i < n; i++)
		if (pthread_create(&tid[i], NULL, worker, &res[i]) != 0) {
			perror("threads: pthread_create");
			return 1;
		}
	long total = 0, failed = 0;
	int first_error = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		total += res[i].ok;
		failed += res[i].failed;
		if (!first_error)
			first_error = res[i].first_error;
	}
	if (failed)
		printf("threads: cudaLaunchKernel failed %ld times (error %d %s)\n", failed,
		       first_error, progs_error_name(first_error));
	printf("threads: total=%ld failures=%ld\n", total, failed);
	free(tid);
	free(res);
	return 0;
}
