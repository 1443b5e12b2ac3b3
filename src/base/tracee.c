/* tracee.c — the current traced process (tracee.h). */
#include "tracee.h"

struct tracee *tracee;
