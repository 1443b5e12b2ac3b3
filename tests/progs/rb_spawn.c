/* rb_spawn.c — threads made while CUDA arrives, for tests/e2e/robust_spawn.sh: what a PyTorch
 * process does at `import torch` (CUDA's libraries loaded while thread pools start). A process
 * that gputop follows but has not probed (no CUDA at its exec) is probed once CUDA shows in its
 * maps, after every thread was brought to a stop; threads made meanwhile must be stopped too,
 * whichever of a new thread's first stop and its creator's clone event the tracer sees first.
 * Usage: rb_spawn STOP_FILE THREADS
 *   THREADS threads each make short-lived threads without a pause (each new one waits for its
 *   creator to post a semaphore after pthread_create returned, then ends; joined); the main
 *   thread dlopens libcudart.so.13 after 20 ms; once STOP_FILE exists (polled every 10 ms) all
 *   stop, and the main thread calls cudaMalloc and cudaFree once. Prints "rb_spawn: cuda=<0 if
 *   the calls succeeded>" and exits 0. Not linked against libcudart. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;

/* A new thread waits for its creator to let it go, as a pool's worker waits for its first
 * task: it blocks on its creator while that one is held in its clone. */
static void *waits_for_creator(void *arg)
{
	sem_wait(arg);
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	sem_t go;
	sem_init(&go, 0, 0);
	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, waits_for_creator, &go) == 0) {
			sem_post(&go);
			pthread_join(t, NULL);
		}
	}
	sem_destroy(&go);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t th[64];
	if (argc < 3 || n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, spawner, NULL);
	sleep_ms(20);
	void *lib = dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
	while (access(argv[1], F_OK) != 0)
		sleep_ms(10);
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	int cuda = 1;
	if (lib) {
		cudaError_t (*alloc)(void **, size_t) = (cudaError_t (*)(void **, size_t))dlsym(lib, "cudaMalloc");
		cudaError_t (*release)(void *) = (cudaError_t (*)(void *))dlsym(lib, "cudaFree");
		void *p = NULL;
		cuda = !alloc || !release || alloc(&p, 4096) != cudaSuccess || release(p) != cudaSuccess;
	}
	printf("rb_spawn: cuda=%d\n", cuda);
	return 0;
}
