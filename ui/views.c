/* views.c — the tabs' views in their order (views.def), for the screen's tabs and the keys. */
#include "tui_internal.h"

const struct tui_view *const tui_views[TUI_VIEW_COUNT] = {
#define VIEW(v) &v,
#include "views.def"
#undef VIEW
};
