/* nvml_lib.h — NVIDIA's management library (libnvidia-ml.so.1), opened with dlopen at run time
 * so that gputop still runs where there is no driver. It reads devices (utilization, memory,
 * temperature, power, clocks, PCIe) and the processes on them. Each call may take
 * milliseconds: call it from a thread of its own, never from the tracer's loop. Not
 * thread-safe: one caller at a time. */
#ifndef GPUTOP_NVML_LIB_H
#define GPUTOP_NVML_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVML_NAME_LEN	96	/* NVML_DEVICE_NAME_V2_BUFFER_SIZE, _UUID_V2_ */

/* One device's meters; -1 (or !mem_known) where NVML does not tell. */
struct nvml_device_reading {
	char name[NVML_NAME_LEN];
	char uuid[NVML_NAME_LEN];
	int util_gpu, util_mem;		/* percent over NVML's last sample period */
	bool mem_known;
	uint64_t mem_used, mem_total;	/* bytes */
	int temp_c;
	int power_mw;
	int sm_mhz;
	int pcie_tx_kbs, pcie_rx_kbs;	/* KB/s */
	bool nvlink_known;		/* NVLink counters (GPUs without NVLink: false) */
	uint64_t nvlink_tx_kib, nvlink_rx_kib;	/* data sent and received over all links so far */
	int64_t nvlink_us;		/* when NVML read them (µs) */
};

/* One compute process on a device, as NVML names it (its PID may be of another namespace). */
struct nvml_process_reading {
	unsigned pid;
	bool bytes_known;
	uint64_t bytes;			/* its device memory */
	int sm_util;			/* percent since the last reading; -1: not known */
};

/* Loads path (NULL: "libnvidia-ml.so.1" by the dynamic linker's search) and initializes NVML.
 * Returns the number of devices (0 or more), or -1 with why set ("libnvidia-ml.so.1 not found",
 * "NVML: Driver Not Loaded"...). */
int nvml_open(const char *path, char *why, size_t why_len);
/* Device i's meters. 0, or -1 (why set) when the device cannot be read at all. Without
 * sample_pcie the PCIe rates are left as out had them: NVML samples each for 20 ms. */
int nvml_read_device(int i, struct nvml_device_reading *out, bool sample_pcie, char *why, size_t why_len);
/* Device i's compute processes into out (at most max); the number, or -1 (why set).
 * *last_us: the timestamp (µs) of the last utilization sample seen on it; updated. last_us
 * NULL: their utilization is not read (sm_util -1). */
int nvml_read_processes(int i, struct nvml_process_reading *out, int max,
			unsigned long long *last_us, char *why, size_t why_len);
/* nvmlShutdown and dlclose; nothing is left loaded. */
void nvml_close(void);

#endif
