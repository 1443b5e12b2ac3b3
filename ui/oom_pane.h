/* oom_pane.h — the Memory view frozen at the last out-of-memory (key O), over the live one. */
#ifndef GPUTOP_OOM_PANE_H
#define GPUTOP_OOM_PANE_H

#include "torch_mem.h"

/* Draws it over a screen of h x w from line scroll on; returns scroll, kept within its lines. */
int oom_pane_draw(int h, int w, const struct torch_snapshot *snap, int scroll);

#endif
