/* rb_fork.c — new processes of a CUDA program, for tests/e2e/robust_fork.sh: a forked child
 * (it inherits every breakpoint gputop planted) must not die of SIGTRAP and must compute
 * correctly; an exec'd image is probed again; vfork and posix_spawn work.
 * Usage: rb_fork MODE [ARGS...]
 *   fork N        N x work() in the parent; then forks a child that does work() 3 times and
 *                 exits with its failures+mismatches (0); the parent waits for it, does work()
 *                 once more. Prints "rb_fork: child status=<s>" and "rb_fork: parent ok=..."
 *   fork-threads  3 threads loop on cudaDeviceSynchronize while the main thread does work() and
 *                 forks, 20 times; each child does work() twice and exits 0 if all went well.
 *                 Prints "rb_fork: children=20 ok=<children that exited 0> sync_failures=<f>".
 *   fork-in-call  SIMCUDA_SYNC_HOOK=rb_fork_in_sync: cudaDeviceSynchronize forks from inside
 *                 the call (the child's copy of the stack holds the swapped return address);
 *                 the child returns from it, does work() twice and exits 0 when all is right.
 *   exec PROG ARGS...         work() twice, then execv(PROG, PROG ARGS...) from the main thread.
 *   exec-thread PROG ARGS...  work() twice, then 3 threads loop on work() while a 4th thread
 *                             execs PROG (the new image replaces every thread).
 *   vfork PROG ARGS...        work() once, vfork + execv PROG, wait, work() once.
 *   spawn PROG ARGS...        work() once, posix_spawn PROG, wait, work() once.
 * work() = cudaMalloc 64 KiB, cudaMemcpy H2D 64 KiB, cudaLaunchKernel (fork_kernel(int*),
 * grid (2,1,1) block (64,1,1)), cudaMemcpy D2H 64 KiB (compared), cudaFree: 5 calls.
 * vfork/spawn print "rb_fork: <mode> child status=<s>". Exit status 0 unless said otherwise. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "progs.h"

extern char **environ;
static struct fails fails;
static pthread_mutex_t fails_lock = PTHREAD_MUTEX_INITIALIZER;
static long mismatches;
static volatile int stop_workers;

__attribute__((noinline)) void fork_kernel(int *out)
{
	static volatile int calls;
	calls = calls + 1;
	(void)out;
}

#define CHUNK (64 * 1024)

/* One unit of checked CUDA work; returns failed calls + mismatches. */
static int work(int seed)
{
	unsigned char *src = malloc(CHUNK), *back = malloc(CHUNK);
	void *p = NULL;
	int *out = NULL, bad = 0, e;
	void *args[] = { &out };
	for (int i = 0; i < CHUNK; i++)
		src[i] = (unsigned char)(i * 7 + seed);
	memset(back, 0, CHUNK);
	int codes[5];
	codes[0] = cudaMalloc(&p, CHUNK);
	codes[1] = cudaMemcpy(p, src, CHUNK, cudaMemcpyHostToDevice);
	codes[2] = cudaLaunchKernel((const void *)fork_kernel, (dim3){ 2, 1, 1 }, (dim3){ 64, 1, 1 }, args,
				    0, 0);
	codes[3] = cudaMemcpy(back, p, CHUNK, cudaMemcpyDeviceToHost);
	codes[4] = cudaFree(p);
	static const char *const names[5] = { "cudaMalloc", "cudaMemcpy", "cudaLaunchKernel",
					      "cudaMemcpy", "cudaFree" };
	pthread_mutex_lock(&fails_lock);
	for (int i = 0; i < 5; i++)
		if ((e = progs_check(&fails, names[i], codes[i])) != 0)
			bad++;
	if (memcmp(src, back, CHUNK) != 0) {
		mismatches++;
		bad++;
	}
	pthread_mutex_unlock(&fails_lock);
	free(src);
	free(back);
	return bad;
}

static void report(void)
{
	progs_print_fails("rb_fork", &fails);
	printf("rb_fork: failures=%ld mismatches=%ld\n", fails.total, mismatches);
}

static int child_status(pid_t child)
{
	int st = 0;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int mode_fork(int n)
{
	for (int i = 0; i < n; i++)
		work(i);
	pid_t child = fork();
	if (child == 0) {
		int bad = 0;
		for (int i = 0; i < 3; i++)
			bad += work(100 + i);
		_exit(bad);
	}
	printf("rb_fork: child status=%d\n", child_status(child));
	work(200);
	report();
	return 0;
}

static void *worker(void *arg)
{
	int seed = (int)(long)arg;
	while (!stop_workers)
		work(seed++);
	return NULL;
}

static void start_workers(pthread_t *th, int n)
{
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)(i * 1000));
}

static void stop_all(pthread_t *th, int n)
{
	stop_workers = 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* Synchronize takes no lock of the runtime: a child forked while these threads are inside it
 * inherits no held lock (work() in the child would deadlock on one, with or without gputop). */
static long sync_failures;

static void *sync_worker(void *arg)
{
	(void)arg;
	while (!stop_workers)
		if (cudaDeviceSynchronize() != cudaSuccess)
			__atomic_add_fetch(&sync_failures, 1, __ATOMIC_RELAXED);
	return NULL;
}

static int mode_fork_threads(void)
{
	pthread_t th[3];
	int ok = 0;
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, sync_worker, NULL);
	for (int i = 0; i < 20; i++) {
		work(i);
		pid_t child = fork();
		if (child == 0)
			_exit(work(i) + work(i + 1));	/* only this thread exists in the child */
		ok += child_status(child) == 0;
	}
	stop_all(th, 3);
	printf("rb_fork: children=20 ok=%d sync_failures=%ld\n", ok, sync_failures);
	report();
	return 0;
}

static volatile int in_hook;
static pid_t hook_child;

/* Called by the simulated runtime from inside cudaDeviceSynchronize (SIMCUDA_SYNC_HOOK). */
void rb_fork_in_sync(void)
{
	if (!in_hook)
		return;
	in_hook = 0;
	hook_child = fork();
}

static int mode_fork_in_call(void)
{
	work(1);
	in_hook = 1;
	int e = cudaDeviceSynchronize();	/* forks inside; both processes return here */
	if (hook_child == 0) {
		int bad = e != 0;
		bad += work(2) + work(3);
		_exit(bad);
	}
	progs_check(&fails, "cudaDeviceSynchronize", e);
	printf("rb_fork: child status=%d\n", child_status(hook_child));
	work(4);
	report();
	return 0;
}

static char **exec_argv;

static void *exec_thread(void *arg)
{
	(void)arg;
	progs_sleep_ms(50);
	fflush(stdout);
	execv(exec_argv[0], exec_argv);
	perror("rb_fork: execv");
	_exit(127);
}

static int mode_exec(char **argv, bool threaded)
{
	exec_argv = argv;
	work(1);
	work(2);
	report();
	fflush(stdout);
	if (!threaded) {
		execv(argv[0], argv);
		perror("rb_fork: execv");
		return 127;
	}
	pthread_t th[4];
	start_workers(th, 3);
	pthread_create(&th[3], NULL, exec_thread, NULL);
	pthread_join(th[3], NULL);	/* never returns: the exec ends every thread */
	return 127;
}

static int mode_vfork(char **argv, bool spawn)
{
	pid_t child;
	work(1);
	fflush(stdout);
	if (spawn) {
		int e = posix_spawn(&child, argv[0], NULL, NULL, argv, environ);
		if (e) {
			printf("rb_fork: posix_spawn: %s\n", strerror(e));
			return 1;
		}
	} else {
		child = vfork();
		if (child == 0) {
			execv(argv[0], argv);
			_exit(127);
		}
	}
	printf("rb_fork: %s child status=%d\n", spawn ? "spawn" : "vfork", child_status(child));
	work(2);
	report();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "fork") == 0)
		return mode_fork(argc > 2 ? atoi(argv[2]) : 3);
	if (strcmp(mode, "fork-threads") == 0)
		return mode_fork_threads();
	if (strcmp(mode, "fork-in-call") == 0)
		return mode_fork_in_call();
	if (argc > 2 && strcmp(mode, "exec") == 0)
		return mode_exec(argv + 2, false);
	if (argc > 2 && strcmp(mode, "exec-thread") == 0)
		return mode_exec(argv + 2, true);
	if (argc > 2 && strcmp(mode, "vfork") == 0)
		return mode_vfork(argv + 2, false);
	if (argc > 2 && strcmp(mode, "spawn") == 0)
		return mode_vfork(argv + 2, true);
	fprintf(stderr, "usage: rb_fork fork [N] | fork-threads | fork-in-call | "
			"exec|exec-thread|vfork|spawn PROG [ARGS...]\n");
	return 2;
}
