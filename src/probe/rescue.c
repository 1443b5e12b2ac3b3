/* rescue.c — the shared rescue table, the watchdog process and the crash handler (see
 * rescue.h). Everything the watchdog and the handler do is a plain read or write of this
 * table and pread/pwrite on /proc/PID/mem: no locks, no allocation. */
#define _GNU_SOURCE
#include "rescue.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "log.h"
#include "rescue_cycle.h"

#define CODE_MAX 8192
#define FRAME_MAX 8192

struct rescue_code {
	uint64_t addr;		/* 0 = free */
	uint8_t orig;
};

struct rescue_frame {
	uint64_t slot;		/* 0 = free */
	uint64_t ret;
};

/* Fixed arrays scanned whole, not hashmap.h: shared with the watchdog and read by the crash
 * handler, they must never move, grow or allocate. */
struct rescue_table {
	int mem_fd;
	uint64_t trampoline;
	uint64_t lookup, lookup_table;	/* the return lookup and its table (xol.h) */
	uint32_t lookup_entries;
	uint64_t flag;
	struct rescue_code code[CODE_MAX];
	struct rescue_frame frame[FRAME_MAX];
	uint32_t frame_hint;
};

/* One table per traced process, in one shared mapping made at start (its pages cost nothing
 * until written); each with its own watchdog, which restores that process only. */
static struct {
	struct rescue_table *tables;
	pid_t watchdog_pid[RESCUE_SLOTS];
	int watchdog_pipe[RESCUE_SLOTS];
	bool slot_used[RESCUE_SLOTS];
	/* The crash handler's: gputop's own detach, the thread that may use ptrace, whether the
	 * rescue was done and begun, the stack it runs on. */
	void (*crash_detach)(void);
	pid_t tracer_tid;
	volatile sig_atomic_t rescued, once;
	char altstack[64 * 1024];
} rescue = { .watchdog_pipe = { [0 ... RESCUE_SLOTS - 1] = -1 } };

int rescue_init(void)
{
	void *p = mmap(NULL, RESCUE_SLOTS * sizeof *rescue.tables, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	rescue.tables = p;
	for (int i = 0; i < RESCUE_SLOTS; i++)
		rescue.tables[i].mem_fd = -1;
	return 0;
}

int rescue_slot_new(void)
{
	for (int i = 0; rescue.tables && i < RESCUE_SLOTS; i++)
		if (!rescue.slot_used[i]) {
			rescue.slot_used[i] = true;
			rescue.tables[i].mem_fd = -1;
			return i;
		}
	return -1;
}

/* The table of slot; NULL for none. */
static struct rescue_table *table(int slot)
{
	return rescue.tables && slot >= 0 && slot < RESCUE_SLOTS ? &rescue.tables[slot] : NULL;
}

void rescue_slot_free(int slot)
{
	struct rescue_table *tab = table(slot);
	if (!tab)
		return;
	rescue_watchdog_stop(slot);
	rescue_forget_all(slot);
	tab->mem_fd = -1;
	rescue.slot_used[slot] = false;
}

void rescue_set_target(int slot, int mem_fd, uint64_t trampoline)
{
	struct rescue_table *tab = table(slot);
	if (!tab)
		return;
	tab->mem_fd = mem_fd;
	tab->trampoline = trampoline;
}

void rescue_set_lookup(int slot, uint64_t code, uint64_t lookup_table, uint32_t entries)
{
	struct rescue_table *tab = table(slot);
	if (!tab)
		return;
	tab->lookup_table = lookup_table;
	tab->lookup_entries = entries;
	tab->lookup = code;
}

void rescue_code_armed(int slot, uint64_t addr, uint8_t orig)
{
	struct rescue_table *tab = table(slot);
	if (!tab)
		return;
	int free_at = -1;
	for (int i = 0; i < CODE_MAX; i++) {
		if (tab->code[i].addr == addr) {
			__atomic_store_n(&tab->code[i].orig, orig, __ATOMIC_RELEASE);	/* a jump's next step */
			return;
		}
		if (!tab->code[i].addr && free_at < 0)
			free_at = i;
	}
	if (free_at >= 0) {
		tab->code[free_at].orig = orig;
		__atomic_store_n(&tab->code[free_at].addr, addr, __ATOMIC_RELEASE);
	}
}

void rescue_set_flag(int slot, uint64_t addr)
{
	struct rescue_table *tab = table(slot);
	if (tab)
		tab->flag = addr;
}

void rescue_code_disarmed(int slot, uint64_t addr)
{
	struct rescue_table *tab = table(slot);
	for (int i = 0; tab && i < CODE_MAX; i++)
		if (tab->code[i].addr == addr)
			__atomic_store_n(&tab->code[i].addr, 0, __ATOMIC_RELEASE);
}

void rescue_forget_all(int slot)
{
	struct rescue_table *tab = table(slot);
	if (!tab)
		return;
	memset(tab->code, 0, sizeof tab->code);
	tab->flag = 0;
	tab->lookup = 0;
	memset(tab->frame, 0, sizeof tab->frame);
}

int rescue_frame(int slot, uint64_t stack_slot, uint64_t ret)
{
	struct rescue_table *tab = table(slot);
	if (!tab)
		return -1;
	/* An entry of the same stack slot is stale (its call left by longjmp: a slot is reused
	 * only once its call's frame is gone): the lookup must find this one. */
	for (uint32_t i = 0; i < FRAME_MAX; i++)
		if (tab->frame[i].slot == stack_slot)
			__atomic_store_n(&tab->frame[i].slot, 0, __ATOMIC_RELEASE);
	for (uint32_t n = 0; n < FRAME_MAX; n++) {
		uint32_t i = (tab->frame_hint + n) % FRAME_MAX;
		if (tab->frame[i].slot)
			continue;
		tab->frame[i].ret = ret;
		__atomic_store_n(&tab->frame[i].slot, stack_slot, __ATOMIC_RELEASE);
		tab->frame_hint = i + 1;
		return (int)i;
	}
	return -1;
}

void rescue_frame_done(int slot, int handle)
{
	struct rescue_table *tab = table(slot);
	if (tab && handle >= 0 && handle < FRAME_MAX) {
		__atomic_store_n(&tab->frame[handle].slot, 0, __ATOMIC_RELEASE);
		if ((uint32_t)handle < tab->frame_hint)
			tab->frame_hint = (uint32_t)handle;
	}
}

static int restore_table(struct rescue_table *tab)
{
	int failed = 0;
	if (!tab || tab->mem_fd < 0)
		return 0;
	static const uint64_t zero;
	if (tab->flag && pwrite(tab->mem_fd, &zero, 8, (off_t)tab->flag) != 8)
		failed++;
	for (int i = 0; i < CODE_MAX; i++) {
		uint64_t a = tab->code[i].addr;
		if (a && pwrite(tab->mem_fd, &tab->code[i].orig, 1, (off_t)a) != 1)
			failed++;
	}
	/* Return addresses swapped for the trampoline are not written back into the stacks: the
	 * threads run, and a slot read as holding the trampoline may be popped and reused by
	 * another call before the write lands. Each returning thread finds its own instead: the
	 * table of (slot, return address) goes into the program, then the trampoline's int3 becomes
	 * a no-op before the jump to the lookup, which matches the slot the thread's ret just
	 * popped (xol.h). */
	uint32_t n = 0;
	for (int i = 0; i < FRAME_MAX && tab->lookup && n < tab->lookup_entries; i++) {
		uint64_t pair[2] = { tab->frame[i].slot, tab->frame[i].ret };
		if (!pair[0])
			continue;
		if (pwrite(tab->mem_fd, pair, sizeof pair, (off_t)(tab->lookup_table + 16u * n)) == sizeof pair)
			n++;
		else
			failed++;
	}
	/* Then the int3 becomes a no-op, one byte written whole: every return falls through to the
	 * jump to the lookup that follows it (xol.c). */
	static const uint8_t nop = ARCH_NOP;
	if (n && pwrite(tab->mem_fd, &nop, 1, (off_t)tab->trampoline) != 1)
		failed++;
	return failed;
}

int rescue_restore_all(void)
{
	int failed = 0;
	for (int i = 0; rescue.tables && i < RESCUE_SLOTS; i++)
		if (rescue.slot_used[i])
			failed += restore_table(&rescue.tables[i]);
	return failed;
}

/* ---- the watchdog ------------------------------------------------------------------------ */

/* Waits for gputop's goodbye (a byte) or its end (EOF), looking every RESCUE_CYCLE_LOOK_MS
 * for gputop held by a tracer it traces (rescue_cycle.h), as the guard does: the program's code
 * is then put back at once, while gputop still holds it, and two looks later (every watchdog
 * has put its own back) gputop is ended, by this watchdog or the guard, whichever comes first. */
static void watchdog_main(int pipe_rd, pid_t traced, pid_t gputop, struct rescue_table *tab)
{
	char byte;
	/* Not a child anyone waits for: be invisible to terminal signals meant for gputop. */
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	struct pollfd pf = { .fd = pipe_rd, .events = POLLIN };
	bool put_back = false;
	int looks_since = 0;
	for (;;) {
		int r = poll(&pf, 1, RESCUE_CYCLE_LOOK_MS);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		if (r != 0)
			continue;
		if (!put_back && rescue_cycle_look(gputop)) {
			put_back = true;
			restore_table(tab);	/* no int3 of gputop's is met once it is dead */
		} else if (put_back && ++looks_since == 2) {
			rescue_cycle_end(gputop);
		}
	}
	ssize_t n;
	while ((n = read(pipe_rd, &byte, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(0);	/* gputop said goodbye: it detached cleanly */
	/* EOF without goodbye: gputop is gone. Put the program back, if it is still there. */
	if (kill(traced, 0) == 0 || errno == EPERM) {
		int failed = restore_table(tab);
		const char msg[] = "gputop: watchdog: gputop died; restored the traced program's code\n";
		if ((!put_back && write(STDERR_FILENO, msg, sizeof msg - 1) < 0) || failed)
			_exit(1);
	}
	_exit(0);
}

int rescue_watchdog_start(int slot, pid_t traced)
{
	int fds[2];
	struct rescue_table *tab = table(slot);
	if (!tab)
		return -ENOENT;
	if (rescue.watchdog_pipe[slot] >= 0)
		return 0;	/* this process has one */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid_t gputop = getpid();
	pid_t p = fork();
	if (p < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (p == 0) {
		/* Only this slot's pipe stays open here: another watchdog's end of gputop's pipes
		 * must close when gputop dies, not live on in this one. */
		for (int i = 0; i < RESCUE_SLOTS; i++)
			if (rescue.watchdog_pipe[i] >= 0)
				close(rescue.watchdog_pipe[i]);
		rescue_cycle_forked();
		close(fds[1]);
		watchdog_main(fds[0], traced, gputop, tab);
	}
	close(fds[0]);
	rescue.watchdog_pipe[slot] = fds[1];
	rescue.watchdog_pid[slot] = p;
	return 0;
}

bool rescue_is_watchdog(pid_t pid)
{
	if (rescue_cycle_is_guard(pid))
		return true;
	for (int i = 0; i < RESCUE_SLOTS; i++)
		if (rescue.watchdog_pipe[i] >= 0 && rescue.watchdog_pid[i] == pid)
			return true;
	return false;
}

void rescue_watchdog_stop(int slot)
{
	if (!table(slot) || rescue.watchdog_pipe[slot] < 0)
		return;
	char bye = 1;
	if (write(rescue.watchdog_pipe[slot], &bye, 1) < 0)
		log_debug("watchdog: %s", strerror(errno));
	close(rescue.watchdog_pipe[slot]);
	rescue.watchdog_pipe[slot] = -1;
	waitpid(rescue.watchdog_pid[slot], NULL, 0);
}

/* ---- the crash handler -------------------------------------------------------------------- */

/* ptrace belongs to the thread that attached (the tracer thread). A crash in another thread
 * (the UI's) hands the rescue to it with this signal, and waits for it to be done. */
#define SIG_RESCUE (SIGRTMIN + 1)

static void rescue_now(void)
{
	rescue_restore_all();
	if (rescue.crash_detach)
		rescue.crash_detach();
	const char msg[] = "gputop: crashed; restored the traced program's code and detached\n";
	ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
	for (int i = 0; i < RESCUE_SLOTS; i++)
		if (rescue.watchdog_pipe[i] >= 0) {	/* nothing left for the watchdogs to do */
			char bye = 1;
			n = write(rescue.watchdog_pipe[i], &bye, 1);
		}
	(void)n;
	rescue.rescued = 1;
}

/* In the tracer thread, at another thread's crash: rescue, then stay here until the crashing
 * thread ends the process (nothing else may touch the program now). */
static void on_rescue_request(int sig)
{
	(void)sig;
	rescue_now();
	for (;;)
		pause();
}

static void on_crash(int sig)
{
	if (!rescue.once) {
		rescue.once = 1;
		if (rescue.tracer_tid && (pid_t)syscall(SYS_gettid) != rescue.tracer_tid &&
		    syscall(SYS_tgkill, getpid(), rescue.tracer_tid, SIG_RESCUE) == 0) {
			/* at most 3 s: the tracer thread may be unable to run the handler */
			struct timespec nap = { 0, 1000000 };
			for (int i = 0; i < 3000 && !rescue.rescued; i++)
				nanosleep(&nap, NULL);
		}
		if (!rescue.rescued)
			rescue_now();	/* this is the tracer thread, or it did not answer */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void rescue_install_crash_handler(void (*detach)(void))
{
	stack_t ss = { .ss_sp = rescue.altstack, .ss_size = sizeof rescue.altstack };
	struct sigaction sa = { 0 };
	rescue.crash_detach = detach;
	rescue.tracer_tid = (pid_t)syscall(SYS_gettid);	/* called by the tracer thread */
	sa.sa_handler = on_rescue_request;
	sigfillset(&sa.sa_mask);
	sigaction(SIG_RESCUE, &sa, NULL);
	sa = (struct sigaction){ 0 };
	sigaltstack(&ss, NULL);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	sigfillset(&sa.sa_mask);
	const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}
