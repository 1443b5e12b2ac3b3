/* follow.c — the program's descendants, followed as strace -f does. A forked child is cleaned
 * of the probes it inherited (children.c) and kept as a process of its own, only watched: its
 * fork, exec and exit stops, nothing else. It is probed (its image set up, as at an attach)
 * once CUDA is in it: at an exec of an executable that links CUDA (before its first
 * instruction, so that every call is seen), or when a CUDA library shows up in its mappings
 * (a dlopen, or one its parent had loaded before the fork), looked at every housekeeping tick.
 * A descendant that never loads CUDA costs its fork, exec and exit stops, and one read of its
 * executable's dynamic section and of its maps per tick. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "probes.h"
#include "procfs.h"
#include "rescue.h"
#include "threads.h"


static bool names_cuda(const char *s)
{
	return strstr(s, "libcudart.so") || strstr(s, "libcuda.so") || strstr(s, "libnccl.so");
}

/* The executable needs a CUDA library (DT_NEEDED) or holds the runtime itself (nvcc links
 * libcudart_static by default: cudaMalloc is defined in it). */
static bool executable_links_cuda(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool cuda = false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (Elf_Scn *scn = NULL; e && !cuda && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *d = gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
		if (!d || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_DYNAMIC) {
			for (size_t i = 0; i < n && !cuda; i++) {
				GElf_Dyn dyn;
				const char *name;
				if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
				    (name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
					cuda = names_cuda(name);
			}
		} else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			for (size_t i = 0; i < n && !cuda; i++) {
				GElf_Sym sym;
				const char *name;
				if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
				    GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
				    (name = elf_strptr(e, sh.sh_link, sym.st_name)))
					cuda = strcmp(name, "cudaMalloc") == 0 || strcmp(name, "cuInit") == 0;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return cuda;
}

static bool maps_have_cuda(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	bool cuda = false;
	if (!f)
		return false;
	while (!cuda && fgets(line, sizeof line, f))
		cuda = names_cuda(line);
	fclose(f);
	return cuda;
}

/* A new process of the program's (a forked child, reported by its parent's fork event or by its
 * own first stop, whichever came first): cleaned with its parent's probes in mind, then kept,
 * watched. Returns its thread, its process in *child_p (child_p may be NULL); NULL when it is
 * let go (not followed, or gputop keeps as many processes as it can). */
struct thread *follow_fork(struct tracee *parent, pid_t child, struct tracee **child_p)
{
	bool parent_cuda = false;
	if (parent) {
		tracer_clean_child(parent, child);
		parent_cuda = parent->set_up && probes_cuda_seen(parent);
	}
	struct tracee *p;
	if (!config.follow || tracee_open(child, false, &p) < 0) {
		if (config.follow)
			log_warn("not following process %d: gputop traces %d processes already", child,
				 RESCUE_SLOTS);
		return NULL;
	}
	p->followed = true;
	/* A fork of a process with CUDA loaded (multiprocessing, a worker pool) may call it at
	 * once: probed at its first stop, before it runs a single instruction of its own. */
	p->probe_at_first_stop = parent_cuda;
	struct thread *t = threads_add(p, child);
	if (!t) {
		tracee_close(p);
		return NULL;
	}
	log_info("following %d, a child of %d", child, parent ? parent->pid : 0);
	if (child_p)
		*child_p = p;
	return t;
}

/* A vfork child (a guest in host's table) ran exec: it is a process of its own now, in *p. */
struct thread *follow_guest_exec(struct tracee *host, struct thread *guest, struct tracee **p)
{
	pid_t tid = guest->tid;
	threads_remove(host, tid);
	if (!config.follow || tracee_open(tid, false, p) < 0) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return NULL;
	}
	(*p)->followed = true;
	struct thread *t = threads_add(*p, tid);
	if (t)
		t->state = TS_STOPPED;
	log_info("following %d, a child of %d", tid, host->pid);
	return t;
}

/* At an exec of a followed process: probe it now when its executable links CUDA. */
bool follow_wants_setup_at_exec(struct tracee *p)
{
	p->exec_checked = true;
	return executable_links_cuda(p->pid);
}

/* A stop from a tid we do not know: a new thread of ours (its clone event may come later) or
 * a new process. Returns the thread to go on with, its process in *p, or NULL when handled
 * here. */
struct thread *tracer_adopt(const struct trace_stop *e, struct tracee **p)
{
	pid_t tid = e->tid, tgid = (pid_t)proc_status_field(tid, "Tgid:");
	struct tracee *owner = tracee_of_pid(tgid);
	if (owner) {
		/* Its first stop came before its creator's clone event: while every thread is
		 * being stopped it stays stopped, else it would run on and never be stopped. */
		struct thread *t = threads_add(owner, tid);
		if (t && owner->stopping_world)
			t->want_stop = true;
		*p = owner;
		return t;
	}
	if (event_is_end(e) || tgid <= 0)
		return NULL;
	uint32_t it = 0;
	for (struct tracee *q; (q = tracee_next(&it));) {
		if (q->pid > 0 && tracer_shares_memory(q, tid)) {
			/* vfork/posix_spawn: it runs in our memory, over our breakpoints, until it
			 * execs; step it through them without counting. */
			struct thread *t = threads_add(q, tid);
			if (t) {
				t->guest = true;
				*p = q;
			}
			return t;
		}
	}
	/* A forked child whose first stop came before its parent's fork event. */
	struct tracee *parent = tracee_of_pid((pid_t)proc_status_field(tid, "PPid:"));
	struct thread *t = follow_fork(parent, tid, p);
	if (t)
		return t;
	tracer_release_child(parent ? parent : tracer.root, tid);	/* no parent: it was reparented */
	return NULL;
}

/* Brings every thread of a watched process to a stop and probes it, as an attach does. A
 * thread that does not stop within LATE_STOP_NS (in an uninterruptible sleep; the parent of a
 * vfork whose child is stopped too) makes it let go of the others and try again a second
 * later; LATE_STOP_TRIES times, then the process is left unprobed, said. */
#define LATE_STOP_NS 1000000000ull
#define LATE_STOP_TRIES 3
static void setup_late(struct tracee *p, uint64_t now)
{
	if (now < p->late_retry_ns)
		return;
	probes_prepare(p);	/* the slow part, while it runs */
	int err = tracee_stop_world_within(p, LATE_STOP_NS);
	if (err == -ETIMEDOUT) {
		tracee_release_world(p);
		p->late_retry_ns = now_ns() + LATE_STOP_NS;
		if (++p->late_tries < LATE_STOP_TRIES) {
			log_info("process %d: a thread did not stop within 1 s; its threads let go, tried again "
				 "in 1 s", p->pid);
			return;
		}
		p->set_up = true;	/* not tried again */
		log_warn("process %d is not traced: a thread of it did not stop within 1 s, %d times (an "
			 "uninterruptible sleep?)", p->pid, LATE_STOP_TRIES);
		return;
	}
	if (err < 0) {
		tracee_release_world(p);
		log_warn("process %d is not traced: it could not be stopped to be probed", p->pid);
	} else if (tracer_start_followed(p, -1) < 0) {
		log_warn("process %d is not traced: it could not be probed", p->pid);
	}
}

/* At a stop of a followed process not probed yet: probes it now if it is the first stop of a
 * fork of a CUDA process (then it is let run, and true returned). */
bool follow_first_stop(struct tracee *p, struct thread *t)
{
	if (!p->probe_at_first_stop || p->set_up || t->guest)
		return false;
	p->probe_at_first_stop = false;
	p->stopping_world = true;
	t->want_stop = true;
	if (tracer_start_followed(p, -1) < 0)
		log_warn("process %d is not traced: it could not be probed", p->pid);
	return true;
}

/* Every tick: the watched processes in which CUDA appeared are probed. */
void follow_tick(void)
{
	uint32_t it = 0;
	for (struct tracee *p; (p = tracee_next(&it));) {
		if (!p->followed || p->set_up)
			continue;
		if (threads_count(p) == 0)
			continue;
		bool cuda = maps_have_cuda(p->pid);
		if (!cuda && !p->exec_checked) {
			p->exec_checked = true;	/* a forked child's executable is its parent's */
			cuda = executable_links_cuda(p->pid);
		}
		if (cuda)
			setup_late(p, now_ns());
	}
}
