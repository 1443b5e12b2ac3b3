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

#include "account.h"
#include "arch.h"
#include "clock.h"
#include "config.h"
#include "cuda_api.h"
#include "devices.h"
#include "dump.h"
#include "folded.h"
#include "gputime.h"
#include "gputime_find.h"
#include "hit.h"
#include "trace.h"
#include "json.h"
#include "json_interval.h"
#include "metrics_server.h"
#include "launch_check.h"
#include "outfile.h"
#include "launchring.h"
#include "log.h"
#include "probes.h"
#include "reap.h"
#include "rescue.h"
#include "rescue_cycle.h"
#include "seccomp.h"
#include "session_state.h"
#include "retfast.h"
#include "stats.h"
#include "stats_calls.h"
#include "procfs.h"
#include "target.h"
#include "timeline.h"
#include "torch_alloc.h"
#include "torch_dumps.h"
#include "torch_mem.h"
#include "torch_snapshot.h"
#include "tracee_ctl.h"
#include "tracer.h"
#include "ui.h"

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

/* What w writes of a fresh snapshot becomes the file's contents (outfile_commit), or, if a
 * write fails, the file stays as it was. 0, or -1 (said at the end). */
static int write_output(struct outfile *o, const struct output_writer *w)
{
	struct stats_snapshot snap;
	uint64_t t0 = now_ns();
	if (stats_snapshot(&snap) < 0)
		return outfile_commit(o, -ENOMEM);
	uint64_t t1 = now_ns();
	int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0), err = 0;	/* o->fd stays open to be synced */
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f) {
		err = w->write(f, w, &snap);
		if (fclose(f) != 0 && !err)
			err = -errno;
	} else {
		err = -errno;
		if (fd >= 0)
			close(fd);
	}
	log_debug("%s: %zu processes, %zu kernel rows, %zu live allocations; snapshot %.1f ms, written %.1f ms",
		  o->what, snap.n_proc, snap.n_kernel, snap.n_alloc, (double)(t1 - t0) / 1e6,
		  (double)(now_ns() - t1) / 1e6);
	stats_snapshot_free(&snap);
	return outfile_commit(o, err);
}

static int write_folded(struct outfile *o, int metric)
{
	return write_output(o, &(struct output_writer){ .write = folded_writer, .metric = metric });
}

static int write_json(struct outfile *o, const struct report_info *info)
{
	return write_output(o, &(struct output_writer){ .write = json_writer, .info = info });
}

/* --json-interval's summaries while tracing (the writer's thread: it reads only the snapshot,
 * never the tracer's state, so the stops a call costs come from the snapshot's API rows). */
static bool session_cuda_before_attach(void)
{
	struct session_status st;
	session_status_get(&st);
	return st.cuda_before_attach;
}

static void report_while_tracing(struct report_info *out, const struct stats_snapshot *s)
{
	out->cuda_before_attach = session_cuda_before_attach();
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

/* What the UI thread is started with: it lives in the session's frame until the thread is
 * joined. */
struct ui_start {
	struct ui_options opt;
	bool batch;
};

static void *ui_thread(void *arg)
{
	const struct ui_start *u = arg;
	if (u->batch)
		batch_run(&u->opt);
	else
		tui_run(&u->opt);
	return NULL;
}

static int start_ui(const struct options *opt, struct ui_start *u, pthread_t *th)
{
	*u = (struct ui_start){ .opt = { .delay_s = opt->delay_s, .iterations = opt->iterations,
					 .no_color = opt->no_color, .memory_snapshot = opt->memory_snapshot_path != NULL,
					 .alloc_stacks = (opt->stacks & CONFIG_STACKS_ALLOCS) && opt->stack_depth },
				.batch = opt->batch };
	/* Signals to gputop belong to the tracer thread: they must interrupt its waitpid. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(th, NULL, ui_thread, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

static void mark_ended(void)
{
	int code = 0, sig = 0;
	bool exited = tracer_exited(&code, &sig);
	session_set_ended(exited, code, sig);
}

/* --linger: the metrics server goes on serving the last figures until deadline (the scrapes
 * that come after a short job's end, which Prometheus would otherwise never collect). A person's
 * SIGINT or SIGQUIT ends it at once; SIGTERM and SIGHUP do not: a Kubernetes native sidecar gets
 * SIGTERM as soon as the trainer has ended, which is when the linger is wanted, and the kubelet's
 * SIGKILL after the grace period can harm nothing, as nothing is traced any more. */
static void linger(uint64_t deadline)
{
	uint64_t now = now_ns();
	if (now >= deadline)
		return;
	log_info("serving the last figures on http://%s/metrics for %.0f s more (Ctrl-C ends it)",
		 metrics_server_where(), (double)(deadline - now) / 1e9);
	(void)tracer_take_stop_signal();	/* the one that ended the tracing, if any */
	while (now_ns() < deadline) {
		int sig = tracer_take_stop_signal();
		if (sig == SIGINT || sig == SIGQUIT)
			break;
		struct timespec step = { .tv_nsec = 50000000 };
		nanosleep(&step, NULL);
	}
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
	if (!dead && reap_dead_program(tracee_of_pid(pid), pid, &code, &sig, err == -ESRCH ? 2000 : 0))
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
		tracer_detach(tracee_of_pid(pid));
	} else {
		kill(pid, SIGKILL);
		reap_dead_program(tracee_of_pid(pid), pid, &code, &sig, 2000);
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
		tracer_space_attach();
		int code = target_attach(opt->pids[i]);
		if (code)
			return code;
		if (tracer_start_another(tracee_of_pid(opt->pids[i])) < 0) {
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
			tracer_space_attach();
			if (target_attach(below[k]) != 0 || tracer_start_another(tracee_of_pid(below[k])) < 0)
				log_warn("child %d of %d is not traced", below[k], opt->pids[i]);
			else
				log_info("attached to %d, a descendant of %d", below[k], opt->pids[i]);
		}
	}
	return 0;
}

/* --gpu-time: gputop's library is there, and GPUTOP_CUPTI, if set, names a file in the file
 * system of the program to attach to, pid (another mount namespace: a container's), or in
 * gputop's own for a program it starts. */
static int gpu_time_check(pid_t pid)
{
	char lib[PATH_MAX];
	if (gputime_find_library(lib, sizeof lib) < 0) {
		log_error("--gpu-time: %s is missing", lib);
		log_hint("it is built with gputop where CUDA's CUPTI headers are (make CUDA=/path/to/cuda)");
		return -1;
	}
	const char *cupti = config.cupti_path;
	if (cupti && !gputime_file_there(pid, cupti)) {
		log_error("GPUTOP_CUPTI=%s: %s%s", cupti, strerror(errno), pid ? " (in the program's file system)" : "");
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

/* No CUDA library in the program yet: said once, in these words, at the attach or when a
 * program gputop started has loaded none after NO_CUDA_NEWS_NS. */
static void say_no_cuda(pid_t pid)
{
	log_info("no CUDA library in %d yet: waiting for one to load", pid);
}

static int get_target(const struct options *opt, int output_fd, pid_t *pid)
{
	if (opt->pid) {
		*pid = opt->pid;
		return target_attach(opt->pid);
	}
	return target_launch(opt->argv, output_fd, pid);
}

/* The output files of the command line, in the order they are opened. */
enum { F_JSON, F_TRACE, F_FOLDED, F_TIMELINE, F_OUT, F_COUNT };

/* Settings that hold for the whole session, before anything is opened. */
static void configure(const struct options *opt)
{
	log_set_quiet(opt->quiet);
	seccomp_set_trust(opt->trust_seccomp);
	config.stack_depth = opt->stack_depth;
	config.stacks = opt->stacks;
	config.no_int3 = opt->no_int3;
	config.tracing = opt->trace_path != NULL;	/* every call wanted, in order: probes.c's stubs */
	if (opt->leak_age_s > 0)
		torch_mem_set_leak_age((uint64_t)(opt->leak_age_s * 1e9));
	config.memory_snapshot = opt->memory_snapshot_path;
	config.oom_snapshot = opt->oom_snapshot_path;
	config.oom_report = opt->oom_report_path;
	unsetenv("DEBUGINFOD_URLS");	/* never fetch anything over the network */
}

/* Who is told of each CUDA call the tracer sees (engine/account.h), in this order: the CUDA
 * graphs last, so that a graph call's catching up with the stubs' records comes after its own
 * lines. --trace and --timeline only when asked for. Before the target: an attach counts calls. */
static void add_consumers(const struct options *opt)
{
	account_add(&stats_consumer);
	account_add(&stacks_consumer);
	account_add(&torch_consumer);
	account_add(&torch_dumps_consumer);	/* after torch_consumer: its blocks read */
	if (opt->trace_path)
		account_add(&trace_consumer);
	if (opt->timeline_path)
		account_add(&timeline_consumer);
	account_add(&graphs_consumer);
}

/* AT_SECURE: the kernel says this exec gained privilege, which also covers file capabilities
 * (setcap cap_sys_ptrace+ep), where the ids stay the user's. */
static bool privileged(void)
{
	if (geteuid() == getuid() && getegid() == getgid() && !getauxval(AT_SECURE))
		return false;
	log_error("refusing to run set-uid, set-gid or with file capabilities: gputop must not "
		  "have more privilege than you");
	return true;
}

/* The outputs that are written as the session goes, into their temporary files: --trace (or
 * standard error) and --timeline. False if one cannot start (said at the end; that file is
 * not made). */
static bool open_live_outputs(const struct options *opt, struct outfile *files, pid_t pid)
{
	struct outfile *trace = &files[F_TRACE], *timeline = &files[F_TIMELINE];
	int err;
	bool ok = true;
	if (opt->trace_path && (err = trace_open(trace->fd)) < 0)
		ok = outfile_commit(trace, err) == 0;
	if (timeline->fd >= 0 &&
	    (err = timeline_open(timeline->fd, (uint64_t)(opt->timeline_max_mb * 1048576), pid)) < 0)
		ok &= outfile_commit(timeline, err) == 0;
	return ok;
}

/* The session proper, every process held: the UI, the loop, then the summaries. Returns
 * gputop's exit status. */
static int trace_and_report(const struct options *opt, struct outfile *files, bool output_failed,
			    pid_t pid, uint64_t start_ns, const char *command, struct job *job)
{
	devices_watch(pid, !opt->pid);
	devices_start(config.nvml_poll_ms);	/* no thread: no meters, tracing goes on */
	if (opt->pid && probes_cuda_seen(tracee_of_pid(pid)))
		session_set_cuda_before_attach();	/* what it allocated until now is not seen */
	if (opt->json_interval_path) {
		/* What the summaries say of the session itself. */
		struct report_info start = { .pid = pid, .command = command, .launched = !opt->pid };
		json_interval_start(opt->json_interval_path, opt->json_interval_s, &start, report_while_tracing);
	}
	if (opt->pid)
		log_info("attached to %d (%s)", pid, command);
	if (opt->pid && !probes_cuda_seen(tracee_of_pid(pid))) {	/* a running program: news at once */
		say_no_cuda(pid);
		if (!opt->children && !opt->quiet)
			hint_children(pid);
	} else if (!opt->pid) {
		tracer_on_no_cuda(NO_CUDA_NEWS_NS, say_no_cuda);
	}

	enum ui_mode mode = opt->batch ? UI_BATCH : !opt->dump && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) ? UI_TUI
												 : UI_SUMMARY;
	double timeout = opt->dump ? dump_timeout(opt) : opt->timeout_s;
	if (mode == UI_SUMMARY && opt->iterations > 0) {
		double t = (double)opt->iterations * opt->delay_s;
		timeout = timeout > 0 && timeout < t ? timeout : t;
	}
	pthread_t ui;
	struct ui_start ui_start;
	bool ui_running = mode != UI_SUMMARY && start_ui(opt, &ui_start, &ui) == 0;

	int err = tracer_loop(timeout, !opt->dump);
	uint64_t t_end = now_ns();
	devices_stop();		/* the GPUs' last figures, before the UI shows the final ones */
	uint64_t t_meters = now_ns();
	mark_ended();
	if (!opt->linger_s)
		metrics_server_stop();
	log_debug("the end: GPU meters stopped in %.1f ms", (double)(t_meters - t_end) / 1e6);

	/* The files are written while the UI shows its last figures (-b's summary, the TUI until
	 * q): both only read the figures, which no longer change. */
	int exit_code = 0, sig = 0;
	bool exited = tracer_exited(&exit_code, &sig);
	output_failed |= outfile_commit(&files[F_TRACE], trace_close()) < 0;
	output_failed |= outfile_commit(&files[F_TIMELINE], timeline_close()) < 0;
	if (timeline_clamped())
		log_info("--timeline: %llu calls' times clamped so as not to overlap their thread's previous "
			 "call (a stop's clock and the stubs' counter disagreed)", (unsigned long long)timeline_clamped());
	output_failed |= files[F_FOLDED].fd >= 0 && write_folded(&files[F_FOLDED], opt->folded_metric) < 0;
	struct devices_snapshot devices;
	devices_snapshot(&devices);
	const struct tracee *first = tracee_of_pid(pid);	/* kept to the end for its exit status */
	struct report_info info = {
		.devices = &devices,
		.pid = pid, .command = command, .launched = !opt->pid,
		.cuda_before_attach = opt->pid && session_cuda_before_attach(),
		.duration_s = (double)(now_ns() - start_ns) / 1e9,
		.has_exit_status = exited, .exit_status = exit_code, .term_signal = sig,
		.stops_per_return = first && retfast_used(first) ? 0 : 1,
		.stops_per_launch = first && launchring_used(first) ? 0 : 1,
		.job = dump_finish(job),
	};
	output_failed |= files[F_JSON].fd >= 0 && write_json(&files[F_JSON], &info) < 0;
	output_failed |= json_interval_stop(&info) < 0;
	log_debug("the end: outputs written %.1f ms after the tracing ended", (double)(now_ns() - t_end) / 1e6);
	if (ui_running)
		pthread_join(ui, NULL);
	if (opt->dump)
		output_failed |= dump_print(job, stdout) < 0;
	else if (mode == UI_SUMMARY && !opt->quiet)	/* -q: errors and warnings only (a container's log) */
		batch_print_final(stderr);
	if (opt->linger_s && mode != UI_TUI)	/* the TUI served them until q */
		linger(t_end + (uint64_t)(opt->linger_s * 1e9));
	log_debug("the end: the UI's last figures %.1f ms after the tracing ended", (double)(now_ns() - t_end) / 1e6);
	if (exited)
		log_info("%d %s %d", pid, sig ? "was killed by signal" : "exited with status", sig ? sig : exit_code);
	else if (!err)
		log_info("detached from %d", pid);
	if (output_failed) {	/* the run's results are missing: that comes before the program's status */
		for (int i = 0; i < F_COUNT; i++)	/* said once the TUI is gone, not in its status line */
			outfile_say_failed(&files[i]);
		if (exited && !opt->pid)
			log_error("exit status %d: an output was not written (%d %s %d)", EXIT_OUTPUT, pid,
				  sig ? "was killed by signal" : "exited with status", sig ? sig : exit_code);
		return EXIT_OUTPUT;
	}
	if (tracer_timed_out_without_cuda()) {
		log_error("%d never loaded a CUDA library", pid);
		return EXIT_NO_CUDA;
	}
	if (err < 0)
		return EXIT_FAILURE_;
	if (!opt->pid && exited)
		return exit_code;
	return gputime_refused() ? EXIT_SECCOMP : EXIT_OK;	/* --gpu-time refused */
}

/* One session, acquired in order and released in reverse on one path: the outputs first (a
 * path that cannot be written is refused before anything runs), the metrics endpoint, the
 * program, the live outputs. A session that never starts removes the files it made. */
int session_run(const struct options *opt)
{
	struct outfile files[F_COUNT] = {
		[F_JSON] = { .path = opt->json_path, .what = "--json" },
		[F_TRACE] = { .path = opt->trace_path, .what = "--trace" },
		[F_FOLDED] = { .path = opt->folded_path, .what = "--folded" },
		[F_TIMELINE] = { .path = opt->timeline_path, .what = "--timeline" },
		[F_OUT] = { .path = opt->output_path, .what = "-o", .in_place = true },
	};
	bool started = false;	/* the files stay */
	uint64_t t_clean = 0;
	pid_t pid = 0;
	struct job *job = NULL;	/* --dump's picture */
	int code;

	configure(opt);
	if (privileged())
		return EXIT_PERMISSION;
	if (!opt->pid && (code = launch_check(opt->argv[0])) != 0)
		return code;
	if (opt->gpu_time && gpu_time_check(opt->pid) < 0)
		return EXIT_FAILURE_;
	if (outfile_open_all(files, F_COUNT) < 0)
		return EXIT_OUTPUT;
	code = EXIT_OUTPUT;
	if (opt->json_interval_path && json_interval_check(opt->json_interval_path) < 0)
		goto out_files;
	if (torch_snapshot_check(opt->memory_snapshot_path, "--memory-snapshot") < 0 ||
	    torch_snapshot_check(opt->oom_snapshot_path, "--oom-snapshot") < 0 ||
	    torch_snapshot_check(opt->oom_report_path, "--oom-report") < 0)
		goto out_files;
	if (opt->listen && metrics_server_start(opt->listen, opt->delay_s, (size_t)opt->metrics_top_kernels) < 0)
		goto out_files;
	if (files[F_OUT].fd >= 0 && !files[F_OUT].device && ftruncate(files[F_OUT].fd, 0) < 0) {
		log_error("cannot write -o file '%s': %s", files[F_OUT].path, strerror(errno));
		goto out_metrics;
	}
	code = EXIT_FAILURE_;
	if (arch_init() < 0 || stats_init() < 0) {
		log_error("out of memory");
		goto out_metrics;
	}
	tracer_init();
	add_consumers(opt);
	job = dump_start(opt);
	tracer_install_signal_handlers();
	session_set_waker(tracer_wake);
	if (rescue_init() == 0)
		tracer_install_crash_handler();
	int guard = rescue_cycle_guard_start();
	if (guard < 0)
		log_debug("no guard against a tracer loop: %s", strerror(-guard));
	code = get_target(opt, files[F_OUT].fd, &pid);
	outfile_close(&files[F_OUT]);	/* the program has it now */
	if (code != 0)
		goto out_metrics;
	char command[256];
	uint64_t start_ns = now_ns();
	proc_command(pid, command, sizeof command);
	session_set_started(pid, !opt->pid, start_ns, command);
	bool live_failed = !open_live_outputs(opt, files, pid);
	config.follow = opt->pid ? opt->children : !opt->no_follow;
	int err = tracer_start(tracee_of_pid(pid), !opt->pid, opt->max_overhead);
	if (err < 0) {
		code = start_failed(opt, pid, err);
		goto out_live;
	}
	if ((code = attach_more(opt)) != 0) {
		tracer_detach_all();
		goto out_live;
	}
	started = true;
	code = trace_and_report(opt, files, live_failed, pid, start_ns, command, job);
out_live:
	(void)trace_close();	/* after a start that failed: their files are removed */
	(void)timeline_close();
out_metrics:
	t_clean = now_ns();
	account_clear();
	dump_end(job);
	rescue_cycle_guard_stop();
	metrics_server_stop();
out_files:
	for (int i = F_COUNT - 1; i >= 0; i--) {
		if (started)
			outfile_close(&files[i]);
		else
			outfile_discard(&files[i]);
	}
	if (started)
		log_debug("the end: cleaned up in %.1f ms", (double)(now_ns() - t_clean) / 1e6);
	return code;
}
