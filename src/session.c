/* session.c — one session from the command line to the exit status: outputs checked before
 * anything is touched, the target attached or launched, the tracer loop in this thread and
 * the UI in another, then the summary and the JSON. */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "clock.h"
#include "config.h"
#include "cuda_api.h"
#include "devices.h"
#include "folded.h"
#include "gputime.h"
#include "gputime_find.h"
#include "hit.h"
#include "trace.h"
#include "json.h"
#include "json_interval.h"
#include "metrics_server.h"
#include "launch_check.h"
#include "launchring.h"
#include "log.h"
#include "probes.h"
#include "reap.h"
#include "rescue.h"
#include "seccomp.h"
#include "session_state.h"
#include "retfast.h"
#include "stats.h"
#include "procfs.h"
#include "target.h"
#include "timeline.h"
#include "torch_mem.h"
#include "tracer.h"
#include "ui.h"

/* An output file named on the command line: opened before attaching, so a path that cannot be
 * written is refused before anything happens, and removed again if the session never starts. */
struct output {
	const char *path;
	int fd;
	bool created;
};

static int output_open(struct output *o, const char *what)
{
	o->fd = -1;
	if (!o->path || strcmp(o->path, "-") == 0)
		return 0;
	/* O_NOFOLLOW: in a shared directory a planted symlink must not redirect our write.
	 * O_NONBLOCK: opening a FIFO for writing would wait for a reader forever. */
	o->fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	o->created = o->fd >= 0;
	if (o->fd < 0 && errno == EEXIST) {
		o->fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (o->fd < 0 && errno == ENXIO)
			errno = EINVAL;	/* a FIFO nobody reads, or a socket */
	}
	struct stat st;
	if (o->fd >= 0 && (fstat(o->fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(o->fd);
		o->fd = -1;
		errno = EINVAL;
	}
	if (o->fd >= 0)
		fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) & ~O_NONBLOCK);
	if (o->fd < 0) {
		log_error("cannot write %s file '%s': %s", what, o->path,
			  errno == ELOOP ? "it is a symbolic link" : errno == EINVAL ? "not a regular file"
										 : strerror(errno));
		return -1;
	}
	return 0;
}

static void output_discard(struct output *o)
{
	if (o->fd < 0)
		return;
	close(o->fd);
	if (o->created)
		unlink(o->path);
	o->fd = -1;
}

/* What an output file gets: the snapshot of every process, written by a presenter. */
struct output_writer {
	int (*write)(FILE *f, const struct output_writer *w, const struct stats_snapshot *snap);
	const struct report_info *info;	/* --json's */
	int metric;			/* --folded's */
};

static int folded_writer(FILE *f, const struct output_writer *w, const struct stats_snapshot *snap)
{
	return folded_write(f, w->metric, snap);
}

static int json_writer(FILE *f, const struct output_writer *w, const struct stats_snapshot *snap)
{
	return json_write(f, w->info, snap);
}

/* Replaces the file's contents with what w writes of a fresh snapshot; closes it. */
static int write_output(struct output *o, const struct output_writer *w)
{
	struct stats_snapshot snap;
	if (stats_snapshot(&snap) < 0)
		return -ENOMEM;
	int err = ftruncate(o->fd, 0) < 0 ? -errno : 0;
	FILE *f = err ? NULL : fdopen(o->fd, "w");
	if (f) {
		err = w->write(f, w, &snap);
		if (fclose(f) != 0 && !err)
			err = -errno;
	} else {
		close(o->fd);
		err = err ? err : -errno;
	}
	o->fd = -1;
	stats_snapshot_free(&snap);
	if (err)
		log_error("cannot write '%s': %s", o->path, strerror(-err));
	return err;
}

static int write_folded(struct output *o, int metric)
{
	return write_output(o, &(struct output_writer){ .write = folded_writer, .metric = metric });
}

static int write_json(struct output *o, const struct report_info *info)
{
	return write_output(o, &(struct output_writer){ .write = json_writer, .info = info });
}

/* What the summaries say of the session itself, set once it has started. */
static struct report_info session_report;

/* --json-interval's summaries while tracing (the writer's thread: it reads only the snapshot,
 * never the tracer's state, so the stops a call costs come from the snapshot's API rows). */
static void report_while_tracing(struct report_info *out, const struct stats_snapshot *s)
{
	*out = session_report;
	out->duration_s = (double)(now_ns() - s->start_ns) / 1e9;
	out->stops_per_return = out->stops_per_launch = 0;
	for (size_t i = 0; i < s->n_api; i++) {
		const struct api_spec *spec = cuda_api_get((int)i);
		const struct stats_api *a = &s->api[i];

		if (!spec || !a->calls)
			continue;
		if (spec->op == OP_LAUNCH && a->stops_per_call > 0)
			out->stops_per_launch = 1;
		if (a->returns_seen && a->stops_per_call > 1)
			out->stops_per_return = 1;
	}
}

enum ui_mode { UI_TUI, UI_BATCH, UI_SUMMARY };

static void *ui_thread(void *arg)
{
	const struct options *opt = arg;
	if (opt->batch)
		batch_run(opt);
	else
		tui_run(opt);
	return NULL;
}

static int start_ui(const struct options *opt, pthread_t *th)
{
	/* Signals to gputop belong to the tracer thread: they must interrupt its waitpid. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(th, NULL, ui_thread, (void *)opt);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

static void mark_ended(void)
{
	int code = 0, sig = 0;
	bool exited = tracer_exited(&code, &sig);
	session_set_ended(exited, code, sig);
}

/* tracer_start failed. If the program died meanwhile (a seccomp filter's SIGSYS at an injected
 * call, kill -9...), say how, once its threads are reaped. A launched program still alive is
 * stopped before its first instruction: it is killed rather than left to run behind gputop's
 * back once gputop has exited; an attached one is let go as it was. */
static int start_failed(const struct options *opt, pid_t pid, int err)
{
	int code = 0, sig = 0;
	bool dead = tracer_exited(&code, &sig);
	/* ESRCH: a thread of it vanished under gputop; the rest of it may still be on its way out. */
	if (!dead && reap_dead_program(pid, &code, &sig, err == -ESRCH ? 2000 : 0))
		dead = true;
	if (dead && sig)
		log_error("%d was killed by SIG%s while gputop was attaching%s", pid,
			  sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
			  sig == SIGSYS ? ": a seccomp filter (it forbids a system call gputop made it run)" : "");
	else if (dead)
		log_error("%d exited with status %d while gputop was attaching", pid, code);
	if (dead)
		return opt->pid ? EXIT_FAILURE_ : code;
	if (opt->pid) {
		tracer_detach();
	} else {
		kill(pid, SIGKILL);
		reap_dead_program(pid, &code, &sig, 2000);
		log_error("'%s' was not run", opt->argv[0]);
	}
	return seccomp_refused() ? EXIT_SECCOMP : EXIT_FAILURE_;
}

/* The other processes of -p PID,PID... (all or none: a PID that cannot be attached ends the
 * session, as a bad first one does), then with --children the descendants of each (those
 * that cannot be attached are said and skipped: they may have ended meanwhile). */
static int attach_more(const struct options *opt)
{
	for (int i = 1; i < opt->n_pids; i++) {
		int code = target_attach(opt->pids[i]);
		if (code)
			return code;
		if (tracer_start_another() < 0) {
			log_error("cannot probe %d", opt->pids[i]);
			return EXIT_FAILURE_;
		}
		log_info("attached to %d", opt->pids[i]);
	}
	for (int i = 0; opt->children && i < opt->n_pids; i++) {
		pid_t below[256];
		int n = proc_descendants(opt->pids[i], below, 255);
		for (int k = 0; k < n; k++) {
			if (tracer_traces(below[k]))
				continue;
			if (target_attach(below[k]) != 0 || tracer_start_another() < 0)
				log_warn("child %d of %d is not traced", below[k], opt->pids[i]);
			else
				log_info("attached to %d, a descendant of %d", below[k], opt->pids[i]);
		}
	}
	return 0;
}

/* --gpu-time: gputop's library is there, and GPUTOP_CUPTI, if set, names a file (it is looked
 * for in each program's own file system when it is loaded). */
static int gpu_time_check(void)
{
	char lib[PATH_MAX];
	if (gputime_find_library(lib, sizeof lib) < 0) {
		log_error("--gpu-time: %s is missing", lib);
		log_hint("it is built with gputop where CUDA's CUPTI headers are (make CUDA=/path/to/cuda)");
		return -1;
	}
	const char *cupti = getenv("GPUTOP_CUPTI");
	if (cupti && *cupti && access(cupti, R_OK) < 0) {
		log_error("GPUTOP_CUPTI=%s: %s", cupti, strerror(errno));
		return -1;
	}
	gputime_enable(lib);
	config.gpu_time = true;
	return 0;
}

/* Whether process pid has a CUDA library mapped (libcudart or libcuda, by the file's name). */
static bool maps_cuda(pid_t pid)
{
	char path[64], *line = NULL;
	size_t size = 0;
	bool found = false;

	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	while (f && !found && getline(&line, &size, f) > 0) {
		const char *name = strrchr(line, '/');
		found = name && (strncmp(name, "/libcudart.so", 13) == 0 || strncmp(name, "/libcuda.so", 11) == 0);
	}
	free(line);
	if (f)
		fclose(f);
	return found;
}

/* Attached without --children to a process with no CUDA (a launcher, a shell, torchrun's
 * agent): where its descendants have CUDA, they are what the user wanted to see. */
static void hint_children(pid_t pid)
{
	pid_t below[256];
	int n = proc_descendants(pid, below, 255), cuda = 0;
	pid_t first = 0;

	for (int i = 0; i < n; i++)
		if (maps_cuda(below[i]) && !cuda++)
			first = below[i];
	if (cuda)
		log_hint("%d of its descendants use%s CUDA (%d%s): --children traces them (gputop -p %d --children)",
			 cuda, cuda == 1 ? "s" : "", first, cuda > 1 ? ", ..." : "", pid);
	else if (n)
		log_hint("it has %d descendant%s: --children traces them too, once they load CUDA", n, n == 1 ? "" : "s");
}

static int get_target(const struct options *opt, int output_fd, pid_t *pid)
{
	if (opt->pid) {
		*pid = opt->pid;
		return target_attach(opt->pid);
	}
	return target_launch(opt->argv, output_fd, pid);
}

int session_run(const struct options *opt)
{
	struct output json = { .path = opt->json_path }, trace = { .path = opt->trace_path };
	struct output prog_out = { .path = opt->output_path };
	struct output folded = { .path = opt->folded_path }, timeline = { .path = opt->timeline_path };
	pid_t pid = 0;
	int code;

	log_set_quiet(opt->quiet);
	seccomp_set_trust(opt->trust_seccomp);
	config.stack_depth = opt->stack_depth;
	config.stacks = opt->stacks;
	config.no_int3 = opt->no_int3;
	unsetenv("DEBUGINFOD_URLS");	/* never fetch anything over the network */
	/* AT_SECURE: the kernel says this exec gained privilege, which also covers file
	 * capabilities (setcap cap_sys_ptrace+ep), where the ids stay the user's. */
	if (geteuid() != getuid() || getegid() != getgid() || getauxval(AT_SECURE)) {
		log_error("refusing to run set-uid, set-gid or with file capabilities: gputop must not "
			  "have more privilege than you");
		return EXIT_PERMISSION;
	}
	if (!opt->pid && (code = launch_check(opt->argv[0])) != 0)
		return code;
	if (opt->gpu_time && gpu_time_check() < 0)
		return EXIT_FAILURE_;
	if (output_open(&json, "--json") < 0 || output_open(&trace, "--trace") < 0 ||
	    output_open(&folded, "--folded") < 0 || output_open(&timeline, "--timeline") < 0 ||
	    output_open(&prog_out, "-o") < 0) {
		output_discard(&json);
		output_discard(&trace);
		output_discard(&folded);
		output_discard(&timeline);
		return EXIT_OUTPUT;
	}
	if ((opt->json_interval_path && json_interval_check(opt->json_interval_path) < 0) ||
	    (opt->listen && metrics_server_start(opt->listen, opt->delay_s,
						 (size_t)opt->metrics_top_kernels) < 0)) {
		output_discard(&json);
		output_discard(&trace);
		output_discard(&prog_out);
		return EXIT_OUTPUT;
	}
	if (prog_out.fd >= 0 && ftruncate(prog_out.fd, 0) < 0) {
		log_error("cannot write -o file '%s': %s", prog_out.path, strerror(errno));
		return EXIT_OUTPUT;
	}
	if (arch_init() < 0 || stats_init() < 0) {
		log_error("out of memory");
		return EXIT_FAILURE_;
	}
	if (opt->leak_age_s > 0)
		torch_mem_set_leak_age((uint64_t)(opt->leak_age_s * 1e9));
	tracer_init();
	tracer_install_signal_handlers();
	session_set_waker(tracer_wake);
	if (rescue_init() == 0)
		tracer_install_crash_handler();
	code = get_target(opt, prog_out.fd, &pid);
	if (prog_out.fd >= 0)
		close(prog_out.fd);
	if (code != 0) {
		metrics_server_stop();
		output_discard(&json);
		output_discard(&trace);
		output_discard(&folded);
		output_discard(&timeline);
		if (prog_out.created)
			unlink(prog_out.path);
		return code;
	}
	char command[256];
	uint64_t start_ns = now_ns();
	proc_command(pid, command, sizeof command);
	session_set_started(pid, !opt->pid, start_ns, command);
	if (opt->trace_path) {
		/* Reopened through our descriptor, not by name: the name was checked (no symbolic
		 * link) when it was opened, and may have been replaced since. */
		char via_fd[64];
		if (trace.fd >= 0)
			snprintf(via_fd, sizeof via_fd, "/proc/self/fd/%d", trace.fd);
		trace_open(trace.fd >= 0 ? via_fd : opt->trace_path);
		if (trace.fd >= 0)
			close(trace.fd), trace.fd = -1;
	}
	tracer_set_follow(opt->pid ? opt->children : !opt->no_follow);
	if (timeline.fd >= 0 && timeline_open(timeline.fd, (uint64_t)(opt->timeline_max_mb * 1048576), pid) < 0)
		log_warn("cannot write the timeline '%s': out of memory", timeline.path);
	int err = tracer_start(!opt->pid, opt->max_overhead);
	if (err < 0) {
		timeline_close();
		output_discard(&timeline);
		metrics_server_stop();
		output_discard(&json);
		output_discard(&folded);
		return start_failed(opt, pid, err);
	}
	if ((code = attach_more(opt)) != 0) {
		metrics_server_stop();
		tracer_detach_all();
		timeline_close();
		output_discard(&timeline);
		output_discard(&json);
		output_discard(&folded);
		return code;
	}
	devices_watch(pid, !opt->pid);
	devices_start(config.nvml_poll_ms);	/* no thread: no meters, tracing goes on */
	session_report = (struct report_info){ .pid = pid, .command = command, .launched = !opt->pid };
	if (opt->json_interval_path)
		json_interval_start(opt->json_interval_path, opt->json_interval_s, report_while_tracing);
	if (opt->pid)
		log_info("attached to %d (%s)", pid, command);
	if (!probes_cuda_seen()) {
		log_info("no CUDA library in %d yet: waiting for one to load", pid);
		if (opt->pid && !opt->children && !opt->quiet)
			hint_children(pid);
	}

	enum ui_mode mode = opt->batch ? UI_BATCH : isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) ? UI_TUI
												 : UI_SUMMARY;
	double timeout = opt->timeout_s;
	if (mode == UI_SUMMARY && opt->iterations > 0) {
		double t = (double)opt->iterations * opt->delay_s;
		timeout = timeout > 0 && timeout < t ? timeout : t;
	}
	pthread_t ui;
	bool ui_running = mode != UI_SUMMARY && start_ui(opt, &ui) == 0;

	err = tracer_loop(timeout, true);
	rescue_watchdog_stop();
	devices_stop();		/* the GPUs' last figures, before the UI shows the final ones */
	mark_ended();
	metrics_server_stop();
	if (ui_running)
		pthread_join(ui, NULL);
	if (mode == UI_SUMMARY)
		batch_print_final(stderr);

	int exit_code = 0, sig = 0;
	bool exited = tracer_exited(&exit_code, &sig);
	if (exited)
		log_info("%d %s %d", pid, sig ? "was killed by signal" : "exited with status", sig ? sig : exit_code);
	else if (!err)
		log_info("detached from %d", pid);
	trace_close();
	timeline_close();
	if (timeline.fd >= 0)
		close(timeline.fd);
	if (folded.fd >= 0 && write_folded(&folded, opt->folded_metric) < 0 && !exited)
		return EXIT_OUTPUT;
	struct devices_snapshot devices;
	devices_snapshot(&devices);
	struct report_info info = {
		.devices = &devices,
		.pid = pid, .command = command, .launched = !opt->pid,
		.duration_s = (double)(now_ns() - start_ns) / 1e9,
		.has_exit_status = exited, .exit_status = exit_code, .term_signal = sig,
		.stops_per_return = retfast_used() ? 0 : 1,
		.stops_per_launch = launchring_used() ? 0 : 1,
	};
	bool json_failed = json.fd >= 0 && write_json(&json, &info) < 0;
	json_failed |= json_interval_stop(&info) < 0;
	if (json_failed && !exited)
		return EXIT_OUTPUT;
	if (tracer_timed_out_without_cuda()) {
		log_error("%d never loaded a CUDA library", pid);
		return EXIT_NO_CUDA;
	}
	if (err < 0)
		return EXIT_FAILURE_;
	if (!opt->pid && exited)
		return exit_code;
	return EXIT_OK;
}
