/* rb_seccomp.c — a CUDA program in a W^X sandbox, for tests/e2e/robust_seccomp.sh: it installs a
 * seccomp filter that kills the whole process (SECCOMP_RET_KILL_PROCESS, SIGSYS) at any anonymous
 * mmap asking for PROT_EXEC and any mprotect or pkey_mprotect asking for it (what a JIT sandbox
 * forbids; the dynamic loader's file mappings still work), then does CUDA work with threads.
 * Usage: rb_seccomp THREADS ITERS
 *        RB_FILTER=gettid|futex-timed|openat rb_seccomp THREADS ITERS: another filter,
 *        which kills (SECCOMP_RET_KILL_PROCESS) only that call: gettid, futex(FUTEX_WAIT_PRIVATE)
 *        with a timeout (what gputop's park makes; a lock's wait has none) or openat:
 *        calls gputop's stubs and --gpu-time make in the program (issue 25 part 1); the line
 *        printed then says filter=kills-<name>.
 *        rb_seccomp --exec-under wx|benign CMD ARGS...   installs the W^X filter, or a benign one
 *        (it kills only kexec_load, which nothing calls), and runs CMD under it: a container's
 *        filter, shared by gputop and the program. Exit status 3 if the filter cannot be set.
 *   Makes one cudaMalloc/cudaFree pair first (the runtime's lazy set-up, which may load
 *   libraries, happens before the filter), installs the filter, proves it works (a forked
 *   child asking for an executable mapping must die of SIGSYS), starts THREADS threads, prints
 *   "ready <pid>", and when RB_GO_FILE is set waits for that file (polled every 10 ms, by each
 *   thread: the threads exist while a tracer attaches). Then each thread makes ITERS
 *   iterations of: cudaMalloc 4096 B, cudaMemcpy H2D, cudaLaunchKernel wx_kernel(int*) grid
 *   (1,1,1) block (32,1,1), cudaMemcpy D2H (compared with what went in), cudaFree.
 *   Prints "rb_seccomp: filter=kills-exec threads=T iterations=<T x ITERS> failures=<f>
 *   mismatches=<m>". Exit status 0; 3 if the filter could not be installed or did not work. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "progs.h"

static int iters;
static const char *go_file;
static struct fails fails;
static long mismatches;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void wx_kernel(int *out)
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

static int install(struct sock_filter *code, unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 4, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),	/* (padding: keeps the jumps short) */
		/* mmap: anonymous and executable? */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 0, 4),
		/* mmap (anonymous) and mprotect: executable? */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	return install(code, sizeof code / sizeof code[0]);
}

/* Kills one call (RB_FILTER), nothing else: gettid, futex-timed or openat. */
static long killed_nr(const char *name)
{
	if (strcmp(name, "gettid") == 0)
		return SYS_gettid;
	if (strcmp(name, "futex-timed") == 0)
		return SYS_futex;
	if (strcmp(name, "openat") == 0)
		return SYS_openat;
	return -1;
}

static int install_one_call_filter(long nr)
{
	struct sock_filter one[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* futex: FUTEX_WAIT_PRIVATE with a timeout (args[3], either half not 0) */
	struct sock_filter futex[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 128, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	if (nr == SYS_futex)
		return install(futex, sizeof futex / sizeof futex[0]);
	return install(one, sizeof one / sizeof one[0]);
}

/* Kills only kexec_load: everything gputop and the programs do runs. */
static int install_benign_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kexec_load, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	return install(code, sizeof code / sizeof code[0]);
}

/* A child (same filter) makes the call the filter kills: it must die of SIGSYS. */
static int filter_works(long nr)
{
	pid_t c = fork();
	if (c < 0)
		return 0;
	if (c == 0) {
		if (nr == SYS_futex) {
			int word = 0;
			struct timespec ts = { 0, 1000 };
			syscall(SYS_futex, &word, 128, 1, &ts, NULL, 0);
		} else if (nr == SYS_openat) {
			syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY | O_CLOEXEC);
		} else if (nr >= 0) {
			syscall(nr);
		} else {
			mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		}
		_exit(0);
	}
	int status;
	while (waitpid(c, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

static void *work_thread(void *arg)
{
	unsigned char src[4096], back[4096];
	int *out = NULL;
	void *args[] = { &out };
	long seed = (long)arg * 7919;
	if (go_file)
		progs_wait_go(go_file);
	for (int i = 0; i < iters; i++) {
		void *p = NULL;
		memset(src, (int)((seed + i) & 0xff), sizeof(src));
		memset(back, 0, sizeof(back));
		record("cudaMalloc", cudaMalloc(&p, sizeof(src)));
		record("cudaMemcpy", cudaMemcpy(p, src, sizeof(src), cudaMemcpyHostToDevice));
		record("cudaLaunchKernel", cudaLaunchKernel((const void *)wx_kernel, (dim3){ 1, 1, 1 },
							    (dim3){ 32, 1, 1 }, args, 0, 0));
		record("cudaMemcpy", cudaMemcpy(back, p, sizeof(back), cudaMemcpyDeviceToHost));
		if (memcmp(src, back, sizeof(src)) != 0) {
			pthread_mutex_lock(&lock);
			mismatches++;
			pthread_mutex_unlock(&lock);
		}
		record("cudaFree", cudaFree(p));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 3 && strcmp(argv[1], "--exec-under") == 0) {
		bool wx = strcmp(argv[2], "wx") == 0;
		if ((wx ? install_filter() : install_benign_filter()) < 0) {
			fprintf(stderr, "rb_seccomp: cannot install the filter: %s\n", strerror(errno));
			return 3;
		}
		execvp(argv[3], &argv[3]);
		fprintf(stderr, "rb_seccomp: cannot run %s: %s\n", argv[3], strerror(errno));
		return 127;
	}
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	iters = argc > 2 ? atoi(argv[2]) : 100;
	go_file = getenv("RB_GO_FILE");
	if (threads < 1 || threads > 64 || iters < 1) {
		fprintf(stderr, "usage: rb_seccomp THREADS ITERS\n");
		return 2;
	}
	void *warm = NULL;
	record("cudaMalloc", cudaMalloc(&warm, 16));
	record("cudaFree", cudaFree(warm));
	const char *one = getenv("RB_FILTER");
	long nr = one && *one ? killed_nr(one) : -1;
	if (one && *one && nr < 0) {
		fprintf(stderr, "rb_seccomp: RB_FILTER=%s: gettid, futex-timed or openat\n", one);
		return 2;
	}
	if ((nr >= 0 ? install_one_call_filter(nr) : install_filter()) < 0) {
		fprintf(stderr, "rb_seccomp: cannot install the filter: %s\n", strerror(errno));
		return 3;
	}
	if (!filter_works(nr)) {
		fprintf(stderr, "rb_seccomp: the filter does not kill what it should\n");
		return 3;
	}
	pthread_t th[64];
	for (long i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, work_thread, (void *)i);
	progs_ready();
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	progs_print_fails("rb_seccomp", &fails);
	printf("rb_seccomp: filter=kills-%s threads=%d iterations=%ld failures=%ld mismatches=%ld\n",
	       nr >= 0 ? one : "exec", threads, (long)threads * iters, fails.total, mismatches);
	return 0;
}
