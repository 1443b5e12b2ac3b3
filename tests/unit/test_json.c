/* test_json.c — unit test of src/output/json.c: a summary built through the stats API, written
 * with json_write and checked with jq (key order, nulls, sorting, figures, string escaping).
 * Standalone (links UNIT_SRCS of tests/Makefile; runs /usr/bin/jq or jq in PATH).
 * One "ok"/"not ok" line per check. */
#include "clock.h"
#include "cuda_api.h"
#include "device_rows.h"
#include "json.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
static char json_path[] = "/tmp/gputop-test-json-XXXXXX";
static char filter_path[] = "/tmp/gputop-test-jq-XXXXXX";

static void check(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

/* The filter goes through a file, so it needs C escaping only, not shell quoting. */
static void jq(const char *filter)
{
	char cmd[256];
	FILE *f = fopen(filter_path, "w");

	if (!f || fputs(filter, f) == EOF || fclose(f) == EOF) {
		check(false, filter);
		return;
	}
	snprintf(cmd, sizeof(cmd), "jq -e -f %s %s >/dev/null 2>&1", filter_path, json_path);
	check(system(cmd) == 0, filter);
}

static void feed(void)
{
	int malloc_ = cuda_api_find("cudaMalloc"), free_ = cuda_api_find("cudaFree");
	int launch = cuda_api_find("cuLaunchKernel"), host = cuda_api_find("cudaMallocHost");
	int memcpy_ = cuda_api_find("cudaMemcpy");
	uint32_t g[3] = { 128, 2, 1 }, b[3] = { 256, 1, 1 };
	uint64_t t = now_ns() - 2000000000u;	/* allocated two seconds ago */

	for (int i = 0; i < 3; i++)
		stats_on_call(0, malloc_, 1000, true, 0);
	stats_on_call(0, malloc_, 1000, true, 2);		/* cudaErrorMemoryAllocation */
	stats_on_call(0, free_, 500, true, 999999);	/* a code with no name */
	stats_on_call(0, launch, 0, false, 0);
	stats_on_call(0, launch, 0, false, 0);
	stats_on_call(0, memcpy_, 0, true, 0);
	stats_on_alloc(0, malloc_, 0x7f0000000000, 4096, MEM_DEVICE, 0, 4242, t, "libcaller.so");
	stats_on_alloc(0, malloc_, 0x7f0000200000, 1024, MEM_DEVICE, -1, 4243, t, "libcaller.so");
	stats_on_alloc(0, malloc_, 0x7f0000100000, 1024, MEM_DEVICE, 1, 4243, t, "libcaller.so");
	stats_on_alloc(0, malloc_, 0x7f0000300000, 8192, MEM_DEVICE, 1, 4243, t, "libcaller.so");
	stats_on_free(0, 0x7f0000300000);
	/* Devices and NCCL: a send to rank 1 of a communicator nobody has: its destination is not
	 * known. */
	stats_on_device(0, 0, DEV_LAUNCH, 0, 0);
	stats_on_device(0, 0, DEV_SYNC, 0, 250000000);
	stats_on_device(0, -1, DEV_COPY, 10, 0);
	stats_on_p2p(0, 0, 1, 65536);
	stats_on_collective(0, COLL_ALLREDUCE, 4000, 2000000000, 0xc0, -1, 0);
	stats_on_collective(0, COLL_ALLREDUCE, 4000, 2000000000, 0xc0, -1, 0);
	stats_on_collective(0, COLL_SEND, 512, 500000000, 0xc0, 1, 0);
	stats_on_alloc(0, host, 0x600000, 2048, MEM_HOST, -1, 4242, t, "libcaller.so");
	int q = stats_kernel_id(0, "say \"hi\"\\\n\x01 caf\u00e9");
	int k = stats_kernel_id(0, "void add<float>(float*)");
	stats_kernel_id(0, "never_launched");
	for (int i = 0; i < 3; i++)
		stats_on_launch(0, q, g, b);
	for (int i = 0; i < 5; i++)
		stats_on_launch(0, k, g, b);
	/* A graph of two kernel nodes and a copy, launched 3 times; one never described, twice. */
	int gk = stats_kernel_id(0, "graph_kernel");
	struct stats_graph_node nodes[3] = { { .type = GRAPH_NODE_KERNEL, .kernel = gk, .grid = { 4, 1, 1 } },
					     { .type = GRAPH_NODE_KERNEL, .kernel = gk },
					     { .type = GRAPH_NODE_COPY, .dir = DIR_H2D, .bytes = 1000 } };
	stats_graph_define(0, 0xe1, nodes, 3, true, false);
	for (int i = 0; i < 3; i++)
		stats_on_graph_launch(0, 0xe1);
	stats_on_graph_launch(0, 0xe2);
	stats_on_graph_launch(0, 0xe2);
	stats_on_copy(0, DIR_H2D, COPY_SYNC, 64 << 20, 5000000);
	stats_on_copy(0, DIR_H2D, COPY_ASYNC, 64 << 20, 5000000);
	stats_on_copy(0, DIR_D2H, COPY_SYNC, 100, 0);
	stats_on_memset(0, 4096, 1000);
	stats_on_sync(0, 2500000000u);
	stats_on_stop(0);
	stats_set_threads(0, 7);
	stats_set_tracer_cpu(1500000000u);
}

static bool file_has(const char *needle)
{
	char buf[1 << 16];
	FILE *f = fopen(json_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static void checks(void)
{
	jq("keys_unsorted == [\"pid\",\"command\",\"launched\",\"duration_s\",\"exit_status\","
	   "\"term_signal\",\"api\",\"kernels\",\"launches\",\"launches_estimated\",\"graph_kernel_runs\","
	   "\"graph_launches\",\"graphs\",\"transfers\",\"memset\",\"synchronize\",\"graph_transfers\","
	   "\"graph_memset\",\"gpu_busy\",\"gpu_time\",\"memory\",\"torch_memory\",\"device_use\",\"collectives\","
	   "\"p2p\",\"cost\",\"threads\",\"devices\",\"nvml\",\"processes\"]");
	jq(".collectives == [{\"op\":\"AllReduce\",\"calls\":2,\"bytes\":8000,\"seconds\":4},"
	   "{\"op\":\"Send\",\"calls\":1,\"bytes\":512,\"seconds\":0.5}]");
	jq(".p2p == [{\"src_device\":0,\"dst_device\":1,\"calls\":1,\"bytes\":65536},"
	   "{\"src_device\":0,\"dst_device\":null,\"calls\":1,\"bytes\":512}]");
	jq("[.device_use[] | {device, launches, copy_bytes}] == [{\"device\":0,\"launches\":1,\"copy_bytes\":0},"
	   "{\"device\":1,\"launches\":0,\"copy_bytes\":0},{\"device\":null,\"launches\":0,\"copy_bytes\":10}]");
	jq(".device_use[0] | .live_bytes == 4096 and .synchronize_calls == 1 and .synchronize_s == 0.25");
	jq(".pid == 1234 and .command == \"./app --n 3\" and .launched == true");
	jq(".duration_s == 12.5 and .exit_status == null and .term_signal == null");
	jq("[.api[].name] == [\"cudaMalloc\",\"cuLaunchKernel\",\"cudaFree\",\"cudaMemcpy\"]");
	jq(".api[0] == {\"name\":\"cudaMalloc\",\"layer\":\"runtime\",\"calls\":4,\"errors\":1,"
	   "\"seconds\":4e-06,\"last_error\":\"cudaErrorMemoryAllocation\",\"stops_per_call\":null,\"lost\":0,\"error_sites\":[]}");
	jq(".api[1] | .layer == \"driver\" and .errors == null and .seconds == null and .last_error == null");
	jq(".api[2].last_error == 999999");
	jq("[.kernels[].name] == [\"graph_kernel\",\"void add<float>(float*)\",\"say \\\"hi\\\"\\\\\\n\\u0001 caf\u00e9\"]");
	jq(".gpu_time == null and .gpu_busy == null and ([.kernels[].gpu_time] | unique) == [null]");	/* no --gpu-time */
	jq(".kernels[1] | .launches == 5 and .graph_launches == 0 and .grid == [128,2,1] and .block == [256,1,1]");
	jq(".kernels[0] | .launches == 0 and .graph_launches == 6 and .grid == [0,0,0]");
	jq(".graph_kernel_runs == 6 and .graph_launches == 5");
	jq("all(.graphs[]; .pid | type == \"number\")");
	jq(".graphs | map(del(.pid)) == [{\"id\":1,\"nodes\":3,\"kernels\":2,\"copies\":1,\"memsets\":0,\"launches\":3},"
	   "{\"id\":2,\"nodes\":null,\"kernels\":null,\"copies\":0,\"memsets\":0,\"launches\":2}]");
	jq(".graph_transfers == [{\"kind\":\"H2D\",\"executions\":3,\"bytes\":3000}]");
	jq(".graph_memset == {\"executions\":0,\"bytes\":0}");
	jq(".launches == 8 and .launches_estimated == false");
	jq("[.transfers[].kind] == [\"H2D\",\"D2H\"]");
	jq(".transfers[0] | .calls == 2 and .bytes == 134217728 and .seconds == 0.01 and "
	   "(.gbps * 1000 | round) == 13422 and .sync.calls == 1 and .async.bytes == 67108864");
	jq(".transfers[1].gbps == null");
	jq(".memset == {\"calls\":1,\"bytes\":4096,\"seconds\":1e-06}");
	jq(".synchronize == {\"calls\":1,\"seconds\":2.5}");
	jq(".memory | .live_bytes == 6144 and .live_host_bytes == 2048 and .live_allocations == 4 "
	   "and .peak_bytes == 14336 and .allocations == 5 and .frees == 1");
	jq("[.memory.leaks[].address] == [\"0x7f0000000000\",\"0x600000\",\"0x7f0000100000\",\"0x7f0000200000\"]");
	jq(".memory.leaks[0].bytes == 4096");
	jq(".memory.leaks[0] | .api == \"cudaMalloc\" and .kind == \"device\" and .device == 0 and "
	   ".thread == 4242 and .age_s >= 2 and .age_s < 60");
	jq(".memory.leaks[1] | .kind == \"host\" and .api == \"cudaMallocHost\" and .device == null");
	jq(".memory.leaks[0].caller == \"libcaller.so\"");
	jq(".memory.by_caller == [{\"module\":\"libcaller.so\",\"live_bytes\":6144,\"live_allocations\":3}]");
	jq(".cost == {\"stops\":1,\"stops_per_return\":0,\"stops_per_launch\":1,\"tracer_cpu_s\":1.5,\"lost_records\":0} and .threads == 7");
	/* The process's memory: NVML's 1006144 = 6144 seen live + 1000000 not seen (devices()). */
	jq(".memory.process == {\"device_bytes\":1006144,\"peak_device_bytes\":2000000,\"seen_bytes\":6144,"
	   "\"unseen_bytes\":1000000,\"unseen\":\"" UNSEEN_LABEL_ATTACHED "\",\"context_made_while_traced\":false,"
	   "\"sm_utilization_pct\":42,\"why\":null}");
	jq(".devices == [{\"index\":0,\"name\":\"GPU \\\"zero\\\"\",\"uuid\":\"GPU-0\",\"utilization_pct\":37,"
	   "\"memory_utilization_pct\":null,\"memory_used_bytes\":3,\"memory_total_bytes\":4,\"temperature_c\":null,"
	   "\"power_w\":1.5,\"sm_clock_mhz\":1980,\"pcie_tx_bytes_per_s\":2048,\"pcie_rx_bytes_per_s\":null,"
	   "\"nvlink_tx_bytes_per_s\":5000,\"nvlink_rx_bytes_per_s\":null}] and .nvml == null");
	check(file_has("\\u0001") && file_has("\\n") && file_has("\\\"hi\\\"\\\\"),
	      "control characters escaped (\\u0001, \\n), quotes and backslash escaped");
	check(file_has("\n  \"pid\": 1234,\n"), "pretty-printed with a 2-space indent");
}

/* What NVML said, by hand: one GPU, the process 1234 on it. */
static void devices(struct devices_snapshot *d)
{
	memset(d, 0, sizeof(*d));
	d->available = true;
	d->n_dev = 1;
	d->dev[0] = (struct device_meter){ .index = 0, .readable = true, .r = {
		.name = "GPU \"zero\"", .uuid = "GPU-0", .util_gpu = 37, .util_mem = -1,
		.mem_known = true, .mem_used = 3, .mem_total = 4, .temp_c = -1, .power_mw = 1500,
		.sm_mhz = 1980, .pcie_tx_kbs = 2, .pcie_rx_kbs = -1 }, .nvlink_tx_bps = 5000,
		.nvlink_rx_bps = -1 };
	d->n_proc = 1;
	d->proc[0] = (struct device_process){ .pid = 1234, .polled = true, .on_gpu = true,
		.bytes_known = true, .bytes = 1006144, .peak_bytes = 2000000, .sm_util = 42,
		.device_mask = 1 };
}

static int write_json(const struct report_info *info)
{
	struct stats_snapshot s;
	FILE *f = fopen(json_path, "w");
	int err;

	if (!f || stats_snapshot(&s) < 0)
		return -1;
	err = json_write(f, info, &s);
	stats_snapshot_free(&s);
	return fclose(f) == 0 ? err : -1;
}

int main(void)
{
	struct devices_snapshot d;
	struct report_info info = {
		.pid = 1234, .command = "./app --n 3", .duration_s = 12.5, .launched = true,
		.stops_per_launch = 1, .devices = &d,
	};
	int fd1 = mkstemp(json_path), fd2 = mkstemp(filter_path);

	if (fd1 < 0 || fd2 < 0 || system("jq --version >/dev/null 2>&1") != 0) {
		printf("ok - # SKIP jq or a temporary file is not available\n");
		return 0;
	}
	close(fd1);
	close(fd2);
	check(stats_init() == 0, "stats_init");
	feed();
	devices(&d);
	check(write_json(&info) == 0, "json_write");
	checks();

	info = (struct report_info){ .pid = 1, .command = NULL, .has_exit_status = true,
				     .exit_status = 137, .term_signal = 9 };
	stats_reset();
	check(write_json(&info) == 0, "json_write after a reset");
	jq(".exit_status == 137 and .term_signal == 9 and .command == null");
	jq(".devices == [] and .nvml == \"not polled\" and .memory.process.device_bytes == null and "
	   ".memory.process.unseen == null and .memory.process.why != null");
	jq(".api == [] and .kernels == [] and .transfers == [] and .launches == 0");
	jq(".graph_launches == 0 and ([.graphs[].launches] | add) == 0 and .graph_transfers == []");
	jq(".collectives == [] and .p2p == [] and ([.device_use[].launches] | add) == 0");
	jq(".memory.live_allocations == 4 and .memory.peak_bytes == 6144 and (.memory.leaks | length) == 4");

	/* Names that are not UTF-8: each ill-formed part becomes U+FFFD (utf8.h), and the file
	 * passes a strict reader. */
	info = (struct report_info){ .pid = 2, .command = "./prog\xff --x \xc3(" };
	stats_reset();
	uint32_t g[3] = { 1, 1, 1 };
	stats_on_launch(0, stats_kernel_id(0, "bad\xfe\xed\xa0\x80 \xe6\x97\xa5 name"), g, g);
	check(write_json(&info) == 0, "json_write with names that are not UTF-8");
	jq(".command == \"./prog\ufffd --x \ufffd(\"");
	jq("[.kernels[].name] == [\"bad\ufffd\ufffd\ufffd\ufffd \u65e5 name\"]");
	if (system("python3 -c '' >/dev/null 2>&1") == 0) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\", "
			 "errors=\"strict\"))' %s", json_path);
		check(system(cmd) == 0, "python3's json reads it with strict UTF-8 decoding");
	}
	stats_free();
	unlink(json_path);
	unlink(filter_path);
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
