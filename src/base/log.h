/* log.h — messages to the user: "gputop: ..." on stderr, or, while the TUI owns the terminal,
 * into the TUI's status line. Errors are written once, where the decision is made. */
#ifndef GPUTOP_LOG_H
#define GPUTOP_LOG_H

#include <stdbool.h>

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* "  hint: ..." */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* GPUTOP_DEBUG=1 */

/* While the TUI is up, messages go to sink instead of stderr (NULL restores stderr). */
void log_set_sink(void (*sink)(const char *msg));
void log_set_quiet(int quiet);	/* -q: info messages off */
/* Whether subject (a string literal's address, one per thing said once a session, as the
 * kernel's pr_warn_once) is asked about for the first time. */
bool log_first(const char *subject);

#endif
