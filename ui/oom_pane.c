/* oom_pane.c — the pane the key O opens: the Memory view as it was at the last out-of-memory
 * (its report's text, read at the failing instant: blocks by line, the largest blocks, the
 * fragmentation verdict), titled as frozen at that instant. Draws only. */
#include "oom_pane.h"
#include "crt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

#define PANE_LINES 256

int oom_pane_draw(int h, int w, const struct torch_snapshot *snap, int scroll)
{
	const char *line[PANE_LINES];
	int len[PANE_LINES], n = 0;
	for (const char *s = snap->oom_view; s && *s && n < PANE_LINES; n++) {
		const char *e = strchr(s, '\n');
		line[n] = s;
		len[n] = e ? (int)(e - s) : (int)strlen(s);
		s = e ? e + 1 : s + len[n];
	}
	/* Its time on the wall clock: now, less how long ago it was. */
	uint64_t ago = now_ns() > snap->oom_view_ns ? now_ns() - snap->oom_view_ns : 0;
	time_t at = time(NULL) - (time_t)(ago / 1000000000ull);
	struct tm tm;
	char title[160], when[16];
	strftime(when, sizeof when, "%H:%M:%S", localtime_r(&at, &tm));
	snprintf(title, sizeof title, " Memory of %d FROZEN at the out-of-memory, %s (%llu s ago) ",
		 (int)snap->oom_view_pid, when, (unsigned long long)(ago / 1000000000ull));
	int bw = w - 2, bh = n + 4 < h - 2 ? n + 4 : h - 2, y0 = (h - bh) / 2, x0 = 1;
	int rows = bh - 4, max = n > rows ? n - rows : 0;
	scroll = scroll > max ? max : scroll < 0 ? 0 : scroll;
	tui_box(stdscr, y0, x0, bh, bw);
	tui_put(stdscr, y0, x0 + 2, bw - 4, A_BOLD | A_REVERSE, title);
	for (int i = 0; i < rows && scroll + i < n; i++) {
		char text[512];
		snprintf(text, sizeof text, "%.*s", len[scroll + i], line[scroll + i]);
		tui_put(stdscr, y0 + 2 + i, x0 + 2, bw - 4, A_NORMAL, text);
	}
	tui_put(stdscr, y0 + bh - 1, x0 + 2, bw - 4, tui_attr(TC_DIM),
		max ? " Up/Down/PgUp/PgDn scroll; O or Esc: back to live " : " O or Esc: back to live ");
	return scroll;
}
