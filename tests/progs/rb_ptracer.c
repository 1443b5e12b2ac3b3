/* rb_ptracer.c — a CUDA program one of whose processes traces gputop, as `strace -p $PPID` in
 * a program gputop launched would, for tests/e2e/robust_tracer.sh (issue 25 part 2).
 * Usage: rb_ptracer THREADS ITERS
 *   Prints "ready <pid>", makes one round of the work below in its main thread (CUDA is set up,
 *   the kernel named: on the simulated driver no int3 of gputop's is met after that), then
 *   forks a tracer: a child that PTRACE_SEIZEs the program's parent
 *   (or the process whose pid the file $RB_TRACE_PID_FILE holds, once it exists: waited for
 *   after the first round, 60 s at most), stops it (PTRACE_INTERRUPT) and lets it run from system
 *   call to system call (PTRACE_SYSCALL) as strace does, until the program is done (a pipe
 *   closes) or its tracee is gone, then detaches. Meanwhile THREADS threads make ITERS
 *   iterations each of cudaMalloc 4096 B, cudaMemcpy H2D, cudaLaunchKernel pt_kernel(int*)
 *   grid (1,1,1) block (32,1,1), cudaMemcpy D2H (compared with what went in), cudaFree.
 *   Then it waits for the tracer and prints "rb_ptracer: threads=T iterations=<T x ITERS>
 *   failures=<f> mismatches=<m>". Exit status 0. The tracer says what it did on stderr
 *   ("rb_ptracer: tracer: ..."), which tests do not compare: it differs with and without
 *   gputop. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "progs.h"

static int iters;
static struct fails fails;
static long mismatches;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void pt_kernel(int *out)
{
	static volatile int calls;
	calls = calls + 1;
	(void)out;
}

static void record(const char *name, int code)
{
	if (!code)
		return;
	pthread_mutex_lock(&lock);
	progs_check(&fails, name, code);
	pthread_mutex_unlock(&lock);
}

static void work(long seed, int rounds)
{
	unsigned char src[4096], back[4096];
	int *out = NULL;
	void *args[] = { &out };
	for (int i = 0; i < rounds; i++) {
		void *p = NULL;
		memset(src, (int)((seed * 31 + i) & 0xff), sizeof(src));
		memset(back, 0, sizeof(back));
		record("cudaMalloc", cudaMalloc(&p, sizeof(src)));
		record("cudaMemcpy", cudaMemcpy(p, src, sizeof(src), cudaMemcpyHostToDevice));
		record("cudaLaunchKernel", cudaLaunchKernel((const void *)pt_kernel, (dim3){ 1, 1, 1 },
							    (dim3){ 32, 1, 1 }, args, 0, 0));
		record("cudaMemcpy", cudaMemcpy(back, p, sizeof(back), cudaMemcpyDeviceToHost));
		if (memcmp(src, back, sizeof(src)) != 0) {
			pthread_mutex_lock(&lock);
			mismatches++;
			pthread_mutex_unlock(&lock);
		}
		record("cudaFree", cudaFree(p));
		progs_sleep_ms(1);
	}
}

static void *work_thread(void *arg)
{
	work((long)arg, iters);
	return NULL;
}

/* The tracer's life: at most 120 s, whatever happens. */
static void tracer(pid_t target, int done_fd)
{
	long stops = 0;
	if (ptrace(PTRACE_SEIZE, target, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0) {
		fprintf(stderr, "rb_ptracer: tracer: cannot trace %d: %s\n", target, strerror(errno));
		_exit(0);
	}
	ptrace(PTRACE_INTERRUPT, target, 0, 0);
	double end = progs_now() + 120;
	struct pollfd pf = { .fd = done_fd, .events = POLLIN };
	const char *how = "the program was done";
	while (progs_now() < end) {
		int status;
		pid_t w = waitpid(target, &status, __WALL | WNOHANG);
		if (w == target && (WIFEXITED(status) || WIFSIGNALED(status))) {
			how = WIFSIGNALED(status) ? "its tracee was killed" : "its tracee exited";
			fprintf(stderr, "rb_ptracer: tracer: %ld stops of %d, then %s (%s %d)\n", stops, target, how,
				WIFSIGNALED(status) ? "signal" : "status",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			_exit(0);
		}
		if (w == target && WIFSTOPPED(status)) {
			stops++;
			int sig = WSTOPSIG(status);
			int event = status >> 16;
			/* system call stops and event stops carry no signal; a signal-delivery-stop does */
			int pass = (sig == (SIGTRAP | 0x80) || event) ? 0 : sig;
			if (event == PTRACE_EVENT_STOP && (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
				ptrace(PTRACE_LISTEN, target, 0, 0);
			else
				ptrace(PTRACE_SYSCALL, target, 0, (void *)(long)pass);
			continue;
		}
		if (w < 0 && errno == ECHILD) {
			how = "its tracee was gone";
			break;
		}
		if (poll(&pf, 1, 1) > 0)
			break;	/* the program is done: let go */
	}
	/* Detach: stopped first (a running tracee cannot be detached), at most 5 s. */
	ptrace(PTRACE_INTERRUPT, target, 0, 0);
	for (double stop = progs_now() + 5; progs_now() < stop;) {
		int status;
		pid_t w = waitpid(target, &status, __WALL | WNOHANG);
		if (w == target && WIFSTOPPED(status)) {
			ptrace(PTRACE_DETACH, target, 0, 0);
			break;
		}
		if (w == target || (w < 0 && errno == ECHILD))
			break;
		progs_sleep_ms(1);
	}
	fprintf(stderr, "rb_ptracer: tracer: %ld stops of %d, then %s\n", stops, target, how);
	_exit(0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	iters = argc > 2 ? atoi(argv[2]) : 100;
	if (threads < 1 || threads > 64 || iters < 1) {
		fprintf(stderr, "usage: rb_ptracer THREADS ITERS\n");
		return 2;
	}
	const char *pid_file = getenv("RB_TRACE_PID_FILE");
	pid_t target = getppid();
	progs_ready();
	work(99, 1);
	for (double end = progs_now() + 60; pid_file && *pid_file && progs_now() < end; progs_sleep_ms(10)) {
		FILE *f = fopen(pid_file, "r");
		int pid = 0;
		if (f && fscanf(f, "%d", &pid) == 1 && pid > 0) {
			target = pid;
			fclose(f);
			break;
		}
		if (f)
			fclose(f);
	}
	int done[2];
	if (pipe(done) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		close(done[1]);
		tracer(target, done[0]);
	}
	close(done[0]);
	pthread_t th[64];
	for (long i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, work_thread, (void *)i);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	close(done[1]);
	while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	progs_print_fails("rb_ptracer", &fails);
	printf("rb_ptracer: threads=%d iterations=%ld failures=%ld mismatches=%ld\n", threads,
	       (long)threads * iters, fails.total, mismatches);
	return 0;
}
