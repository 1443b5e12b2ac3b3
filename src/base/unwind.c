/* unwind.c — native call stacks with libdw's unwinder (unwind.h). libdw is given its own
 * thread callbacks (dwfl_attach_state) rather than dwfl_linux_proc_attach: the registers are
 * the ones gputop already holds (or rebuilt, at a stub's trap), and memory is read with
 * process_vm_readv a page at a time instead of a PTRACE_PEEKDATA per word. No ptrace request
 * is made here; the thread must be stopped while it runs. */
#define _GNU_SOURCE
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <string.h>

#include "memory.h"
#include "symbols.h"
#include "tracee.h"

enum { PAGE = 4096, CACHED_PAGES = 16 };

/* One unwind in progress: its thread, registers and the pages of its memory read so far. */
struct unwind_req {
	pid_t tid;
	const arch_regs_t *regs;
	const struct unwind_copy *copy;	/* NULL: the thread's memory, live */
	uint64_t *pcs;
	int max, n;
	bool truncated;
	int n_pages;
	uint64_t page_addr[CACHED_PAGES];
	unsigned char page[CACHED_PAGES][PAGE];
};

static struct unwind_req req;	/* scratch, off the stack; the tracer thread only */

static pid_t no_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0;	/* gputop asks for one thread at a time, never for all */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = &req;
	return tid == req.tid;
}

static const unsigned char *page_of(uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	for (int i = 0; i < req.n_pages; i++)
		if (req.page_addr[i] == base)
			return req.page[i];
	int i = req.n_pages < CACHED_PAGES ? req.n_pages++ : (int)((base / PAGE) % CACHED_PAGES);
	req.page_addr[i] = 0;
	if (mem_read(req.tid, base, req.page[i], PAGE) < 0)
		return NULL;
	req.page_addr[i] = base;
	return req.page[i];
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t off = addr & (PAGE - 1);
	if (req.copy) {
		if (addr < req.copy->base || addr - req.copy->base + sizeof *result > req.copy->len)
			return false;
		memcpy(result, req.copy->bytes + (addr - req.copy->base), sizeof *result);
		return true;
	}
	if (off + sizeof *result <= PAGE) {
		const unsigned char *p = page_of(addr);
		if (!p)
			return false;
		memcpy(result, p + off, sizeof *result);
		return true;
	}
	return mem_read(req.tid, addr, result, sizeof *result) == 0;	/* across two pages */
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	uint64_t regs[ARCH_DWARF_REGS];
	arch_dwarf_regs(req.regs, regs);
	if (!dwfl_thread_state_registers(thread, 0, ARCH_DWARF_REGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, arch_pc(req.regs));
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = no_next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (req.n == req.max) {
		req.truncated = true;
		return DWARF_CB_ABORT;
	}
	req.pcs[req.n++] = activation ? pc : pc - 1;
	return DWARF_CB_OK;
}

int unwind_stack(const struct tracee *p, pid_t tid, const arch_regs_t *regs, uint64_t *pcs, int max,
		 bool *truncated)
{
	return unwind_stack_copy(p, tid, regs, NULL, pcs, max, truncated);
}

int unwind_stack_copy(const struct tracee *p, pid_t tid, const arch_regs_t *regs, const struct unwind_copy *copy,
		      uint64_t *pcs, int max, bool *truncated)
{
	Dwfl *dwfl = sym_dwfl(p);
	*truncated = false;
	if (!dwfl || max <= 0)
		return 0;
	/* Once per libdw session (a new one after exec): the process's threads are ours. */
	if (dwfl_pid(dwfl) <= 0 && !dwfl_attach_state(dwfl, NULL, p->pid, &thread_callbacks, NULL))
		return 0;
	req.tid = tid;
	req.regs = regs;
	req.copy = copy;
	req.pcs = pcs;
	req.max = max;
	req.n = req.n_pages = 0;
	req.truncated = false;
	/* It ends with an error where the unwinder finds no way further (the outermost frame,
	 * or code it cannot describe): the frames found until then stand. */
	dwfl_getthread_frames(dwfl, tid, on_frame, NULL);
	*truncated = req.truncated;
	return req.n;
}
