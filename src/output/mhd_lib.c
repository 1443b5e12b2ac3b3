/* mhd_lib.c — libmicrohttpd through dlopen (mhd_lib.h). Found as the dynamic linker finds any
 * library, and in `make dist`'s lib/ next to gputop (its $ORIGIN rpath). */
#include "mhd_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

int mhd_lib_load(struct mhd_lib *mhd, char *why, size_t why_len)
{
	if (mhd->lib)
		return 0;
	void *l = dlopen(MHD_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!l) {
		snprintf(why, why_len, "%s", dlerror());
		return -ENOENT;
	}
	struct { const char *name; void **fn; } syms[] = {
		{ "MHD_start_daemon", (void **)&mhd->start_daemon },
		{ "MHD_stop_daemon", (void **)&mhd->stop_daemon },
		{ "MHD_lookup_connection_value", (void **)&mhd->lookup_connection_value },
		{ "MHD_create_response_from_buffer", (void **)&mhd->create_response_from_buffer },
		{ "MHD_add_response_header", (void **)&mhd->add_response_header },
		{ "MHD_queue_response", (void **)&mhd->queue_response },
		{ "MHD_destroy_response", (void **)&mhd->destroy_response },
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].fn = dlsym(l, syms[i].name))) {
			snprintf(why, why_len, "%s lacks %s", MHD_LIB_SONAME, syms[i].name);
			dlclose(l);
			return -ENOENT;
		}
	mhd->lib = l;
	return 0;
}
