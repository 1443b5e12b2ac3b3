/* nvml_lib.c — libnvidia-ml.so.1 through dlopen (nvml_lib.h). There is no nvml.h to build
 * against: the few entry points and structures gputop uses are declared here as NVML's API
 * reference gives them (a wrong layout reads garbage, so each one says which version it is). */
#include "nvml_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
};
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_SM = 1 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
#define NVML_VALUE_NOT_AVAILABLE	(~0ULL)

typedef struct {		/* nvmlUtilization_t */
	unsigned int gpu, memory;
} nvml_utilization;

typedef struct {		/* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
} nvml_memory;

typedef struct {		/* nvmlProcessInfo_t as _v3 takes it: the v2 layout */
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvml_process_info;

typedef struct {		/* nvmlFieldValue_t */
	unsigned int fieldId, scopeId;
	long long timestamp;		/* µs */
	long long latencyUsec;
	int valueType;			/* nvmlValueType_t */
	nvmlReturn_t nvmlReturn;
	union { double d; unsigned int ui; unsigned long long ull; long long sll; } value;
} nvml_field_value;

/* NVLink data throughput counters (KiB, all links with scopeId UINT_MAX), nvml.h's field ids */
enum { NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139 };
enum { NVML_VALUE_TYPE_UNSIGNED_INT = 1, NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
       NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3 };

typedef struct {		/* nvmlProcessUtilizationSample_t */
	unsigned int pid;
	unsigned long long timeStamp;	/* µs, CPU time */
	unsigned int smUtil, memUtil, encUtil, decUtil;
} nvml_process_sample;

_Static_assert(sizeof(nvml_process_info) == 24, "nvmlProcessInfo_v2_t is 24 bytes");
_Static_assert(sizeof(nvml_process_sample) == 32, "nvmlProcessUtilizationSample_t is 32 bytes");
_Static_assert(sizeof(nvml_field_value) == 40, "nvmlFieldValue_t is 40 bytes");

static struct {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*utilization)(nvmlDevice_t, nvml_utilization *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvml_memory *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int *, nvml_process_info *);
	nvmlReturn_t (*process_util)(nvmlDevice_t, nvml_process_sample *, unsigned int *,
				     unsigned long long);
	nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvml_field_value *);
} N;

/* An optional entry point, as NVML answers where a function is missing. */
#define OPTIONAL(fn, ...) (N.fn ? N.fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

/* Big enough for any one GPU's processes (the buffers below, 64 KiB at most on the stack of
 * the thread that polls NVML). */
#define NVML_PROCS_MAX	1024

static void say(char *why, size_t n, const char *what, nvmlReturn_t r)
{
	const char *s = N.error_string ? N.error_string(r) : NULL;
	snprintf(why, n, "%s: %s", what, s ? s : "error");
}

int nvml_open(const char *path, char *why, size_t why_len)
{
	/* Only what gputop cannot do without is required: a driver that lacks a meter's entry
	 * point (an old one, or one that dropped a deprecated call) shows that meter as unknown. */
	static const struct { size_t offset; char name[48]; bool required; } entries[] = {
#define ENTRY(field, name, required) { offsetof(__typeof__(N), field), name, required }
		ENTRY(init, "nvmlInit_v2", true), ENTRY(shutdown, "nvmlShutdown", true),
		ENTRY(error_string, "nvmlErrorString", true), ENTRY(count, "nvmlDeviceGetCount_v2", true),
		ENTRY(handle, "nvmlDeviceGetHandleByIndex_v2", true),
		ENTRY(name, "nvmlDeviceGetName", false), ENTRY(uuid, "nvmlDeviceGetUUID", false),
		ENTRY(utilization, "nvmlDeviceGetUtilizationRates", false),
		ENTRY(memory, "nvmlDeviceGetMemoryInfo", false),
		ENTRY(temperature, "nvmlDeviceGetTemperature", false),
		ENTRY(power, "nvmlDeviceGetPowerUsage", false),
		ENTRY(clock, "nvmlDeviceGetClockInfo", false),
		ENTRY(pcie, "nvmlDeviceGetPcieThroughput", false),
		ENTRY(processes, "nvmlDeviceGetComputeRunningProcesses_v3", false),
		ENTRY(process_util, "nvmlDeviceGetProcessUtilization", false),
		ENTRY(field_values, "nvmlDeviceGetFieldValues", false),
#undef ENTRY
	};
	const char *file = path && *path ? path : "libnvidia-ml.so.1";

	memset(&N, 0, sizeof(N));
	N.lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	if (!N.lib) {
		snprintf(why, why_len, "%s not found (no NVIDIA driver)", file);
		return -1;
	}
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void **slot = (void **)((char *)&N + entries[i].offset);

		*slot = dlsym(N.lib, entries[i].name);
		if (!*slot && entries[i].required) {
			snprintf(why, why_len, "%s has no %s", file, entries[i].name);
			N.shutdown = NULL;	/* not initialized: nothing to shut down */
			nvml_close();
			return -1;
		}
	}
	nvmlReturn_t r = N.init();
	unsigned int n = 0;
	if (r != NVML_SUCCESS) {
		say(why, why_len, "NVML cannot start", r);
		N.shutdown = NULL;	/* not initialized: nothing to shut down */
		nvml_close();
		return -1;
	}
	if ((r = N.count(&n)) != NVML_SUCCESS) {
		say(why, why_len, "NVML cannot count the GPUs", r);
		nvml_close();
		return -1;
	}
	return (int)n;
}

void nvml_close(void)
{
	if (N.lib && N.shutdown)
		N.shutdown();
	if (N.lib)
		dlclose(N.lib);
	memset(&N, 0, sizeof(N));
}

static int unsigned_or_unknown(nvmlReturn_t r, unsigned int v)
{
	return r == NVML_SUCCESS ? (int)v : -1;
}

/* An unsigned field value whatever its width; false when the field could not be read. */
static bool field_u64(const nvml_field_value *f, uint64_t *v)
{
	if (f->nvmlReturn != NVML_SUCCESS)
		return false;
	if (f->valueType == NVML_VALUE_TYPE_UNSIGNED_INT)
		*v = f->value.ui;
	else if (f->valueType == NVML_VALUE_TYPE_UNSIGNED_LONG ||
		 f->valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
		*v = f->value.ull;
	else
		return false;
	return true;
}

/* NVLink's data counters, summed over the links; a GPU without NVLink says NOT_SUPPORTED. */
static void read_nvlink(nvmlDevice_t d, struct nvml_device_reading *out)
{
	nvml_field_value f[2] = {
		{ .fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, .scopeId = ~0u },
		{ .fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, .scopeId = ~0u },
	};

	out->nvlink_known = OPTIONAL(field_values, d, 2, f) == NVML_SUCCESS &&
			    field_u64(&f[0], &out->nvlink_tx_kib) && field_u64(&f[1], &out->nvlink_rx_kib);
	out->nvlink_us = f[0].timestamp;
}

int nvml_read_device(int i, struct nvml_device_reading *out, bool sample_pcie, char *why, size_t why_len)
{
	nvmlDevice_t d;
	nvmlReturn_t r = N.lib ? N.handle((unsigned)i, &d) : NVML_ERROR_NOT_FOUND;
	nvml_utilization u = { 0 };
	nvml_memory m = { 0 };
	unsigned int v = 0;
	int pcie_tx = out->pcie_tx_kbs, pcie_rx = out->pcie_rx_kbs;

	memset(out, 0, sizeof(*out));
	if (r != NVML_SUCCESS) {
		say(why, why_len, "NVML cannot open the GPU", r);
		return -1;
	}
	if (OPTIONAL(name, d, out->name, sizeof(out->name)) != NVML_SUCCESS)
		snprintf(out->name, sizeof(out->name), "GPU %d", i);
	if (OPTIONAL(uuid, d, out->uuid, sizeof(out->uuid)) != NVML_SUCCESS)
		out->uuid[0] = '\0';
	r = OPTIONAL(utilization, d, &u);
	out->util_gpu = unsigned_or_unknown(r, u.gpu);
	out->util_mem = unsigned_or_unknown(r, u.memory);
	out->mem_known = OPTIONAL(memory, d, &m) == NVML_SUCCESS;
	out->mem_used = out->mem_known ? m.used : 0;
	out->mem_total = out->mem_known ? m.total : 0;
	r = OPTIONAL(temperature, d, NVML_TEMPERATURE_GPU, &v);
	out->temp_c = unsigned_or_unknown(r, v);
	r = OPTIONAL(power, d, &v);
	out->power_mw = unsigned_or_unknown(r, v);
	r = OPTIONAL(clock, d, NVML_CLOCK_SM, &v);
	out->sm_mhz = unsigned_or_unknown(r, v);
	/* Each PCIe counter is sampled over 20 ms inside NVML: why this runs in a thread. */
	if (sample_pcie) {
		r = OPTIONAL(pcie, d, NVML_PCIE_UTIL_TX_BYTES, &v);
		pcie_tx = unsigned_or_unknown(r, v);
		r = OPTIONAL(pcie, d, NVML_PCIE_UTIL_RX_BYTES, &v);
		pcie_rx = unsigned_or_unknown(r, v);
	}
	out->pcie_tx_kbs = pcie_tx;
	out->pcie_rx_kbs = pcie_rx;
	read_nvlink(d, out);
	return 0;
}

static unsigned long long realtime_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

/* SM utilization of each process since *last_us: the newest sample of each PID. NOT_FOUND
 * means no sample since then: nothing of theirs ran, 0%. */
static void read_utilization(nvmlDevice_t d, struct nvml_process_reading *out, int n,
			     unsigned long long *last_us)
{
	nvml_process_sample sample_buf[NVML_PROCS_MAX];
	unsigned long long newest_buf[NVML_PROCS_MAX];	/* per process read: its newest sample */
	unsigned int count = NVML_PROCS_MAX;
	unsigned long long since = *last_us ? *last_us : realtime_us() - 1000000ull;
	nvmlReturn_t r = OPTIONAL(process_util, d, sample_buf, &count, since);
	int known = r == NVML_SUCCESS || r == NVML_ERROR_NOT_FOUND;

	for (int k = 0; k < n; k++) {
		out[k].sm_util = known ? 0 : -1;
		newest_buf[k] = 0;
	}
	if (r != NVML_SUCCESS)
		return;
	for (unsigned int s = 0; s < count && s < NVML_PROCS_MAX; s++) {
		const nvml_process_sample *p = &sample_buf[s];

		if (p->timeStamp > *last_us)
			*last_us = p->timeStamp;
		for (int k = 0; k < n; k++) {
			if (out[k].pid != p->pid || p->timeStamp < newest_buf[k])
				continue;
			newest_buf[k] = p->timeStamp;
			out[k].sm_util = (int)(p->smUtil > 100 ? 100 : p->smUtil);
		}
	}
}

int nvml_read_processes(int i, struct nvml_process_reading *out, int max,
			unsigned long long *last_us, char *why, size_t why_len)
{
	nvmlDevice_t d;
	nvml_process_info proc_buf[NVML_PROCS_MAX];
	unsigned int count = NVML_PROCS_MAX;
	nvmlReturn_t r = N.lib ? N.handle((unsigned)i, &d) : NVML_ERROR_NOT_FOUND;
	int n = 0;

	if (r == NVML_SUCCESS)
		r = OPTIONAL(processes, d, &count, proc_buf);
	if (r != NVML_SUCCESS) {
		say(why, why_len, "NVML cannot list the GPU's processes", r);
		return -1;
	}
	for (unsigned int k = 0; k < count && k < NVML_PROCS_MAX && n < max; k++, n++) {
		out[n].pid = proc_buf[k].pid;
		out[n].bytes_known = proc_buf[k].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE;
		out[n].bytes = out[n].bytes_known ? proc_buf[k].usedGpuMemory : 0;
	}
	if (last_us)
		read_utilization(d, out, n, last_us);
	else
		for (int k = 0; k < n; k++)
			out[k].sm_util = -1;
	return n;
}
