/* trace.c — the --trace lines (trace.h). */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"


/* The --trace file, and the first failed write's errno (nothing more is written then). */
static struct {
	FILE *out;
	int err;
} trace;

int trace_open(int fd)
{
	trace.err = 0;
	if (fd < 0) {
		trace.out = stderr;
		return 0;
	}
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0 || !(trace.out = fdopen(copy, "w"))) {
		int err = -errno;
		if (copy >= 0)
			close(copy);
		return err;
	}
	return 0;
}

int trace_close(void)
{
	int err = trace.err ? -trace.err : 0;
	if (trace.out && trace.out != stderr && fclose(trace.out) != 0 && !err)
		err = -errno;
	if (trace.out == stderr)
		err = 0;	/* not a file gputop answers for */
	trace.out = NULL;
	return err;
}

static void line(pid_t tid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(pid_t tid, const char *fmt, ...)
{
	va_list ap;
	if (trace.err)
		return;
	errno = 0;
	fprintf(trace.out, "[%d] ", tid);
	va_start(ap, fmt);
	vfprintf(trace.out, fmt, ap);
	va_end(ap);
	if (fputc('\n', trace.out) == EOF || ferror(trace.out))
		trace.err = errno ? errno : EIO;
}

static void trace_launch(pid_t tid, const char *api, const uint32_t g[3], const uint32_t b[3])
{
	if (trace.out)
		line(tid, "%s grid=(%u,%u,%u) block=(%u,%u,%u)", api, g[0], g[1], g[2], b[0], b[1], b[2]);
}

static void trace_graph_launch(pid_t tid, const char *api, uint64_t exec)
{
	if (trace.out)
		line(tid, "%s graph=0x%" PRIx64, api, exec);
}

static void trace_alloc(pid_t tid, const char *api, uint64_t ptr, uint64_t bytes)
{
	if (trace.out)
		line(tid, "%s -> 0x%" PRIx64 " (%" PRIu64 " bytes)", api, ptr, bytes);
}

static void trace_return(pid_t tid, const char *api, int err, const char *err_name, uint64_t ns)
{
	if (trace.out)
		line(tid, "%s = %d%s%s <%" PRIu64 " ns>", api, err, err ? " " : "", err ? (err_name ?: "") : "", ns);
}

static void trace_error(pid_t tid, const char *api, int err, const char *err_name)
{
	if (trace.out)
		line(tid, "%s = %d %s", api, err, err_name ?: "");
}

static void trace_on_call(struct tracee *p, const struct cuda_call *c)
{
	const struct api_spec *s = c->spec;
	if (!trace.out)
		return;
	if (c->returned && c->op != OP_ALLOC)
		trace_return(c->tid, cuda_api_label(s), c->result, cuda_error_name(s->layer, c->result), c->ns);
	if (!cuda_call_ok(c)) {
		if (c->op == OP_ALLOC)
			trace_error(c->tid, s->name, c->result, cuda_error_name(s->layer, c->result));
		return;
	}
	if (c->op == OP_ALLOC && c->alloc.ptr)
		trace_alloc(c->tid, s->name, c->alloc.ptr, c->alloc.bytes);
	else if (c->op == OP_LAUNCH)
		trace_launch(c->tid, s->name, c->launch.grid, c->launch.block);
	else if (c->op == OP_GRAPH_LAUNCH && c->source == CALL_STOPPED && !c->returned)
		trace_graph_launch(c->tid, s->name, c->graph.exec);
}

const struct cuda_consumer trace_consumer = {
	.name = "--trace",
	.launch_records = true,
	.call = trace_on_call,
};
