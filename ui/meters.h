/* meters.h — the GPUs' meters (NVML, devices.h) as htop shows its CPU meters: a bar each for
 * utilization and memory with temperature, power, SM clock and PCIe beside them, then the
 * traced process's own device memory and SM utilization. Drawn at the top of the TUI and
 * printed by -b, from the same text. Reads a devices snapshot only. */
#ifndef GPUTOP_METERS_H
#define GPUTOP_METERS_H

#include <curses.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "device_rows.h"
#include "devices.h"

/* Lines meters_draw needs for d: one per GPU and one for the process; 0 without NVML. */
int meters_lines(const struct devices_snapshot *d);
/* Draws at most max_lines from row y; returns the lines drawn. */
int meters_draw(WINDOW *w, int y, int width, int max_lines, const struct devices_snapshot *d,
		pid_t pid);
/* -b: the same meters as plain lines ("GPU0 ...: util 37%, mem ..."); nothing without NVML. */
void meters_print(FILE *f, const struct devices_snapshot *d, pid_t pid);
/* "GPU memory (NVML): 301 MiB = 1.00 MiB seen allocated + 300 MiB <label>", or why not known. */
void meters_unseen_text(char *buf, size_t n, const struct row_unseen *u);

#endif
