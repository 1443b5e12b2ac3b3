// graphs.cu — issue 15's measurement on a real GPU (scripts/gpu-graphs): 10 launches of gk
// captured into a CUDA graph on a stream, the graph instantiated and launched 100 times, then 7
// direct launches of dk. The GPU runs gk 1,000 times and dk 7 times; the program checks that on
// the device (each run adds 1 to a counter) and prints "graphs: ok gk=1000 dk=7".
// usage: graphs [--go FILE [--wait built|instantiated]]
//   --go FILE: says "ready PID" and waits for FILE before instantiating the graph (--wait built,
//   the default) or after (--wait instantiated), so that gputop can attach there.
#include "gpucheck.h"

__global__ void gk(unsigned long long *runs)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		atomicAdd(runs, 1ull);
}

__global__ void dk(unsigned long long *runs)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		atomicAdd(runs + 1, 1ull);
}

int main(int argc, char **argv)
{
	gc_name = "graphs";
	const char *wait = gc_option(argc, argv, "--wait");
	bool after_instantiation = wait && strcmp(wait, "instantiated") == 0;
	unsigned long long *runs, host[2] = { 0, 0 };
	cudaStream_t s;
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&runs, sizeof host));
	CK(cudaMemset(runs, 0, sizeof host));
	CK(cudaDeviceSynchronize());
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < 10; i++)
		gk<<<4, 128, 0, s>>>(runs);
	CK_LAUNCH();
	CK(cudaStreamEndCapture(s, &graph));
	if (!after_instantiation)
		gc_wait_go(argc, argv);
	CK(cudaGraphInstantiate(&exec, graph, 0));
	if (after_instantiation)
		gc_wait_go(argc, argv);
	for (int i = 0; i < 100; i++)
		CK(cudaGraphLaunch(exec, s));
	for (int i = 0; i < 7; i++)
		dk<<<4, 128, 0, s>>>(runs);
	CK_LAUNCH();
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(host, runs, sizeof host, cudaMemcpyDeviceToHost));
	char got[64];
	snprintf(got, sizeof got, "gk=%llu dk=%llu", host[0], host[1]);
	gc_expect_true("gk ran 1000 times and dk 7 times", host[0] == 1000 && host[1] == 7);
	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(graph));
	CK(cudaFree(runs));
	gc_ok(got);
	return 0;
}
