/* nvml.c — a SIMULATED libnvidia-ml.so.1 for gputop's tests: no GPU and no driver are involved.
 * Its figures come from files the test controls, read afresh at every call:
 *   $SIMNVML_DIR/devices      one line per GPU, fields separated by '|':
 *                             name|uuid|util%|memory util%|used bytes|total bytes|temp °C|
 *                             power mW|SM clock MHz|PCIe TX KB/s|PCIe RX KB/s[|NVLink TX
 *                             KiB/s|NVLink RX KiB/s] ("-", or no NVLink fields, for a figure the
 *                             GPU does not support); NVLink's counters grow at those rates
 *                             from nvmlInit_v2 on, as a link busy at that rate would count
 *   $SIMNVML_DIR/proc.PID.*   "DEVICE BYTES SM_UTIL": a process on a GPU; the files of one PID
 *                             add up (the simulated CUDA libraries write them as they
 *                             allocate: simnvml_account.c); listed while /proc/PID exists,
 *                             or always for a name ending in ".foreign" (a process NVML names
 *                             by a PID of another PID namespace, as in a container).
 *   $SIMNVML_DIR/hang         while it exists, reading a GPU's name never returns (a driver
 *                             that hangs); $SIMNVML_DIR/hanging is made once a read hangs.
 * Without SIMNVML_DIR, nvmlInit_v2 fails as it does where no driver is loaded.
 * Entry points and structures as NVML's API reference gives them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
enum {
	NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
};
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
	unsigned int pid;
	unsigned long long timeStamp;
	unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

enum { F_NAME, F_UUID, F_UTIL, F_MEMUTIL, F_USED, F_TOTAL, F_TEMP, F_POWER, F_SM, F_TX, F_RX,
       F_NVLINK_TX, F_NVLINK_RX, F_COUNT };
typedef struct {
	unsigned int fieldId, scopeId;
	long long timestamp, latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	union { double d; unsigned int ui; unsigned long long ull; } value;
} nvmlFieldValue_t;
#define MAX_DEVICES 16
#define MAX_PROCS 64

static int initialized;
static unsigned long long init_us;	/* NVLink's counters start here */

static unsigned long long realtime_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

static const char *dir(void)
{
	const char *d = getenv("SIMNVML_DIR");
	return d && *d ? d : NULL;
}

/* Field f of device i's line into out; 0, or an NVML error. */
static nvmlReturn_t field(unsigned i, int f, char *out, size_t n)
{
	char path[4096], line[1024];
	unsigned k = 0;
	nvmlReturn_t r = NVML_ERROR_INVALID_ARGUMENT;

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	snprintf(path, sizeof(path), "%s/devices", dir());
	FILE *fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		if (k++ != i)
			continue;
		line[strcspn(line, "\n")] = '\0';
		char *save, *tok = strtok_r(line, "|", &save);
		for (int j = 0; tok && j < f; j++)
			tok = strtok_r(NULL, "|", &save);
		if (!tok || strcmp(tok, "-") == 0) {
			r = NVML_ERROR_NOT_SUPPORTED;
		} else {
			snprintf(out, n, "%s", tok);
			r = NVML_SUCCESS;
		}
		break;
	}
	if (fp)
		fclose(fp);
	return r;
}

static nvmlReturn_t number(nvmlDevice_t d, int f, unsigned long long *v)
{
	char s[128];
	nvmlReturn_t r = d ? field((unsigned)((uintptr_t)d - 1), f, s, sizeof(s)) : NVML_ERROR_INVALID_ARGUMENT;

	if (r == NVML_SUCCESS)
		*v = strtoull(s, NULL, 10);
	return r;
}

static nvmlReturn_t number32(nvmlDevice_t d, int f, unsigned int *v)
{
	unsigned long long x = 0;
	nvmlReturn_t r = v ? number(d, f, &x) : NVML_ERROR_INVALID_ARGUMENT;

	if (r == NVML_SUCCESS)
		*v = (unsigned int)x;
	return r;
}

struct sim_proc { unsigned pid; unsigned long long bytes; unsigned sm; };

/* The processes on device dev, their files added up. */
static int processes(unsigned dev, struct sim_proc *out)
{
	DIR *dp = opendir(dir());
	struct dirent *e;
	int n = 0;

	while (dp && (e = readdir(dp))) {
		unsigned pid, d, sm = 0;
		unsigned long long bytes;
		char path[4096], proc[64];
		int j;

		if (sscanf(e->d_name, "proc.%u.", &pid) != 1 || strstr(e->d_name, ".tmp"))
			continue;
		snprintf(proc, sizeof(proc), "/proc/%u", pid);
		size_t len = strlen(e->d_name);
		int foreign = len > 8 && strcmp(e->d_name + len - 8, ".foreign") == 0;
		if (!foreign && access(proc, F_OK) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir(), e->d_name);
		FILE *f = fopen(path, "r");
		int got = f ? fscanf(f, "%u %llu %u", &d, &bytes, &sm) : 0;
		if (f)
			fclose(f);
		if (got < 2 || d != dev)
			continue;
		for (j = 0; j < n && out[j].pid != pid; j++)
			;
		if (j == n && n == MAX_PROCS)
			continue;
		if (j == n)
			out[n++] = (struct sim_proc){ .pid = pid };
		out[j].bytes += bytes;
		out[j].sm = sm > out[j].sm ? sm : out[j].sm;
	}
	if (dp)
		closedir(dp);
	return n;
}

API nvmlReturn_t nvmlInit_v2(void)
{
	if (!dir())
		return NVML_ERROR_DRIVER_NOT_LOADED;
	initialized = 1;
	init_us = realtime_us();
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlShutdown(void)
{
	initialized = 0;
	return NVML_SUCCESS;
}

API const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	default: return "Unknown Error";
	}
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	char s[8];
	unsigned n = 0;

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	while (n < MAX_DEVICES && field(n, F_NAME, s, sizeof(s)) != NVML_ERROR_INVALID_ARGUMENT)
		n++;
	*count = n;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	unsigned n;
	nvmlReturn_t r = nvmlDeviceGetCount_v2(&n);

	if (r != NVML_SUCCESS)
		return r;
	if (i >= n)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = (nvmlDevice_t)(uintptr_t)(i + 1);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	char hang[4096], hanging[4096];

	snprintf(hang, sizeof(hang), "%s/hang", dir() ? dir() : ".");
	snprintf(hanging, sizeof(hanging), "%s/hanging", dir() ? dir() : ".");
	if (access(hang, F_OK) == 0) {
		FILE *f = fopen(hanging, "w");

		if (f)
			fputs("hanging\n", f), fclose(f);
	}
	while (access(hang, F_OK) == 0)
		sleep(1);
	return d ? field((unsigned)((uintptr_t)d - 1), F_NAME, name, len) : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
	return d ? field((unsigned)((uintptr_t)d - 1), F_UUID, uuid, len) : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	nvmlReturn_t r = number32(d, F_UTIL, &u->gpu);
	return r == NVML_SUCCESS ? number32(d, F_MEMUTIL, &u->memory) : r;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	nvmlReturn_t r = number(d, F_USED, &m->used);
	if (r == NVML_SUCCESS)
		r = number(d, F_TOTAL, &m->total);
	m->free = r == NVML_SUCCESS && m->total > m->used ? m->total - m->used : 0;
	return r;
}

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
	return sensor == 0 ? number32(d, F_TEMP, t) : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	return number32(d, F_POWER, mw);
}

API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	return type == 1 ? number32(d, F_SM, mhz) : NVML_ERROR_NOT_SUPPORTED;	/* NVML_CLOCK_SM */
}

API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *kbs)
{
	return counter == 0 ? number32(d, F_TX, kbs) : counter == 1 ? number32(d, F_RX, kbs)
								 : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
							 nvmlProcessInfo_t *infos)
{
	struct sim_proc p[MAX_PROCS];
	int n;

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (!d || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = processes((unsigned)((uintptr_t)d - 1), p);
	if ((unsigned)n > *count) {
		*count = (unsigned)n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (int i = 0; i < n; i++)
		infos[i] = (nvmlProcessInfo_t){ .pid = p[i].pid, .usedGpuMemory = p[i].bytes,
						.gpuInstanceId = ~0u, .computeInstanceId = ~0u };
	*count = (unsigned)n;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *s,
						 unsigned int *count, unsigned long long last_seen)
{
	struct sim_proc p[MAX_PROCS];
	struct timespec ts;
	int n;

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (!d || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = processes((unsigned)((uintptr_t)d - 1), p);
	if (n == 0)
		return NVML_ERROR_NOT_FOUND;
	if (!s || (unsigned)n > *count) {
		*count = (unsigned)n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long now = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	for (int i = 0; i < n; i++)
		s[i] = (nvmlProcessUtilizationSample_t){ .pid = p[i].pid, .timeStamp = now > last_seen ? now : last_seen + 1,
							 .smUtil = p[i].sm };
	*count = (unsigned)n;
	return NVML_SUCCESS;
}

/* NVLink data counters (fields 138, 139: KiB, all links): rate x time since nvmlInit_v2. */
API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values)
{
	unsigned long long now = realtime_us();

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (!d || count < 0 || (count && !values))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < count; i++) {
		nvmlFieldValue_t *f = &values[i];
		unsigned long long rate = 0;
		int field = f->fieldId == 138 ? F_NVLINK_TX : f->fieldId == 139 ? F_NVLINK_RX : -1;

		f->timestamp = (long long)now;
		f->latencyUsec = 0;
		f->nvmlReturn = field >= 0 && f->scopeId == ~0u ? number(d, field, &rate) : NVML_ERROR_NOT_SUPPORTED;
		if (f->nvmlReturn == NVML_ERROR_INVALID_ARGUMENT)	/* no such field in the line */
			f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		f->valueType = 3;	/* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
		f->value.ull = rate * (now - init_us) / 1000000ull;
	}
	return NVML_SUCCESS;
}
