/* seccomp.c — may gputop make the program run a feature's system calls (seccomp.h, the table in
 * seccomp_calls.c)? What gputop can show, thread by thread:
 *   - the thread runs under no filter (Seccomp: 0 in /proc/TID/status): allowed;
 *   - strict mode (Seccomp: 1): only read, write, exit and sigreturn run: never;
 *   - filters gputop can read (PTRACE_SECCOMP_GET_FILTER: gputop has CAP_SYS_ADMIN and runs
 *     under no filter itself; the thread is held): every filter of the thread is run on every
 *     call of the feature (seccomp_eval.c), as the kernel would; allowed when every answer
 *     harms nothing (SECCOMP_RET_ALLOW or SECCOMP_RET_LOG; an error answer where the call's
 *     failure is handled, seccomp_calls.h). Anything else (kill, trap, a supervisor's answer)
 *     is refused;
 *   - filters gputop cannot read: allowed only when the thread runs under exactly as many
 *     filters as gputop itself and gputop's own filters let a child of gputop do what the
 *     feature does (seccomp_own.c). That is a container's filter, which every process in it
 *     inherits, and in launch mode the program's filters until it installs one of its own:
 *     filters are only ever added, so the same count means the same filters there. In attach
 *     mode, two different filters of the same depth cannot be told apart without reading them;
 *     a program that installs a filter of its own always has one more than gputop.
 * --trust-seccomp goes on where gputop cannot show it, never where a filter is shown to refuse.
 * This file never writes into the program: it reads /proc and asks ptrace for the filters. */
#define _GNU_SOURCE
#include "seccomp.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "exit_codes.h"
#include "log.h"
#include "seccomp_eval.h"

#define MAX_FILTERS 64

struct filter_set {
	int n;
	struct sock_filter *prog[MAX_FILTERS];	/* [0] is the newest, as ptrace numbers them */
	size_t len[MAX_FILTERS];
};

static struct {
	bool trust, refused, trust_said;
	int inject_warnings;
} seccomp;

void seccomp_set_trust(bool t)
{
	seccomp.trust = t;
}

bool seccomp_trusted(void)
{
	return seccomp.trust;
}

bool seccomp_refused(void)
{
	return seccomp.refused;
}

/* ---- the filters themselves ------------------------------------------------------------------ */

static void filters_free(struct filter_set *fs)
{
	for (int i = 0; i < fs->n; i++)
		free(fs->prog[i]);
	fs->n = 0;
}

/* Every filter of the held thread tid, newest first. 0 or -errno (EACCES: not permitted;
 * ESRCH: not held). */
static int filters_fetch(pid_t tid, struct filter_set *fs)
{
	fs->n = 0;
	for (int i = 0; i < MAX_FILTERS; i++) {
		long len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)(long)i, NULL);
		if (len < 0 && errno == ENOENT && i > 0)
			return 0;
		if (len <= 0) {
			int err = len < 0 ? -errno : -EINVAL;
			filters_free(fs);
			return err;
		}
		struct sock_filter *prog = calloc((size_t)len, sizeof *prog);
		if (!prog || ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)(long)i, prog) != len) {
			free(prog);
			filters_free(fs);
			return -ENOMEM;
		}
		fs->prog[i] = prog;
		fs->len[i] = (size_t)len;
		fs->n = i + 1;
	}
	filters_free(fs);
	return -E2BIG;
}

/* What the filters answer to the call, as the kernel combines them; *which gets the filter
 * that decided (0 = newest). A filter gputop cannot run answers as a kill. */
static uint32_t filters_run(const struct filter_set *fs, long nr, const uint64_t args[6], uint64_t ip,
			    int *which, bool *unreadable)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = arch_seccomp_arch, .instruction_pointer = ip };
	memcpy(d.args, args, sizeof d.args);
	uint32_t answer = SECCOMP_RET_ALLOW;
	*which = -1;
	*unreadable = false;
	for (int i = 0; i < fs->n; i++) {	/* newest first, as the kernel: the first of equals wins */
		uint32_t r;
		if (seccomp_eval_run(fs->prog[i], fs->len[i], &d, &r) < 0) {
			r = SECCOMP_RET_KILL_PROCESS;
			*unreadable = true;
		}
		if (*which < 0 || seccomp_eval_combine(answer, r) != answer) {
			answer = seccomp_eval_combine(answer, r);
			*which = i;
		}
	}
	return answer;
}

/* "mmap(PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS)", "gettid", for messages. */
static const char *describe_call(long nr, const uint64_t args[6], char *buf, size_t size)
{
	if (nr == SYS_mmap && (args[3] & MAP_ANONYMOUS) && args[4] == (uint64_t)-1) {
		uint64_t prot = args[2], flags = args[3];
		snprintf(buf, size, "mmap(PROT_READ%s%s, MAP_PRIVATE|MAP_ANONYMOUS%s)",
			 prot & PROT_WRITE ? "|PROT_WRITE" : "", prot & PROT_EXEC ? "|PROT_EXEC" : "",
			 flags & MAP_FIXED_NOREPLACE ? "|MAP_FIXED_NOREPLACE" : "");
		return buf;
	}
	const char *name = seccomp_call_name(nr, buf, size);
	if (name != buf)
		snprintf(buf, size, "%s", name);
	return buf;
}

/* ---- verdicts ----------------------------------------------------------------------------------- */

/* A filter gputop cannot read: the same as gputop's own, and those let a child do it? */
static enum seccomp_verdict judge_unread(const struct seccomp_state *s, enum seccomp_feature f)
{
	const struct seccomp_state *own = seccomp_own_state();
	if (own->mode == 2 && s->filters >= 0 && s->filters == own->filters && seccomp_own_allows(f))
		return SECCOMP_ALLOWED;
	return SECCOMP_UNKNOWN;
}

/* The held thread tid's filters run on calls[0..n): SECCOMP_UNKNOWN when they cannot be read;
 * on a refusal, *why says which filter answered what to which call. */
static enum seccomp_verdict judge_read(pid_t tid, const struct seccomp_call *calls, size_t n, uint64_t ip,
				       struct seccomp_refusal *why)
{
	struct filter_set fs;
	int err = filters_fetch(tid, &fs);
	if (err < 0) {
		log_debug("cannot read the seccomp filters of %d: %s", tid, strerror(-err));
		return SECCOMP_UNKNOWN;
	}
	enum seccomp_verdict v = SECCOMP_ALLOWED;
	for (size_t i = 0; i < n && v == SECCOMP_ALLOWED; i++) {
		int which;
		bool unreadable;
		uint32_t answer = filters_run(&fs, calls[i].nr, calls[i].args, ip, &which, &unreadable);
		if (seccomp_call_harmless(&calls[i], answer))
			continue;
		v = SECCOMP_REFUSED;
		*why = (struct seccomp_refusal){ .tid = tid, .filter = which + 1, .filters = fs.n,
						 .insns = fs.len[which], .answer = answer,
						 .unreadable = unreadable, .nr = calls[i].nr };
		memcpy(why->args, calls[i].args, sizeof why->args);
	}
	filters_free(&fs);
	return v;
}

enum seccomp_verdict seccomp_feature_verdict(pid_t tid, enum seccomp_feature f,
					     const struct seccomp_state *known, struct seccomp_refusal *why)
{
	const struct seccomp_feature_calls *fc = seccomp_feature_calls(f);
	struct seccomp_state s;
	*why = (struct seccomp_refusal){ .tid = tid };
	if (known)
		s = *known;
	else if (seccomp_thread_state(tid, &s) < 0)
		return SECCOMP_ALLOWED;	/* gone: nothing to run the calls */
	why->filters = s.filters;
	if (s.mode <= 0 || s.filters == 0)
		return SECCOMP_ALLOWED;
	if (s.mode == 1) {
		why->strict = true;
		return SECCOMP_REFUSED;
	}
	enum seccomp_verdict v = seccomp_own_can_read_filters()
		? judge_read(tid, fc->calls, fc->n, 0, why) : SECCOMP_UNKNOWN;
	return v == SECCOMP_UNKNOWN ? judge_unread(&s, f) : v;
}

void seccomp_refusal_describe(const struct seccomp_refusal *r, char *buf, size_t size)
{
	char call[96];
	if (r->strict) {
		snprintf(buf, size, "thread %d runs in seccomp strict mode (Seccomp: 1), where any system "
			 "call but read, write, exit and sigreturn kills it", r->tid);
	} else if (!r->filter) {
		const struct seccomp_state *own = seccomp_own_state();
		snprintf(buf, size, "thread %d runs under a seccomp filter gputop cannot read (Seccomp_filters: %d; "
			 "gputop runs under %d)", r->tid, r->filters, own->mode == 2 ? own->filters : 0);
	} else {
		snprintf(buf, size, "its seccomp filter %d of %d (newest first, %zu BPF instructions, thread %d) "
			 "answers %s%s to %s", r->filter, r->filters, r->insns, r->tid,
			 seccomp_eval_action_name(r->answer), r->unreadable ? " (a filter gputop cannot evaluate)" : "",
			 describe_call(r->nr, r->args, call, sizeof call));
	}
}

/* ---- the checks of an attach and of each injected call ------------------------------------------ */

/* At attach (call NULL): an error and what to do. Later: a warning naming the call not made. */
static void say_unknown(pid_t pid, pid_t tid, const struct seccomp_state *s, const char *call)
{
	const struct seccomp_state *own = seccomp_own_state();
	char own_desc[192];
	bool own_ok = own->mode == 2 && seccomp_own_allows(SECCOMP_INJECT);
	if (own->mode == 2)
		snprintf(own_desc, sizeof own_desc, "gputop runs under %d filter%s%s%s", own->filters,
			 own->filters == 1 ? "" : "s", own_ok ? "" : ", and ",
			 own_ok ? "" : seccomp_own_why(SECCOMP_INJECT));
	else
		snprintf(own_desc, sizeof own_desc, "gputop runs under none");
	if (call) {
		log_warn("not making thread %d run %s: it runs under a seccomp filter gputop cannot read "
			 "(Seccomp_filters: %d; %s)", tid, call, s->filters, own_desc);
		return;
	}
	log_error("cannot trace %d: thread %d runs under a seccomp filter gputop cannot read (Seccomp: 2, "
		  "Seccomp_filters: %d; %s): gputop cannot show that it allows the mmap and munmap calls "
		  "gputop must make the program run", pid, tid, s->filters, own_desc);
	log_hint("reading a filter needs CAP_SYS_ADMIN and gputop itself under no filter; "
		 "--trust-seccomp goes on anyway (a filter that forbids executable mappings then "
		 "kills the program with SIGSYS). Nothing was changed in %d: it runs on", pid);
}

static void say_trusted(pid_t pid)
{
	if (seccomp.trust_said)
		return;
	seccomp.trust_said = true;
	log_warn("--trust-seccomp: making %d run mmap and munmap under a seccomp filter gputop cannot read",
		 pid);
}

static int refuse(void)
{
	seccomp.refused = true;
	return EXIT_SECCOMP;
}

int seccomp_check_target(pid_t pid)
{
	const struct seccomp_state *own = seccomp_own_state();
	if (pid == 0) {
		/* Launch mode: the program starts under gputop's own filters. */
		if (own->mode == 2 && !seccomp_own_allows(SECCOMP_INJECT)) {
			log_error("cannot trace a program here: gputop itself runs under a seccomp filter "
				  "(Seccomp_filters: %d) that forbids the calls gputop would make the program "
				  "run (%s), and the program would inherit it; it was not started",
				  own->filters, seccomp_own_why(SECCOMP_INJECT));
			return refuse();
		}
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;	/* gone: the attach says so */
	int code = 0;
	for (struct dirent *e; !code && (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct seccomp_state s;
		if (tid <= 0 || seccomp_thread_state(tid, &s) < 0 || s.mode <= 0)
			continue;
		if (s.mode == 1) {
			log_error("cannot trace %d: thread %d runs in seccomp strict mode (Seccomp: 1), where "
				  "any system call but read, write, exit and sigreturn kills it", pid, tid);
			log_hint("nothing was changed in %d: it runs on", pid);
			code = refuse();
		} else if (seccomp_own_can_read_filters()) {
			continue;	/* read and run once it is held: seccomp_check_stopped */
		} else if (judge_unread(&s, SECCOMP_INJECT) == SECCOMP_UNKNOWN) {
			if (seccomp.trust) {
				say_trusted(pid);
				continue;
			}
			say_unknown(pid, tid, &s, NULL);
			code = refuse();
		}
	}
	closedir(d);
	return code;
}

int seccomp_check_stopped(pid_t pid)
{
	if (!seccomp_own_can_read_filters())
		return 0;	/* decided by seccomp_check_target */
	const struct seccomp_feature_calls *inject = seccomp_feature_calls(SECCOMP_INJECT);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int code = 0;
	for (struct dirent *e; !code && (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct seccomp_state s;
		struct seccomp_refusal why;
		if (tid <= 0 || seccomp_thread_state(tid, &s) < 0 || s.mode != 2)
			continue;
		/* The instruction pointer is not known yet: 0 here, the real one at each call. */
		enum seccomp_verdict v = judge_read(tid, inject->calls, inject->n, 0, &why);
		if (v == SECCOMP_UNKNOWN)
			v = judge_unread(&s, SECCOMP_INJECT);
		if (v == SECCOMP_REFUSED) {
			char text[320];
			seccomp_refusal_describe(&why, text, sizeof text);
			log_error("cannot trace %d: %s, a call gputop must make it run", pid, text);
			log_hint("gputop never makes a program run a call its filter refuses. Nothing was "
				 "changed in %d: it runs on", pid);
			code = refuse();
		} else if (v == SECCOMP_UNKNOWN && seccomp.trust) {
			say_trusted(pid);
		} else if (v == SECCOMP_UNKNOWN) {
			say_unknown(pid, tid, &s, NULL);
			code = refuse();
		}
	}
	closedir(d);
	return code;
}

int seccomp_check_inject(pid_t tid, enum seccomp_feature f, long nr, const uint64_t args[6],
			 uint64_t gadget_addr)
{
	struct seccomp_state s;
	if (seccomp_thread_state(tid, &s) < 0 || s.mode <= 0)
		return 0;	/* no filter (or no thread: the call fails by itself) */
	bool say = seccomp.inject_warnings < 3;
	char desc[96];
	enum seccomp_verdict v;
	if (s.mode == 1) {
		v = SECCOMP_REFUSED;
		if (say)
			log_warn("not making %d run a system call: it runs in seccomp strict mode", tid);
	} else {
		struct seccomp_call call = { .nr = nr };
		struct seccomp_refusal why;
		memcpy(call.args, args, sizeof call.args);
		v = seccomp_own_can_read_filters() ? judge_read(tid, &call, 1, arch_syscall_ip(gadget_addr), &why)
						   : SECCOMP_UNKNOWN;
		if (v == SECCOMP_REFUSED && say)
			log_warn("not making thread %d run %s: its seccomp filter %d of %d (%zu BPF "
				 "instructions) answers %s%s", tid, describe_call(nr, args, desc, sizeof desc),
				 why.filter, why.filters, why.insns, seccomp_eval_action_name(why.answer),
				 why.unreadable ? " (a filter gputop cannot evaluate)" : "");
		if (v == SECCOMP_UNKNOWN)
			v = judge_unread(&s, f);
		if (v == SECCOMP_UNKNOWN && seccomp.trust) {
			say_trusted(tid);
			return 0;
		}
		if (v == SECCOMP_UNKNOWN && say)
			say_unknown(tid, tid, &s, describe_call(nr, args, desc, sizeof desc));
	}
	if (v == SECCOMP_ALLOWED)
		return 0;
	seccomp.inject_warnings++;
	seccomp.refused = true;
	return -EPERM;
}
