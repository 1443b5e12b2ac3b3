/* metrics_server.c — --listen (metrics_server.h): the listening socket, libmicrohttpd's daemon
 * (one thread, epoll, its limits against slow and idle clients) and the publisher thread that renders the figures every refresh. HTTP
 * itself is libmicrohttpd's: this file only says which path answers with what. Requests read
 * the last rendered text under a lock held for a copy; only the publisher takes snapshots. */
#define _GNU_SOURCE
#include "metrics_server.h"
#include "job_live.h"
#include "clock.h"
#include "config.h"
#include "fdlimit.h"
#include "log.h"
#include "mhd_lib.h"
#include "openmetrics.h"
#include "rows.h"
#include "stats.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The texts requests are answered with, one per format, replaced whole by the publisher. */
struct published {
	char *text[2];		/* by enum metrics_format */
	size_t len[2];
};

static struct {
	struct mhd_lib mhd;	/* libmicrohttpd's functions, once loaded */
	struct MHD_Daemon *daemon;
	int listen_fd;
	pthread_t publisher;
	bool publisher_running, stopping;
	pthread_mutex_t lock;	/* published, stopping */
	pthread_cond_t wake;
	struct published published;
	double refresh_s;
	size_t top_kernels;
	struct job_live *job_live;	/* the live picture of the job: the gputop_job_* gauges */
	/* Where gputop runs: labels of every series (set at start, read by the publisher). */
	char hostname[256];
	char where[300];	/* ADDR:PORT as bound (PORT 0 picked one) */
	struct openmetrics_label labels[4];
	/* The publisher's alone: each process's series, kept from one rendering to the next. */
	struct process_series {
		pid_t pid;
		struct openmetrics_series series;
	} *series;
	size_t n_series;
} server = { .listen_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* --- rendering ------------------------------------------------------------------------------- */

static int render(enum metrics_format format, const struct openmetrics_session *session,
		  const struct openmetrics_process *p, size_t n, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);
	if (!f)
		return -errno;
	int err = openmetrics_write(f, format, session, p, n, server.top_kernels);
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (err) {
		free(*text);
		*text = NULL;
	}
	return err;
}

/* The series kept for pid (made on first use); NULL when out of memory. A process is never
 * forgotten: its figures stay after it ends, and so do its series (at most
 * STATS_MAX_PROCESSES). */
static struct openmetrics_series *series_of(pid_t pid)
{
	for (size_t i = 0; i < server.n_series; i++)
		if (server.series[i].pid == pid)
			return &server.series[i].series;
	struct process_series *grown = realloc(server.series, (server.n_series + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	server.series = grown;
	grown[server.n_series].pid = pid;
	openmetrics_series_init(&grown[server.n_series].series);
	return &grown[server.n_series++].series;
}

/* One traced process's figures, as rendered. */
struct process_figures {
	struct stats_snapshot snap;
	struct rows rows;
};

/* Every traced process's own figures (stats_snapshot_of), rendered in both formats and
 * published. The publisher thread's alone: the snapshots' copies are the only moments the
 * tracer may wait (on the figures' lock, as for the TUI's refresh), once per refresh. */
static void publish(void)
{
	struct stats_snapshot all;
	struct published fresh = { 0 };
	/* The list of processes; none before the first is traced (stats_snapshot fails then). */
	bool have_all = stats_snapshot(&all) == 0;
	size_t n = 0, cap = have_all ? all.n_proc : 0;
	struct process_figures *figs = calloc(cap ? cap : 1, sizeof(*figs));
	struct openmetrics_process *procs = calloc(cap ? cap : 1, sizeof(*procs));
	struct job *job = job_live_copy(server.job_live);	/* its own lock, not the figures' */
	int err = figs && procs ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < cap; i++) {
		const struct stats_process_info *info = &all.proc[i].info;
		struct process_figures *pf = &figs[n];
		struct openmetrics_series *series = series_of(info->pid);

		if (!series || stats_snapshot_of(info->pid, &pf->snap) < 0) {
			err = -ENOMEM;
			break;
		}
		if (rows_build(&pf->rows, &pf->snap, NULL) < 0) {
			stats_snapshot_free(&pf->snap);
			err = -ENOMEM;
			break;
		}
		procs[n++] = (struct openmetrics_process){
			.pid = info->pid, .rank = info->rank, .local_rank = info->local_rank,
			.job_id = info->job_id, .running = !info->ended,
			.command = info->command, .snap = &pf->snap, .rows = &pf->rows, .series = series,
		};
		for (int k = 0; job && !info->ended && k < job->n; k++)
			if (job->proc[k].pid == info->pid)
				procs[n - 1].job = &job->proc[k];
	}
	struct openmetrics_session session = {
		.tracer_cpu_ns = have_all ? all.tracer_cpu_ns : 0,
		.labels = server.labels, .n_labels = sizeof server.labels / sizeof server.labels[0],
	};
	for (int fmt = 0; fmt < 2 && !err; fmt++)
		err = render(fmt, &session, procs, n, &fresh.text[fmt], &fresh.len[fmt]);
	for (size_t i = 0; i < n; i++) {
		rows_free(&figs[i].rows);
		stats_snapshot_free(&figs[i].snap);
	}
	free(figs);
	free(procs);
	job_free(job);
	if (have_all)
		stats_snapshot_free(&all);
	if (err) {
		free(fresh.text[0]);
		log_debug("metrics: cannot render: %s", strerror(-err));
		return;
	}
	pthread_mutex_lock(&server.lock);
	struct published old = server.published;
	server.published = fresh;
	pthread_mutex_unlock(&server.lock);
	free(old.text[0]);
	free(old.text[1]);
}

static void *publisher_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&server.lock);
	while (!server.stopping) {
		pthread_mutex_unlock(&server.lock);
		publish();
		pthread_mutex_lock(&server.lock);
		struct timespec until = deadline_in(server.refresh_s);
		while (!server.stopping &&
		       pthread_cond_timedwait(&server.wake, &server.lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&server.lock);
	return NULL;
}

/* --- HTTP -------------------------------------------------------------------------------------- */

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned int status, const char *text,
				   const char *allow)
{
	struct MHD_Response *r = server.mhd.create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	server.mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow)
		server.mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	enum MHD_Result ret = server.mhd.queue_response(c, status, r);
	server.mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result answer_metrics(struct MHD_Connection *c)
{
	const char *accept = server.mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	enum metrics_format fmt = openmetrics_negotiate(accept);

	pthread_mutex_lock(&server.lock);
	struct MHD_Response *r = server.published.text[fmt]
		? server.mhd.create_response_from_buffer(server.published.len[fmt], server.published.text[fmt],
						  MHD_RESPMEM_MUST_COPY)
		: NULL;
	pthread_mutex_unlock(&server.lock);
	if (!r)
		return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "gputop: no figures yet\n", NULL);
	server.mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, openmetrics_content_type(fmt));
	enum MHD_Result ret = server.mhd.queue_response(c, MHD_HTTP_OK, r);
	server.mhd.destroy_response(r);
	return ret;
}

/* Every request: /metrics by GET (or HEAD); anything else is answered at once, a body never read.
 * A GET (or HEAD) is answered at the second call, once libmicrohttpd has the whole request: answered at
 * the first, it closes the connection (no keep-alive for the scraper). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	static const char seen = 1;	/* its address marks a request seen once */

	(void)cls, (void)version, (void)upload_data;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;

	if (!*req_cls && get && strcmp(url, "/metrics") == 0 && !*upload_data_size) {
		*req_cls = (void *)&seen;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics") != 0)
		return answer_text(c, MHD_HTTP_NOT_FOUND, "gputop serves only /metrics\n", NULL);
	if (!get)
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n", "GET, HEAD");
	return answer_metrics(c);
}

/* libmicrohttpd's own complaints (a client that sent garbage...) are no news for the user. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];
	(void)cls;
	vsnprintf(msg, sizeof msg, fmt, ap);
	log_debug("metrics: %s", msg);
}

/* --- the socket ------------------------------------------------------------------------------- */

/* [ADDR:]PORT into host and port; "[::1]:9464" gives "::1". */
static int split_listen(const char *addr, char *host, size_t host_len, char *port, size_t port_len)
{
	const char *colon = strrchr(addr, ':');
	const char *h = "127.0.0.1", *h_end = NULL;

	if (colon) {
		h = addr, h_end = colon;
		if (*h == '[' && h_end > h && h_end[-1] == ']')
			h++, h_end--;
	}
	size_t hl = h_end ? (size_t)(h_end - h) : strlen(h);
	const char *p = colon ? colon + 1 : addr;
	if (!hl || hl >= host_len || !*p || strlen(p) >= port_len)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	snprintf(port, port_len, "%s", p);
	return 0;
}

static int open_listen_socket(const char *addr, char *where, size_t where_len)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai;
	int err, fd = -1;

	if (split_listen(addr, host, sizeof host, port, sizeof port) < 0) {
		log_error("cannot listen on '%s': expected [ADDR:]PORT", addr);
		return -EINVAL;
	}
	if ((err = getaddrinfo(host, port, &hints, &ai)) != 0) {
		log_error("cannot listen on '%s': %s", addr, gai_strerror(err));
		return -EINVAL;
	}
	err = 0;
	for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
		int one = 1;
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
				bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, METRICS_BACKLOG) < 0)) {
			err = -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		log_error("cannot listen on '%s': %s", addr, strerror(err ? -err : EADDRNOTAVAIL));
		return err ? err : -EADDRNOTAVAIL;
	}
	struct sockaddr_storage sa;
	socklen_t sl = sizeof sa;
	char h[NI_MAXHOST], s[NI_MAXSERV];
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&sa, sl, h, sizeof h, s, sizeof s, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(where, where_len, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, s);
	else
		snprintf(where, where_len, "%s", addr);
	return fd;
}

/* --- start and stop ----------------------------------------------------------------------------- */

/* --linger: the metrics server goes on serving the last figures until deadline (the scrapes
 * that come after a short job's end, which Prometheus would otherwise never collect). A person's
 * SIGINT or SIGQUIT ends it at once; SIGTERM and SIGHUP do not: a Kubernetes native sidecar gets
 * SIGTERM as soon as the trainer has ended, which is when the linger is wanted, and the kubelet's
 * SIGKILL after the grace period can harm nothing, as nothing is traced any more. */
void metrics_server_linger(uint64_t deadline, int (*take_signal)(void))
{
	uint64_t now = now_ns();
	if (now >= deadline)
		return;
	log_info("serving the last figures on http://%s/metrics for %.0f s more (Ctrl-C ends it)",
		 metrics_server_where(), (double)(deadline - now) / 1e9);
	(void)take_signal();	/* the one that ended the tracing, if any */
	while (now_ns() < deadline) {
		int sig = take_signal();
		if (sig == SIGINT || sig == SIGQUIT)
			break;
		struct timespec step = { .tv_nsec = 50000000 };
		nanosleep(&step, NULL);
	}
}

const char *metrics_server_where(void)
{
	return server.where;
}

/* The labels of where gputop runs: this host's name, and the Kubernetes pod's where the
 * sidecar's environment names it (gputop(1), METRICS). */
static void set_session_labels(void)
{
	if (gethostname(server.hostname, sizeof server.hostname) < 0)
		server.hostname[0] = 0;
	server.hostname[sizeof server.hostname - 1] = 0;
	server.labels[0] = (struct openmetrics_label){ "hostname", server.hostname };
	server.labels[1] = (struct openmetrics_label){ "k8s_namespace", config.pod_namespace };
	server.labels[2] = (struct openmetrics_label){ "k8s_pod", config.pod_name };
	server.labels[3] = (struct openmetrics_label){ "k8s_node", config.node_name };
}

int metrics_server_start(const char *addr, double refresh_s, size_t top_kernels, struct job_live *job_live)
{
	char where[300], why[256];
	if (mhd_lib_load(&server.mhd, why, sizeof why) < 0) {
		log_error("cannot listen on '%s': the HTTP server library is missing: %s", addr, why);
		log_hint("install libmicrohttpd (Debian and Ubuntu: apt install libmicrohttpd12)");
		return -ENOENT;
	}
	int fd = open_listen_socket(addr, where, sizeof where);
	if (fd < 0)
		return fd;
	server.listen_fd = fd;
	/* Room for the connections (the program gputop starts gets the limit back, target.c). */
	long files = fdlimit_raise(METRICS_MAX_CONNECTIONS + METRICS_RESERVED_FILES);
	unsigned int connections = files > 2 * METRICS_RESERVED_FILES ? (unsigned int)(files - METRICS_RESERVED_FILES)
								    : (unsigned int)files / 2;
	if (connections > METRICS_MAX_CONNECTIONS)
		connections = METRICS_MAX_CONNECTIONS;
	unsigned int per_address = connections * 3 / 4 < METRICS_MAX_PER_ADDRESS ? connections * 3 / 4
										  : METRICS_MAX_PER_ADDRESS;
	log_debug("metrics: at most %u connections, %u from one address", connections, per_address);
	server.refresh_s = refresh_s > 0 ? refresh_s : 1;
	server.top_kernels = top_kernels;
	server.job_live = job_live;
	server.stopping = false;
	set_session_labels();
	pthread_condattr_t ca;	/* the publisher's timed waits on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&server.wake, &ca);
	pthread_condattr_destroy(&ca);

	/* The daemon's and the publisher's threads take no signal: gputop's signals must reach
	 * the tracer thread (they interrupt its waitpid). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	server.daemon = server.mhd.start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_REQUEST_BYTES,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_IDLE_SECONDS,
		MHD_OPTION_END);
	int err = server.daemon ? 0 : EIO;
	if (!err) {
		err = pthread_create(&server.publisher, NULL, publisher_main, NULL);
		server.publisher_running = err == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		log_error("cannot serve metrics on %s: %s", where,
			  server.daemon ? strerror(err) : "the HTTP server did not start");
		metrics_server_stop();
		return -err;
	}
	log_info("serving metrics on http://%s/metrics", where);
	snprintf(server.where, sizeof server.where, "%s", where);
	return 0;
}

void metrics_server_stop(void)
{
	if (server.publisher_running) {
		pthread_mutex_lock(&server.lock);
		server.stopping = true;
		pthread_cond_signal(&server.wake);
		pthread_mutex_unlock(&server.lock);
		pthread_join(server.publisher, NULL);
		server.publisher_running = false;
	}
	if (server.daemon)
		server.mhd.stop_daemon(server.daemon);	/* closes the listening socket too */
	else if (server.listen_fd >= 0)
		close(server.listen_fd);
	server.daemon = NULL;
	server.listen_fd = -1;
	for (int i = 0; i < 2; i++)
		free(server.published.text[i]);
	memset(&server.published, 0, sizeof server.published);
	for (size_t i = 0; i < server.n_series; i++)
		openmetrics_series_free(&server.series[i].series);
	free(server.series);
	server.series = NULL;
	server.n_series = 0;
}
