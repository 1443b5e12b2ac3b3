/* config.c — the GPUTOP_* environment, read once (config.h). */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct config config = { .follow = true, .launch_ring = true, .retfast = true, .call_stub = true, .spin_us = -1,
			  .stack_depth = CONFIG_STACK_DEPTH_DEFAULT, .stacks = 0 };

static bool is_off(const char *name)
{
	const char *e = getenv(name);
	return e && strcmp(e, "0") == 0;
}

void config_load(void)
{
	const char *e = getenv("GPUTOP_DEBUG");
	config.debug = e && *e && *e != '0';
	config.launch_ring = !is_off("GPUTOP_LAUNCH_RING");
	config.retfast = !is_off("GPUTOP_RETFAST");
	config.call_stub = !is_off("GPUTOP_CALL_STUB");
	e = getenv("GPUTOP_LAUNCH_RECORDS");
	config.launch_records = e && strcmp(e, "1") == 0;
	e = getenv("GPUTOP_LAUNCH_RING_CAP");
	config.launch_ring_cap = e && atol(e) > 0 ? (uint64_t)atol(e) : 0;
	e = getenv("GPUTOP_LAUNCH_LAYER");
	config.launch_layer_forced = e != NULL;
	config.launch_layer = !e ? LAUNCH_LAYER_AUTO : strcmp(e, "both") == 0 ? LAUNCH_LAYER_BOTH
			      : strcmp(e, "runtime") == 0 ? LAUNCH_LAYER_RUNTIME
			      : strcmp(e, "driver") == 0  ? LAUNCH_LAYER_DRIVER : LAUNCH_LAYER_AUTO;
	e = getenv("GPUTOP_SPIN_US");
	config.spin_us = e ? atol(e) : -1;
	e = getenv("GPUTOP_DUTY");
	config.duty = e ? atof(e) : -1;
	e = getenv("GPUTOP_CUPTI");
	config.cupti_path = e && *e ? e : NULL;
	e = getenv("GPUTOP_NVML");
	config.nvml_off = e && strcmp(e, "0") == 0;
	config.nvml_path = e && *e && !config.nvml_off ? e : NULL;
	e = getenv("GPUTOP_NVML_POLL_MS");
	config.nvml_poll_ms = e && atol(e) > 0 ? (unsigned)atol(e) : 500;
	config.pod_name = getenv("GPUTOP_POD_NAME");
	config.pod_namespace = getenv("GPUTOP_POD_NAMESPACE");
	config.node_name = getenv("GPUTOP_NODE_NAME");
	e = getenv("GPUTOP_TEST_CRASH");
	char name[16];
	unsigned long long n;
	if (e && sscanf(e, "%15[a-z]:%llu", name, &n) == 2) {
		config.crash_signal = strcmp(name, "abort") == 0 ? SIGABRT : SIGSEGV;
		config.crash_in_thread = strcmp(name, "thread") == 0;
		config.crash_at = n;
	}
}
