/* rb_threads.c — threads that come and go, and calls that never return, for
 * tests/e2e/robust_threads.sh. The in-call modes need SIMCUDA_SYNC_HOOK=rb_threads_hook (the
 * SIMULATED runtime then calls rb_threads_hook from inside every synchronize call).
 * Usage: rb_threads MODE [N] [PARALLEL]
 *   churn N P      N short-lived threads, at most P at once (joined in waves; every 4th one
 *                  detached instead, and waited for through a counter), each making 3 calls:
 *                  cudaMalloc 256 B, cudaLaunchKernel churn_kernel(int*) grid (1,1,1) block
 *                  (32,1,1), cudaFree. Prints "rb_threads: churn threads=N ok=<threads whose 3
 *                  calls succeeded>". N = 0: until the file $RB_STOP_FILE exists, then prints
 *                  "rb_threads: churn threads=many failed=<threads whose calls failed>".
 *   exit-in-call N N threads, one after the other, each calling cudaStreamSynchronize(0) from
 *                  a frame holding a pthread_cleanup_push handler; the hook pthread_exit()s from
 *                  inside the call. Then the main thread makes one more cudaStreamSynchronize
 *                  (returns normally) and one cudaMalloc/cudaFree. Prints "rb_threads:
 *                  exit-in-call threads=N retval=<joined with 42> cleanups=<handlers run>
 *                  after=<0 if the last calls succeeded>".
 *   longjmp N      N times: cudaStreamSynchronize, left by siglongjmp from the hook; prints
 *                  "rb_threads: longjmp jumps=N"; waits for $RB_STOP_FILE when set; then 5
 *                  cudaMalloc/cudaFree pairs. Prints "rb_threads: longjmp after=<fails>".
 *   main-exit      a worker waits until the main thread has left (pthread_exit from inside its
 *                  cudaStreamSynchronize), makes 10 cudaMalloc/cudaFree pairs, prints
 *                  "rb_threads: main-exit worker failures=<f>" and returns: status 0. With
 *                  RB_STOP_FILE set, the worker first prints "ready <pid>" and waits for that
 *                  file (a live process whose main thread is a zombie, to attach to).
 *   join-late      a worker makes a cudaMalloc/cudaFree pair, prints "ready <pid>", waits for the
 *                  file $RB_STOP_FILE and returns; the main thread joins it, prints "rb_threads:
 *                  join-late joined", makes another pair, waits for the file $RB_GO_FILE and
 *                  prints "rb_threads: join-late after=<fails>" (a thread's end while gputop is
 *                  frozen: its joiner must not wait for gputop).
 *   in-flight N    prints "ready <pid>", waits for the file $RB_STOP_FILE (an attach), then N
 *                  threads each call cudaStreamSynchronize(0), held inside it by the hook until
 *                  the file $RB_GO_FILE exists; once all N are inside it prints "rb_threads:
 *                  in-flight inside=N", and at the end "rb_threads: in-flight failures=<f>"
 *                  (N calls in flight at once: the call stub's table used past its first 8).
 * C, not C++: pthread_cleanup_push is then glibc's setjmp-based one; rb_unwind.cpp has the C++
 * cases, which need the unwinder. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>

#include "progs.h"

enum action { ACT_NONE, ACT_EXIT, ACT_LONGJMP, ACT_WAIT };
static __thread int hook_action;
static __thread sigjmp_buf *jump_to;
static int inside;	/* in-flight: threads held inside their call */
static bool go_file_there(void);

void rb_threads_hook(void)
{
	switch (hook_action) {
	case ACT_EXIT:
		pthread_exit((void *)42);
	case ACT_LONGJMP:
		hook_action = ACT_NONE;
		siglongjmp(*jump_to, 1);
	case ACT_WAIT:
		hook_action = ACT_NONE;
		__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		while (!go_file_there())
			progs_sleep_ms(10);
		break;
	default:
		break;
	}
}

__attribute__((noinline)) void churn_kernel(int *out)
{
	static volatile int calls;
	calls = calls + 1;
	(void)out;
}

static int churn_ok, detached_done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *churn_thread(void *arg)
{
	void *p = NULL;
	int *out = NULL;
	void *args[] = { &out };
	bool ok = cudaMalloc(&p, 256) == cudaSuccess;
	ok &= cudaLaunchKernel((const void *)churn_kernel, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0,
			       0) == cudaSuccess;
	ok &= cudaFree(p) == cudaSuccess;
	pthread_mutex_lock(&lock);
	churn_ok += ok;
	detached_done += arg != NULL;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int mode_churn(int n, int par)
{
	pthread_t *th = calloc((size_t)par, sizeof(*th));
	int detached = 0, started = 0;
	const char *stop = n == 0 ? getenv("RB_STOP_FILE") : NULL;
	if (n == 0 && !stop) {
		fprintf(stderr, "rb_threads: churn 0 needs RB_STOP_FILE\n");
		return 2;
	}
	for (int done = 0; stop ? access(stop, F_OK) != 0 : done < n;) {
		int wave = stop ? par : n - done < par ? n - done : par;
		bool joinable[1024];
		for (int i = 0; i < wave; i++) {
			bool detach = (done + i) % 4 == 3;
			joinable[i] = !detach;
			if (pthread_create(&th[i], NULL, churn_thread, detach ? (void *)1 : NULL) != 0) {
				perror("rb_threads: pthread_create");
				return 1;
			}
			if (detach) {
				pthread_detach(th[i]);
				detached++;
			}
		}
		for (int i = 0; i < wave; i++)
			if (joinable[i])
				pthread_join(th[i], NULL);
		done += wave;
		started += wave;
	}
	for (;;) {
		pthread_mutex_lock(&lock);
		bool all = detached_done == detached;
		pthread_mutex_unlock(&lock);
		if (all)
			break;
		progs_sleep_ms(1);
	}
	free(th);
	if (stop)
		printf("rb_threads: churn threads=many failed=%d\n", started - churn_ok);
	else
		printf("rb_threads: churn threads=%d ok=%d\n", n, churn_ok);
	return 0;
}

static int cleanups;

static void count_cleanup(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&cleanups, 1, __ATOMIC_RELAXED);
}

/* noinline: a frame of its own between the thread's start and the traced call. */
__attribute__((noinline)) static void sync_then_exit_cleanup(void)
{
	pthread_cleanup_push(count_cleanup, NULL);
	hook_action = ACT_EXIT;
	cudaStreamSynchronize(0);
	hook_action = ACT_NONE;	/* never reached */
	pthread_cleanup_pop(0);
}

static void *exit_thread(void *arg)
{
	(void)arg;
	sync_then_exit_cleanup();
	return (void *)1;	/* never reached */
}

static int mode_exit_in_call(int n)
{
	int retval_ok = 0;
	for (int i = 0; i < n; i++) {
		pthread_t th;
		void *ret = NULL;
		pthread_create(&th, NULL, exit_thread, NULL);
		pthread_join(th, &ret);
		retval_ok += ret == (void *)42;
	}
	int after = cudaStreamSynchronize(0) != cudaSuccess;
	void *p = NULL;
	after += cudaMalloc(&p, 4096) != cudaSuccess;
	after += cudaFree(p) != cudaSuccess;
	printf("rb_threads: exit-in-call threads=%d retval=%d cleanups=%d after=%d\n", n, retval_ok,
	       cleanups, after);
	return 0;
}

static int mode_longjmp(int n)
{
	static sigjmp_buf buf;
	static volatile int jumps;
	jump_to = &buf;
	for (volatile int i = 0; i < n; i++) {
		if (sigsetjmp(buf, 1) == 0) {
			hook_action = ACT_LONGJMP;
			cudaStreamSynchronize(0);
			hook_action = ACT_NONE;	/* only if the hook did not jump */
		} else {
			jumps = jumps + 1;
		}
	}
	printf("rb_threads: longjmp jumps=%d\n", (int)jumps);
	const char *stop = getenv("RB_STOP_FILE");
	while (stop && access(stop, F_OK) != 0)
		progs_sleep_ms(10);
	int after = 0;
	for (int i = 0; i < 5; i++) {
		void *p = NULL;
		after += cudaMalloc(&p, 4096) != cudaSuccess;
		after += cudaFree(p) != cudaSuccess;
	}
	printf("rb_threads: longjmp after=%d\n", after);
	return 0;
}

static pthread_t main_thread;

static void *main_exit_worker(void *arg)
{
	(void)arg;
	/* The main thread has left once joining it succeeds. */
	pthread_join(main_thread, NULL);
	const char *stop = getenv("RB_STOP_FILE");
	if (stop) {	/* a process whose main thread is gone, for attach tests */
		printf("ready %d\n", (int)getpid());
		while (access(stop, F_OK) != 0)
			progs_sleep_ms(10);
	}
	int failures = 0;
	for (int i = 0; i < 10; i++) {
		void *p = NULL;
		failures += cudaMalloc(&p, 4096) != cudaSuccess;
		failures += cudaFree(p) != cudaSuccess;
	}
	printf("rb_threads: main-exit worker failures=%d\n", failures);
	return NULL;
}

static int mode_main_exit(void)
{
	pthread_t w;
	main_thread = pthread_self();
	pthread_create(&w, NULL, main_exit_worker, NULL);
	pthread_detach(w);
	hook_action = ACT_EXIT;
	cudaStreamSynchronize(0);
	return 1;	/* never reached */
}

static int pair(void)
{
	void *p = NULL;
	int fails = cudaMalloc(&p, 4096) != cudaSuccess;
	return fails + (cudaFree(p) != cudaSuccess);
}

static void wait_file(const char *env)
{
	const char *f = getenv(env);
	while (f && access(f, F_OK) != 0)
		progs_sleep_ms(10);
}

static bool go_file_there(void)
{
	const char *f = getenv("RB_GO_FILE");
	return !f || access(f, F_OK) == 0;
}

static void *in_flight_worker(void *arg)
{
	hook_action = ACT_WAIT;
	*(int *)arg = cudaStreamSynchronize(0) != cudaSuccess;
	return NULL;
}

static int mode_in_flight(int n)
{
	pthread_t th[128];
	int failed[128] = { 0 }, fails = 0;
	if (n < 1 || n > 128)
		return 2;
	printf("ready %d\n", (int)getpid());
	wait_file("RB_STOP_FILE");
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, in_flight_worker, &failed[i]);
	while (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) < n)
		progs_sleep_ms(1);
	printf("rb_threads: in-flight inside=%d\n", n);
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		fails += failed[i];
	}
	printf("rb_threads: in-flight failures=%d\n", fails);
	return 0;
}

static void *join_late_worker(void *arg)
{
	*(int *)arg = pair();
	printf("ready %d\n", (int)getpid());
	wait_file("RB_STOP_FILE");
	return NULL;
}

static int mode_join_late(void)
{
	pthread_t w;
	int fails = 0;
	pthread_create(&w, NULL, join_late_worker, &fails);
	pthread_join(w, NULL);
	printf("rb_threads: join-late joined\n");
	fails += pair();
	wait_file("RB_GO_FILE");
	printf("rb_threads: join-late after=%d\n", fails);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 10;
	int par = argc > 3 ? atoi(argv[3]) : 8;
	if (par < 1 || par > 1024)
		par = 8;
	if (strcmp(mode, "churn") == 0)
		return mode_churn(n, par);
	if (strcmp(mode, "exit-in-call") == 0)
		return mode_exit_in_call(n);
	if (strcmp(mode, "longjmp") == 0)
		return mode_longjmp(n);
	if (strcmp(mode, "main-exit") == 0)
		return mode_main_exit();
	if (strcmp(mode, "join-late") == 0)
		return mode_join_late();
	if (strcmp(mode, "in-flight") == 0)
		return mode_in_flight(n);
	fprintf(stderr, "usage: rb_threads churn N P | exit-in-call N | longjmp N | "
			"main-exit | join-late | in-flight N\n");
	return 2;
}
