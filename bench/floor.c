/* floor.c — the floor: the least a ptrace breakpoint tool can do per hit on this machine. It
 * starts a program, plants one int3 on the entry of one function of one library, and on each
 * hit does only what any such tool must: read the registers, execute the displaced first
 * instruction (`push %rbp`, emulated: rbp stored at rsp-8, rsp -= 8, rip past it), write the
 * registers, resume. Nothing is decoded, counted beyond a hit counter, or timed.
 *   -m emulate  the above: 1 stop per call (wait4, GETREGS, POKEDATA, SETREGS, CONT)
 *   -m step     the classic way: put the byte back, single-step, re-insert the int3: 2 stops
 *               per call (loses hits of other threads meanwhile; use with one thread only)
 *   -c any      no pinning; -c same: tracer and program on one CPU; -c diff: on two CPUs
 * Usage: floor [-m emulate|step] [-c any|same|diff] -l LIBNAME -f FUNC [-f FUNC...] -- PROGRAM [ARGS...]
 * e.g.   floor -l libcuda.so.1 -f cuLaunchKernel -- bench/bin/calls launch 20000
 * Prints "floor: mode=... cpu=... hits=N user_s=U sys_s=S" on stderr (U, S: the floor's own CPU
 * time, from getrusage); exits with the program's status.
 * Threads of the program are traced too (PTRACE_O_TRACECLONE); its signals are passed on,
 * except SIGSTOP (the first stop of each new thread). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define INT3 0xccu
#define PUSH_RBP 0x55u

#define MAX_FUNCS 8

enum mode { EMULATE, STEP };
enum cpu { CPU_ANY, CPU_SAME, CPU_DIFF };

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(125);
}

static void fail(const char *msg)
{
	fprintf(stderr, "floor: %s\n", msg);
	exit(125);
}

/* The n-th CPU this process may run on, or -1. */
static int allowed_cpu(int n)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && n-- == 0)
			return c;
	return -1;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) < 0)
		die("sched_setaffinity");
}

static uint64_t program_entry(pid_t pid)
{
	char path[64];
	uint64_t aux[2], entry = 0;
	snprintf(path, sizeof path, "/proc/%d/auxv", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open auxv");
	while (read(fd, aux, sizeof aux) == sizeof aux && aux[0] != AT_NULL)
		if (aux[0] == AT_ENTRY)
			entry = aux[1];
	close(fd);
	return entry;
}

/* Runs the freshly exec'd program to its entry point, where its libraries are loaded. */
static void run_to_entry(pid_t pid)
{
	uint64_t entry = program_entry(pid);
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, 0);
	if (errno)
		die("peek entry");
	long trap = (long)(((unsigned long)word & ~0xfful) | INT3);
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)trap) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0)
		die("run to entry");
	int status;
	if (waitpid(pid, &status, __WALL) < 0 || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
		fail("the program did not reach its entry point");
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0 || r.rip != entry + 1)
		fail("unexpected stop before the entry point");
	r.rip = entry;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word) < 0 || ptrace(PTRACE_SETREGS, pid, 0, &r) < 0)
		die("restore entry");
}

/* The address of FUNC of library LIBNAME in the program: its load address from the maps, plus
 * the function's offset, which we learn by loading the same file here. */
static uint64_t function_address(pid_t pid, const char *libname, const char *func)
{
	char path[64], line[4096], file[4096] = "";
	uint64_t base = 0;
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *maps = fopen(path, "re");
	if (!maps)
		die("open maps");
	while (fgets(line, sizeof line, maps)) {
		unsigned long start, off;
		char name[4096];
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &start, &off, name) != 3 || off)
			continue;
		const char *slash = strrchr(name, '/');
		if (strcmp(slash ? slash + 1 : name, libname) == 0) {
			base = start;
			strcpy(file, name);
			break;
		}
	}
	fclose(maps);
	if (!base) {
		fprintf(stderr, "floor: %s is not loaded in the program\n", libname);
		exit(125);
	}
	void *h = dlopen(file, RTLD_LAZY | RTLD_LOCAL);
	void *sym = h ? dlsym(h, func) : NULL;
	Dl_info info;
	if (!sym || !dladdr(sym, &info)) {
		fprintf(stderr, "floor: cannot find %s in %s: %s\n", func, file, dlerror());
		exit(125);
	}
	return base + (uint64_t)((char *)sym - (char *)info.dli_fbase);
}

int main(int argc, char **argv)
{
	enum mode mode = EMULATE;
	enum cpu cpu = CPU_ANY;
	const char *lib = NULL, *funcs[MAX_FUNCS];
	int n_funcs = 0, opt;
	while ((opt = getopt(argc, argv, "+m:c:l:f:")) != -1) {
		switch (opt) {
		case 'm':
			mode = strcmp(optarg, "step") == 0 ? STEP : EMULATE;
			break;
		case 'c':
			cpu = strcmp(optarg, "same") == 0 ? CPU_SAME : strcmp(optarg, "diff") == 0 ? CPU_DIFF : CPU_ANY;
			break;
		case 'l':
			lib = optarg;
			break;
		case 'f':
			if (n_funcs == MAX_FUNCS)
				fail("too many -f");
			funcs[n_funcs++] = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!lib || !n_funcs || optind >= argc) {
		fprintf(stderr, "usage: floor [-m emulate|step] [-c any|same|diff] -l LIBNAME -f FUNC [-f FUNC...] "
				"-- PROGRAM [ARGS...]\n");
		return 2;
	}
	int cpu0 = allowed_cpu(0), cpu1 = allowed_cpu(1);
	if (cpu == CPU_DIFF && cpu1 < 0)
		fail("-c diff needs two CPUs");
	if (cpu != CPU_ANY)
		pin(cpu0);	/* the child inherits it; -c diff moves the child */

	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (cpu == CPU_DIFF)
			pin(cpu1);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(argv[optind], argv + optind);
		perror(argv[optind]);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		fail("the program did not start");
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) < 0)
		die("PTRACE_SETOPTIONS");
	run_to_entry(pid);

	uint64_t addrs[MAX_FUNCS];
	long origs[MAX_FUNCS], armeds[MAX_FUNCS];
	for (int i = 0; i < n_funcs; i++) {
		addrs[i] = function_address(pid, lib, funcs[i]);
		errno = 0;
		origs[i] = ptrace(PTRACE_PEEKTEXT, pid, (void *)addrs[i], 0);
		if (errno)
			die("peek function");
		if ((origs[i] & 0xff) != PUSH_RBP) {
			fprintf(stderr, "floor: %s does not begin with push %%rbp (byte %#lx)\n", funcs[i],
				origs[i] & 0xff);
			return 125;
		}
		armeds[i] = (long)(((unsigned long)origs[i] & ~0xfful) | INT3);
		if (ptrace(PTRACE_POKETEXT, pid, (void *)addrs[i], (void *)armeds[i]) < 0)
			die("plant int3");
	}
	if (ptrace(PTRACE_CONT, pid, 0, 0) < 0)
		die("PTRACE_CONT");

	unsigned long hits = 0;
	int exit_status = 0;
	for (;;) {
		pid_t tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;	/* ECHILD: every thread is gone */
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == pid)
				exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			continue;
		}
		int sig = WSTOPSIG(status);
		if (status >> 16 || sig == SIGSTOP) {	/* a clone event, a new thread's first stop */
			ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		struct user_regs_struct r;
		int i = 0;
		if (sig == SIGTRAP && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0)
			while (i < n_funcs && r.rip != addrs[i] + 1)
				i++;
		if (sig != SIGTRAP || i == n_funcs) {
			ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
			continue;
		}
		hits++;
		if (mode == EMULATE) {
			r.rsp -= 8;
			ptrace(PTRACE_POKEDATA, tid, (void *)r.rsp, (void *)r.rbp);
			ptrace(PTRACE_SETREGS, tid, 0, &r);
			ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		/* STEP: the original byte back, one instruction, the int3 again. */
		r.rip = addrs[i];
		ptrace(PTRACE_POKETEXT, tid, (void *)addrs[i], (void *)origs[i]);
		ptrace(PTRACE_SETREGS, tid, 0, &r);
		ptrace(PTRACE_SINGLESTEP, tid, 0, 0);
		while (waitpid(tid, &status, __WALL) < 0 && errno == EINTR)
			;
		ptrace(PTRACE_POKETEXT, tid, (void *)addrs[i], (void *)armeds[i]);
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, tid, 0, 0);
		else if (tid == pid)
			exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "floor: mode=%s cpu=%s hits=%lu user_s=%.3f sys_s=%.3f\n", mode == STEP ? "step" : "emulate",
		cpu == CPU_SAME ? "same" : cpu == CPU_DIFF ? "diff" : "any", hits,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6);
	return exit_status;
}
