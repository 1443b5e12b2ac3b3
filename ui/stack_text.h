/* stack_text.h — call stacks as text, written once for the TUI's stack panes and -b: one
 * line per frame, and the "by site" block of -b and the final summary. */
#ifndef GPUTOP_STACK_TEXT_H
#define GPUTOP_STACK_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "rows.h"
#include "stacks.h"

/* "leak_b at /src/app.c:25 [app]", "grow at train.py:57 [python]", "cudaMalloc [libcudart.so.13]". */
void stack_text_frame(char *buf, size_t n, const struct stack_frame *f);
/* The same with the file's base name alone: "leak_b at app.c:25 [app]", for table cells. */
void stack_text_frame_brief(char *buf, size_t n, const struct stack_frame *f);

/* Live memory by allocation site, largest first, at most max sites, each with its stack
 * (at most max_frames frames); nothing when no allocation has a stack. */
void stack_text_sites(FILE *out, const struct rows *rs, size_t max, size_t max_frames);

#endif
