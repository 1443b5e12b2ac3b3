/* meters.c — the GPUs' meters for the TUI and -b (meters.h). */
#include "meters.h"
#include "crt.h"
#include "format.h"

#include <stdio.h>
#include <string.h>

#define METER_LABEL_W	5	/* "GPU0 " */
#define METER_BAR_MIN	14
#define METER_BAR_MAX	40

int meters_lines(const struct devices_snapshot *d)
{
	return d->available && d->n_dev ? d->n_dev + (d->n_proc ? 1 : 0) : 0;
}

/* "45°C  123 W  SM 1980 MHz  PCIe tx 1.02 MB/s rx 2.05 MB/s": what NVML told, in that order. */
static void meters_extras(char *buf, size_t n, const struct device_meter *m, const char *sep)
{
	const struct nvml_device_reading *r = &m->r;
	char tx[32], rx[32];
	size_t used = 0;

	buf[0] = '\0';
	if (r->temp_c >= 0)
		used += (size_t)snprintf(buf + used, n - used, "%d%s%s", r->temp_c, fmt_ascii() ? "C" : "\u00b0C", sep);
	if (r->power_mw >= 0 && used < n)
		used += (size_t)snprintf(buf + used, n - used, "%.0f W%s", r->power_mw / 1000.0, sep);
	if (r->sm_mhz >= 0 && used < n)
		used += (size_t)snprintf(buf + used, n - used, "SM %d MHz%s", r->sm_mhz, sep);
	if (r->pcie_tx_kbs >= 0 && r->pcie_rx_kbs >= 0 && used < n) {
		/* NVML counts PCIe throughput in KB/s */
		fmt_rate(tx, sizeof(tx), (uint64_t)r->pcie_tx_kbs * 1024, 1000000000u);
		fmt_rate(rx, sizeof(rx), (uint64_t)r->pcie_rx_kbs * 1024, 1000000000u);
		used += (size_t)snprintf(buf + used, n - used, "PCIe tx %s rx %s%s", tx, rx, sep);
	}
	if (m->nvlink_tx_bps >= 0 && m->nvlink_rx_bps >= 0 && used < n) {
		fmt_rate(tx, sizeof(tx), (uint64_t)m->nvlink_tx_bps, 1000000000u);
		fmt_rate(rx, sizeof(rx), (uint64_t)m->nvlink_rx_bps, 1000000000u);
		used += (size_t)snprintf(buf + used, n - used, "NVLink tx %s rx %s%s", tx, rx, sep);
	}
	if (used >= strlen(sep) && used < n)
		buf[used - strlen(sep)] = '\0';
}

static void meters_memory(char *buf, size_t n, const struct nvml_device_reading *r)
{
	char used[32], total[32];

	if (!r->mem_known) {
		snprintf(buf, n, "%s", fmt_dash());
		return;
	}
	fmt_bytes(used, sizeof(used), r->mem_used);
	fmt_bytes(total, sizeof(total), r->mem_total);
	snprintf(buf, n, "%s/%s", used, total);
}

/* "PID 1234 on GPU0: 301 MiB device memory, SM 61%", or why it is not known. */
static void meters_process(char *buf, size_t n, const struct devices_snapshot *d, pid_t pid)
{
	struct row_unseen u;
	char bytes[32], gpus[64] = "", sm[32] = "";
	const struct device_process *p = devices_find(d, pid);

	device_rows_unseen(&u, d, pid, 0, false);
	if (!u.known && u.peak_bytes) {
		fmt_bytes(bytes, sizeof(bytes), u.peak_bytes);
		snprintf(buf, n, "PID %d: %s (its peak: %s device memory)", (int)pid, u.why, bytes);
		return;
	}
	if (!u.known) {
		snprintf(buf, n, "PID %d: %s", (int)pid, u.why);
		return;
	}
	for (int i = 0, used = 0; p && i < d->n_dev && used < (int)sizeof(gpus); i++)
		if (p->device_mask & (1u << i))
			used += snprintf(gpus + used, sizeof(gpus) - (size_t)used, "%sGPU%d",
					 used ? "," : "", d->dev[i].index);
	fmt_bytes(bytes, sizeof(bytes), u.process_bytes);
	if (u.sm_util >= 0)
		snprintf(sm, sizeof(sm), ", SM %d%%", u.sm_util);
	snprintf(buf, n, "PID %d on %s: %s device memory%s", (int)pid, gpus, bytes, sm);
}

void meters_unseen_text(char *buf, size_t n, const struct row_unseen *u)
{
	char total[32], seen[32], unseen[32];

	if (!u->known && u->before_attach) {
		snprintf(buf, n, "GPU memory: live since the attach; what was allocated before it is not seen "
			 "(how much: not known, %s)", u->why);
		return;
	}
	if (!u->known) {
		snprintf(buf, n, "GPU memory of the process: not known (%s)", u->why);
		return;
	}
	fmt_bytes(total, sizeof(total), u->process_bytes);
	fmt_bytes(seen, sizeof(seen), u->seen_bytes);
	fmt_bytes(unseen, sizeof(unseen), u->unseen_bytes);
	snprintf(buf, n, "GPU memory (NVML): %s = %s seen allocated + %s %s", total, seen, unseen,
		 u->label);
}

/* "[||||||||         37%]": inner width-2 columns, the text right-aligned over the bar. */
static void meters_bar(char *buf, size_t n, int width, double fraction, const char *text)
{
	int inner = width - 2, fill, tw = fmt_width(text), i;

	if (inner < 1 || (size_t)width + 1 > n) {
		snprintf(buf, n, "%s", text);
		return;
	}
	fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
	fill = (int)(fraction * inner + 0.5);
	buf[0] = '[';
	for (i = 0; i < inner; i++)
		buf[1 + i] = i < fill ? '|' : ' ';
	buf[1 + inner] = ']';
	buf[2 + inner] = '\0';
	if (tw <= inner && (size_t)tw == strlen(text))	/* ASCII text only: overlaid byte for byte */
		memcpy(buf + 1 + inner - tw, text, (size_t)tw);
}

static void meters_device_line(WINDOW *w, int y, int width, const struct device_meter *m)
{
	const struct nvml_device_reading *r = &m->r;
	char label[16], extras[256], mem[64], util[16], bar[METER_BAR_MAX + 8];
	int x = 0, rest, bw;

	snprintf(label, sizeof(label), "GPU%d", m->index);
	tui_put(w, y, x, METER_LABEL_W, tui_attr(TC_LABEL), label);
	x += METER_LABEL_W;
	if (!m->readable) {
		tui_put(w, y, x, width - x, tui_attr(TC_WARN), "NVML cannot read this GPU");
		return;
	}
	meters_extras(extras, sizeof(extras), m, "  ");
	meters_memory(mem, sizeof(mem), r);
	/* Two bars share what the figures and the name (its first 24 columns) leave. */
	rest = fmt_width(extras) + 2 + (fmt_width(r->name) < 24 ? fmt_width(r->name) : 24);
	bw = (width - x - 4 - 1 - rest) / 2;
	bw = bw > METER_BAR_MAX ? METER_BAR_MAX : bw;
	bw = bw < fmt_width(mem) + 4 ? fmt_width(mem) + 4 : bw < METER_BAR_MIN ? METER_BAR_MIN : bw;
	if (r->util_gpu >= 0)
		snprintf(util, sizeof(util), "%d%%", r->util_gpu);
	else
		snprintf(util, sizeof(util), "%s", fmt_dash());
	meters_bar(bar, sizeof(bar), bw, r->util_gpu / 100.0, util);
	tui_put(w, y, x, width - x, tui_attr(r->util_gpu >= 90 ? TC_WARN : TC_VALUE), bar);
	x += bw + 1;
	tui_put(w, y, x, width - x, tui_attr(TC_LABEL), "Mem");
	x += 3;
	meters_bar(bar, sizeof(bar), bw,
		   r->mem_known && r->mem_total ? (double)r->mem_used / (double)r->mem_total : 0, mem);
	tui_put(w, y, x, width - x, tui_attr(TC_VALUE), bar);
	x += bw + 2;
	if (x < width)
		tui_put(w, y, x, width - x, tui_attr(TC_NORMAL), extras);
	x += fmt_width(extras) + 2;
	if (x < width)
		tui_put(w, y, x, width - x, tui_attr(TC_DIM), r->name);
}

int meters_draw(WINDOW *w, int y, int width, int max_lines, const struct devices_snapshot *d,
		pid_t pid)
{
	/* The process's line stays when not every GPU fits: it is what gputop is about. */
	int proc = d->available && d->n_proc && max_lines > 0 ? 1 : 0;
	int shown = d->available ? d->n_dev : 0;
	char line[512];

	if (shown > max_lines - proc)
		shown = max_lines - proc > 0 ? max_lines - proc : 0;
	for (int i = 0; i < shown; i++)
		meters_device_line(w, y + i, width, &d->dev[i]);
	if (proc) {
		meters_process(line, sizeof(line), d, pid);
		tui_put(w, y + shown, 0, width, tui_attr(TC_NORMAL), line);
	}
	return shown + proc;
}

void meters_print(FILE *f, const struct devices_snapshot *d, pid_t pid)
{
	char extras[256], mem[64], line[512];

	if (!d->available)
		return;
	for (int i = 0; i < d->n_dev; i++) {
		const struct device_meter *m = &d->dev[i];

		if (!m->readable) {
			fprintf(f, "GPU%d: NVML cannot read this GPU\n", m->index);
			continue;
		}
		meters_extras(extras, sizeof(extras), m, ", ");
		meters_memory(mem, sizeof(mem), &m->r);
		if (m->r.util_gpu >= 0)
			fprintf(f, "GPU%d %s: util %d%%, mem %s%s%s\n", m->index, m->r.name, m->r.util_gpu,
				mem, extras[0] ? ", " : "", extras);
		else
			fprintf(f, "GPU%d %s: util %s, mem %s%s%s\n", m->index, m->r.name, fmt_dash(), mem,
				extras[0] ? ", " : "", extras);
	}
	if (d->n_proc) {
		meters_process(line, sizeof(line), d, pid);
		fprintf(f, "%s\n", line);
	}
}
