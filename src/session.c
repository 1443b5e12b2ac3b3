/* session.c — one session from the command line to the exit status: outputs checked before
 * anything is touched, the target attached or launched (session_target.c), the tracer loop in
 * this thread and the UI in another (ui/ui_thread.c), then the files written at the end
 * (output/report.c) and the summary. */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account.h"
#include "arch.h"
#include "clock.h"
#include "config.h"
#include "devices.h"
#include "dump.h"
#include "hit.h"
#include "job_live.h"
#include "json_interval.h"
#include "log.h"
#include "metrics_server.h"
#include "nccl_counter.h"
#include "outfile.h"
#include "probes.h"
#include "procfs.h"
#include "report.h"
#include "rescue.h"
#include "rescue_cycle.h"
#include "seccomp.h"
#include "session_state.h"
#include "session_target.h"
#include "stats.h"
#include "stats_calls.h"
#include "timeline.h"
#include "torch_alloc.h"
#include "torch_dumps.h"
#include "torch_mem.h"
#include "torch_snapshot.h"
#include "trace.h"
#include "tracee_ctl.h"
#include "tracer.h"
#include "ui.h"

enum ui_mode { UI_TUI, UI_BATCH, UI_SUMMARY };

static bool session_cuda_before_attach(void)
{
	struct session_status st;
	session_status_get(&st);
	return st.cuda_before_attach;
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
	if (opt->dump)
		account_add(&nccl_counter_consumer);
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
	    (err = timeline_open(timeline->fd, (uint64_t)(opt->timeline_max_mb * 1048576), pid,
				    opt->timeline_compact)) < 0)
		ok &= outfile_commit(timeline, err) == 0;
	return ok;
}

/* The session proper, every process held: the UI, the loop, then the summaries. Returns
 * gputop's exit status. */
static int trace_and_report(const struct options *opt, struct outfile *files, bool output_failed,
			    pid_t pid, uint64_t start_ns, const char *command, struct job *job,
			    struct job_live *live)
{
	devices_watch(pid, !opt->pid);
	devices_start(config.nvml_poll_ms);	/* no thread: no meters, tracing goes on */
	if (opt->pid && probes_cuda_seen(tracee_of_pid(pid)))
		session_set_cuda_before_attach();	/* what it allocated until now is not seen */
	enum ui_mode mode = opt->batch ? UI_BATCH : !opt->dump && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) ? UI_TUI
												 : UI_SUMMARY;
	/* The live picture of the job, for the Job view, --json-interval's `job` and the metrics. */
	if (mode == UI_TUI || opt->json_interval_path || opt->listen)
		tracer_set_job_live(live);
	if (opt->json_interval_path) {
		/* What the summaries say of the session itself. */
		struct report_info start = { .pid = pid, .command = command, .launched = !opt->pid, .job_live = live };
		json_interval_start(opt->json_interval_path, opt->json_interval_s, &start, report_from_snapshot);
	}
	session_say_target(opt, pid, command);

	double timeout = opt->dump ? dump_timeout(opt) : opt->timeout_s;
	if (mode == UI_SUMMARY && opt->iterations > 0) {
		double t = (double)opt->iterations * opt->delay_s;
		timeout = timeout > 0 && timeout < t ? timeout : t;
	}
	struct ui_thread ui = { 0 };
	struct ui_options ui_opt = { .delay_s = opt->delay_s, .iterations = opt->iterations, .no_color = opt->no_color,
				     .memory_snapshot = opt->memory_snapshot_path != NULL,
				     .alloc_stacks = (opt->stacks & CONFIG_STACKS_ALLOCS) && opt->stack_depth,
				     .job_live = live };
	if (mode != UI_SUMMARY)
		(void)ui_start(&ui, &ui_opt, mode == UI_BATCH);

	int err = tracer_loop(timeout, !opt->dump);
	uint64_t t_end = now_ns();
	devices_stop();		/* the GPUs' last figures, before the UI shows the final ones */
	uint64_t t_meters = now_ns();
	int exit_code = 0, sig = 0;
	bool exited = tracer_exited(&exit_code, &sig);
	session_set_ended(exited, exit_code, sig);
	if (!opt->linger_s)
		metrics_server_stop();
	log_debug("the end: GPU meters stopped in %.1f ms", (double)(t_meters - t_end) / 1e6);

	/* The files are written while the UI shows its last figures (-b's summary, the TUI until
	 * q): both only read the figures, which no longer change. */
	struct report_info info = {
		.pid = pid, .command = command, .launched = !opt->pid,
		.cuda_before_attach = opt->pid && session_cuda_before_attach(),
		.duration_s = (double)(now_ns() - start_ns) / 1e9,
		.has_exit_status = exited, .exit_status = exit_code, .term_signal = sig,
		.job = dump_finish(job),
	};
	struct report_files end = { .json = &files[F_JSON], .trace = &files[F_TRACE], .folded = &files[F_FOLDED],
				    .timeline = &files[F_TIMELINE], .folded_metric = opt->folded_metric };
	output_failed |= !report_write_end(&end, &info);
	log_debug("the end: outputs written %.1f ms after the tracing ended", (double)(now_ns() - t_end) / 1e6);
	ui_join(&ui);
	if (opt->dump)
		output_failed |= dump_print(job, stdout) < 0;
	else if (mode == UI_SUMMARY && !opt->quiet)	/* -q: errors and warnings only (a container's log) */
		batch_print_final(stderr);
	if (opt->linger_s && mode != UI_TUI)	/* the TUI served them until q */
		metrics_server_linger(t_end + (uint64_t)(opt->linger_s * 1e9), tracer_take_stop_signal);
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
	return session_target_status(opt, pid, err);
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
	struct job_live *live = NULL;	/* the live one (a TUI, --json-interval, --listen) */
	int code;

	configure(opt);
	if ((code = session_check_target(opt)) != 0)
		return code;
	if (outfile_open_all(files, F_COUNT) < 0)
		return EXIT_OUTPUT;
	code = EXIT_OUTPUT;
	if (opt->json_interval_path && json_interval_check(opt->json_interval_path) < 0)
		goto out_files;
	if (torch_snapshot_check(opt->memory_snapshot_path, "--memory-snapshot") < 0 ||
	    torch_snapshot_check(opt->oom_snapshot_path, "--oom-snapshot") < 0 ||
	    torch_snapshot_check(opt->oom_report_path, "--oom-report") < 0)
		goto out_files;
	if (!opt->dump && !(live = job_live_new())) {
		log_error("out of memory");
		goto out_files;
	}
	if (opt->listen && metrics_server_start(opt->listen, opt->delay_s, (size_t)opt->metrics_top_kernels, live) < 0)
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
	code = session_take_target(opt, files[F_OUT].fd, &pid);
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
		code = session_start_failed(opt, pid, err);
		goto out_live;
	}
	if ((code = session_attach_more(opt)) != 0) {
		tracer_detach_all();
		goto out_live;
	}
	started = true;
	code = trace_and_report(opt, files, live_failed, pid, start_ns, command, job, live);
out_live:
	(void)trace_close();	/* after a start that failed: their files are removed */
	(void)timeline_close();
out_metrics:
	t_clean = now_ns();
	account_clear();
	dump_end(job);
	tracer_set_job_live(NULL);
	rescue_cycle_guard_stop();
	metrics_server_stop();
out_files:
	job_live_free(live);	/* after the metrics server, its last reader */
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
