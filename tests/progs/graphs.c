/* graphs.c — CUDA graphs for gputop's tests (run on the SIMULATED runtime and driver, which
 * really record and replay the nodes). It checks its own result: kernel executions as the
 * driver counts them (cuSimKernelRuns, an export of the simulation only) and the bytes its
 * graph's memset and copy left. Modes:
 *   capture   10 launches of gk, a memset and a copy captured into a graph on a stream;
 *             instantiated; launched 100 times; then 7 direct launches of dk.
 *             gk ran 1,000 times, dk 7.
 *   explicit  a graph of 3 gk nodes, a memset and a copy, built with the node calls;
 *             launched 50 times: gk 150.
 *   update    a graph of 2 gk captured, launched 10 times; updated (cudaGraphExecUpdate)
 *             to a graph of 2 dk, launched 20 times: gk 20, dk 40.
 *   threads   as capture, but while the stream captures, another thread launches dk 50 times
 *             on a stream of its own (those run): gk 1,000, dk 57.
 *   loop      as capture, but the graph is launched every 10 ms until the file given with
 *             --stop exists (at most 120 s), for the TUI tests; no check of the counts.
 * --go FILE: print "ready PID" and wait for FILE after building the graph (--wait built: before
 * instantiating it; --wait instantiated: after), for the attach tests.
 * Exit status 0 when every check passed. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>

#include "progs.h"

#define BYTES 4096

void gk(float *p) { (void)p; }
void dk(float *p) { (void)p; }

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "graphs: FAILED: %s\n", what);
		failures++;
	}
}

static unsigned long long runs(const char *kernel)
{
	/* The runtime loaded the driver privately (RTLD_LOCAL): asked through its own handle. */
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	unsigned long long (*sim_runs)(const char *) =
		driver ? (unsigned long long (*)(const char *))dlsym(driver, "cuSimKernelRuns") : NULL;
	return sim_runs ? sim_runs(kernel) : 0;
}

static void launch(void (*k)(float *), float *arg, cudaStream_t s)
{
	void *args[] = { &arg };
	dim3 g = { 4, 1, 1 }, b = { 128, 1, 1 };
	check(cudaLaunchKernel((const void *)k, g, b, args, 0, s) == cudaSuccess, "cudaLaunchKernel");
}

/* threads mode: another thread's launches while the stream captures. */
static bool other_thread;

static void *launch_elsewhere(void *dev)
{
	cudaStream_t s2;
	check(cudaStreamCreate(&s2) == cudaSuccess, "cudaStreamCreate");
	for (int i = 0; i < 50; i++)
		launch(dk, dev, s2);
	check(cudaStreamSynchronize(s2) == cudaSuccess, "cudaStreamSynchronize");
	return NULL;
}

static cudaGraph_t capture(cudaStream_t s, void (*k)(float *), int n, float *dev, unsigned char *host)
{
	cudaGraph_t g = NULL;
	check(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess, "cudaStreamBeginCapture");
	if (other_thread) {	/* while this stream captures: the other thread's launches run */
		pthread_t t;
		check(pthread_create(&t, NULL, launch_elsewhere, dev) == 0, "pthread_create");
		pthread_join(t, NULL);
	}
	for (int i = 0; i < n; i++)
		launch(k, dev, s);
	if (host) {
		check(cudaMemsetAsync(dev, 0x5a, BYTES, s) == cudaSuccess, "cudaMemsetAsync");
		check(cudaMemcpyAsync(host, dev, BYTES, cudaMemcpyDeviceToHost, s) == cudaSuccess, "cudaMemcpyAsync");
	}
	check(cudaStreamEndCapture(s, &g) == cudaSuccess && g, "cudaStreamEndCapture");
	return g;
}

static cudaGraph_t build_explicit(float *dev, unsigned char *host)
{
	cudaGraph_t g = NULL;
	cudaGraphNode_t node;
	void *args[] = { &dev };
	struct cudaKernelNodeParams k = { .func = (void *)gk, .gridDim = { 4, 1, 1 }, .blockDim = { 128, 1, 1 },
					  .kernelParams = args };
	struct cudaMemsetParams m = { .dst = dev, .value = 0x5a, .elementSize = 1, .width = BYTES, .height = 1 };
	check(cudaGraphCreate(&g, 0) == cudaSuccess, "cudaGraphCreate");
	for (int i = 0; i < 3; i++)
		check(cudaGraphAddKernelNode(&node, g, NULL, 0, &k) == cudaSuccess, "cudaGraphAddKernelNode");
	check(cudaGraphAddMemsetNode(&node, g, NULL, 0, &m) == cudaSuccess, "cudaGraphAddMemsetNode");
	check(cudaGraphAddMemcpyNode1D(&node, g, NULL, 0, host, dev, BYTES, cudaMemcpyDeviceToHost) == cudaSuccess,
	      "cudaGraphAddMemcpyNode1D");
	return g;
}

static void replay(cudaGraphExec_t e, cudaStream_t s, int times)
{
	for (int i = 0; i < times; i++)
		check(cudaGraphLaunch(e, s) == cudaSuccess, "cudaGraphLaunch");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "capture", *go = NULL, *wait = "built", *stop = NULL;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--go") == 0)
			go = argv[i + 1];
		else if (strcmp(argv[i], "--wait") == 0)
			wait = argv[i + 1];
		else if (strcmp(argv[i], "--stop") == 0)
			stop = argv[i + 1];
	}
	cudaStream_t s;
	float *dev = NULL;
	other_thread = strcmp(mode, "threads") == 0;
	static unsigned char host[BYTES];
	check(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
	check(cudaMalloc((void **)&dev, BYTES) == cudaSuccess, "cudaMalloc");
	cudaGraph_t g = strcmp(mode, "explicit") == 0 ? build_explicit(dev, host)
			: strcmp(mode, "update") == 0 ? capture(s, gk, 2, dev, NULL)
						      : capture(s, gk, 10, dev, host);
	check(runs("gk") == 0, "a captured launch does not run");
	cudaGraphExec_t e = NULL;
	if (go && strcmp(wait, "built") == 0) {
		progs_ready();
		progs_wait_go(go);
	}
	check(cudaGraphInstantiate(&e, g, 0) == cudaSuccess && e, "cudaGraphInstantiate");
	if (go && strcmp(wait, "instantiated") == 0) {
		progs_ready();
		progs_wait_go(go);
	}
	if (strcmp(mode, "loop") == 0) {
		for (int i = 0; i < 12000 && !(stop && access(stop, F_OK) == 0); i++) {
			replay(e, s, 1);
			progs_sleep_ms(10);
		}
	} else if (strcmp(mode, "update") == 0) {
		cudaGraph_t g2 = capture(s, dk, 2, dev, NULL);
		cudaGraphExecUpdateResultInfo info;
		replay(e, s, 10);
		check(cudaGraphExecUpdate(e, g2, &info) == cudaSuccess, "cudaGraphExecUpdate");
		replay(e, s, 20);
		check(runs("gk") == 20 && runs("dk") == 40, "gk ran 20 times, dk 40");
		printf("graphs: gk=%llu dk=%llu\n", runs("gk"), runs("dk"));
		cudaGraphDestroy(g2);
	} else {
		int times = strcmp(mode, "explicit") == 0 ? 50 : 100;
		replay(e, s, times);
		if (strcmp(mode, "capture") == 0 || other_thread)
			for (int i = 0; i < 7; i++)
				launch(dk, dev, s);
		check(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
		unsigned long long want = strcmp(mode, "explicit") == 0 ? 150 : 1000;
		check(runs("gk") == want, "gk ran as often as the graph says");
		unsigned long long want_dk = other_thread ? 57 : strcmp(mode, "capture") == 0 ? 7 : 0;
		check(runs("dk") == want_dk, "dk ran as often as launched");
		check(host[0] == 0x5a && host[BYTES - 1] == 0x5a, "the graph's memset and copy happened");
		printf("graphs: gk=%llu dk=%llu\n", runs("gk"), runs("dk"));
	}
	cudaGraphExecDestroy(e);
	cudaGraphDestroy(g);
	cudaFree(dev);
	if (failures)
		return 1;
	printf("graphs: ok %s\n", mode);
	return 0;
}
