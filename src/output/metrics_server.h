/* metrics_server.h — --listen: GET /metrics over HTTP (libmicrohttpd) for Prometheus and other
 * scrapers. A thread of its own takes a snapshot of the figures every refresh and renders it;
 * requests are answered from that rendered text, so neither a scraper nor a flood of clients
 * ever waits on, or makes wait, the tracer. Nothing here touches the traced program. */
#ifndef GPUTOP_METRICS_SERVER_H
#define GPUTOP_METRICS_SERVER_H

#include <stddef.h>
#include <stdint.h>

/* Limits that hold against slow or hostile clients (documented in gputop(1)). Connections are
 * cheap (one epoll thread, a request's memory only once it comes): many of them, so that
 * half-open or idle ones (slowloris, a flood) leave room for a scraper; no single address takes
 * them all, so that a scraper from another one always gets in. */
#define METRICS_MAX_CONNECTIONS	4096	/* at most; fewer where gputop may not open that many
					 * files; more wait in the listen queue */
#define METRICS_MAX_PER_ADDRESS	3072	/* from one client address */
#define METRICS_BACKLOG		4096	/* the listen queue (the kernel may cap it: somaxconn) */
#define METRICS_RESERVED_FILES	256	/* files kept for gputop's own work */
#define METRICS_REQUEST_BYTES	16384	/* request line and headers; larger: 431/413, closed */
#define METRICS_IDLE_SECONDS	10	/* a connection silent this long is closed */

/* Binds [ADDR:]PORT (ADDR 127.0.0.1 when not given; PORT 0 picks a free one) and starts
 * serving; the figures of the session's process appear once it is started (session_state).
 * refresh_s: how often the published text is renewed; top_kernels: kernel series per process;
 * job_live: the live picture of the job, for the gputop_job_* gauges (NULL: none).
 * Returns 0, or -errno after saying why on stderr ("cannot listen on ...: ..."). */
struct job_live;
int metrics_server_start(const char *addr, double refresh_s, size_t top_kernels, struct job_live *job_live);
/* Where it serves, ADDR:PORT as bound ("" when not serving). */
const char *metrics_server_where(void);
/* --linger: serves the last figures until deadline (CLOCK_MONOTONIC ns); take_signal: the
 * stop signal that came since it was last asked (0: none); SIGINT or SIGQUIT ends it at once. */
void metrics_server_linger(uint64_t deadline, int (*take_signal)(void));
/* Stops serving and frees everything; no-op when not started. */
void metrics_server_stop(void);

#endif
