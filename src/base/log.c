/* log.c — where messages go; see log.h. */
#include "config.h"
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"

static void (*log_sink)(const char *msg);
static int quiet;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_sink(void (*sink)(const char *msg))
{
	pthread_mutex_lock(&lock);
	log_sink = sink;
	pthread_mutex_unlock(&lock);
}

void log_set_quiet(int q)
{
	quiet = q;
}

/* GPUTOP_DEBUG: every message on stderr says when, in seconds since the first one (as
 * strace -r does), so that a slow start, attach or exit shows where its time went. */
static void emit(const char *prefix, const char *fmt, va_list ap)
{
	static uint64_t first_ns;
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	pthread_mutex_lock(&lock);
	if (!first_ns)
		first_ns = now_ns();
	if (config.debug)	/* also under the TUI: GPUTOP_DEBUG=1 gputop ... 2>FILE */
		fprintf(stderr, "%9.3f %s%s\n", (double)(now_ns() - first_ns) / 1e9, prefix, msg);
	if (log_sink && !(config.debug && prefix[6] == '['))
		log_sink(msg);
	else if (!config.debug)
		fprintf(stderr, "%s%s\n", prefix, msg);
	pthread_mutex_unlock(&lock);
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
	if (!quiet)
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
