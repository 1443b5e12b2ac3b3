/* log.c — where messages go; see log.h. */
#include "config.h"
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"

static struct {
	void (*log_sink)(const char *msg);
	int quiet;
	pthread_mutex_t lock;
	uint64_t first_ns;	/* of the first message, GPUTOP_DEBUG's times count from */
	const char *said[16];	/* log_first's subjects seen */
	int n_said;
} logs = { .lock = PTHREAD_MUTEX_INITIALIZER };

bool log_first(const char *subject)
{
	bool first = true;
	pthread_mutex_lock(&logs.lock);
	for (int i = 0; i < logs.n_said && first; i++)
		first = logs.said[i] != subject;
	if (first && logs.n_said < (int)(sizeof logs.said / sizeof logs.said[0]))
		logs.said[logs.n_said++] = subject;
	pthread_mutex_unlock(&logs.lock);
	return first;
}

void log_set_sink(void (*sink)(const char *msg))
{
	pthread_mutex_lock(&logs.lock);
	logs.log_sink = sink;
	pthread_mutex_unlock(&logs.lock);
}

void log_set_quiet(int q)
{
	logs.quiet = q;
}

/* GPUTOP_DEBUG: every message on stderr says when, in seconds since the first one (as
 * strace -r does), so that a slow start, attach or exit shows where its time went. */
static void emit(const char *prefix, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	pthread_mutex_lock(&logs.lock);
	if (!logs.first_ns)
		logs.first_ns = now_ns();
	if (config.debug)	/* also under the TUI: GPUTOP_DEBUG=1 gputop ... 2>FILE */
		fprintf(stderr, "%9.3f %s%s\n", (double)(now_ns() - logs.first_ns) / 1e9, prefix, msg);
	if (logs.log_sink && !(config.debug && prefix[6] == '['))
		logs.log_sink(msg);
	else if (!config.debug)
		fprintf(stderr, "%s%s\n", prefix, msg);
	pthread_mutex_unlock(&logs.lock);
}

#define EMIT(prefix)                       \
	do {                               \
		va_list ap;                \
		va_start(ap, fmt);         \
		emit(prefix, fmt, ap);     \
		va_end(ap);                \
	} while (0)

void log_error(const char *fmt, ...)
{
	EMIT("gputop: ");
}

void log_warn(const char *fmt, ...)
{
	EMIT("gputop: warning: ");
}

void log_info(const char *fmt, ...)
{
	if (!logs.quiet)
		EMIT("gputop: ");
}

void log_hint(const char *fmt, ...)
{
	EMIT("  hint: ");
}

void log_debug(const char *fmt, ...)
{
	if (config.debug)
		EMIT("gputop[debug]: ");
}
