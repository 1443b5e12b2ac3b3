/* tui.c — the live ncurses TUI (issue 3). Until it lands, the TUI mode shows the batch
 * tables instead, so a terminal user still sees figures. */
#include "ui.h"

int tui_run(const struct options *opt)
{
	return batch_run(opt);
}

