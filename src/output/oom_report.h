/* oom_report.h — the report of an out-of-memory (--oom-report, and the line gputop says): the
 * failed request, PyTorch's allocator at that moment (reserved, allocated, free in segments, the
 * largest free block against the request: fragmentation or not), live bytes by line and the
 * largest blocks, from a snapshot (figures/torch_shot.h). Text; written whole at once. */
#ifndef GPUTOP_OOM_REPORT_H
#define GPUTOP_OOM_REPORT_H

#include <stdio.h>

#include "torch_shot.h"

/* s: NULL where PyTorch's allocator is not followed. */
void oom_report_print(FILE *f, const struct torch_oom *o, const struct torch_shot *s);
/* One line: the request and the verdict. */
void oom_report_line(char *buf, size_t size, const struct torch_oom *o, const struct torch_shot *s);
int oom_report_write(const char *path, const struct torch_oom *o, const struct torch_shot *s);

#endif
