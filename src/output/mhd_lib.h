/* mhd_lib.h — libmicrohttpd, --listen's HTTP server, through dlopen: loaded only when --listen
 * is given, so that a gputop without it maps no HTTP or TLS library (libmicrohttpd pulls in
 * GnuTLS) into itself. The types and constants are the header's; the functions are these. */
#ifndef GPUTOP_MHD_LIB_H
#define GPUTOP_MHD_LIB_H

#include <stddef.h>
#include <microhttpd.h>

#define MHD_LIB_SONAME "libmicrohttpd.so.12"

struct mhd_lib {
	void *lib;	/* dlopen's handle; NULL until loaded */
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
};

/* Loads the library into *mhd once (it stays loaded). 0, or -ENOENT with why it could not in
 * why. */
int mhd_lib_load(struct mhd_lib *mhd, char *why, size_t why_len);

#endif
