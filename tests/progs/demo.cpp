/* demo.cpp — a little "training loop" for `make demo`: for about SECONDS it allocates, copies,
 * launches a few named kernels per step and synchronizes, and it forgets to free one buffer.
 * Usage: demo [SECONDS=3]
 * Setup: cudaSetDevice(0); cudaMalloc weights 3 x 4 MiB, optimizer state 8 MiB, gradients
 * 12 MiB; cudaMallocHost 1 MiB (the input batch); cudaMalloc 16 MiB "activation cache" that is
 * never freed (the leak gputop shows).
 * Each step: cudaMemcpyAsync H2D 1 MiB; cudaMallocAsync 2 MiB workspace; launches
 *   ml::linear_forward(float*, float const*, int) x3, ml::relu(float*, int) x2,
 *   ml::softmax_xent(float*, int) x1, ml::linear_backward(float*, float const*, int) x3,
 *   ml::adam_step(float*, float*, float, int) x3;
 * cudaFreeAsync the workspace; cudaMemcpy D2H 4 bytes (the loss); cudaStreamSynchronize;
 * every 50th step cudaMemset of the gradients (12 MiB).
 * The kernels are host stubs: on the simulated runtime they are accepted and never run.
 * Prints "demo: steps=N", exit 0. */
#include <cuda_runtime_api.h>

#include "progs.h"

#define MiB (1024UL * 1024UL)

namespace ml {
static volatile int calls;
__attribute__((noinline)) void linear_forward(float *y, const float *w, int n) { calls = calls + 1; (void)y, (void)w, (void)n; }
__attribute__((noinline)) void relu(float *x, int n) { calls = calls + 2; (void)x, (void)n; }
__attribute__((noinline)) void softmax_xent(float *x, int n) { calls = calls + 3; (void)x, (void)n; }
__attribute__((noinline)) void linear_backward(float *g, const float *w, int n) { calls = calls + 4; (void)g, (void)w, (void)n; }
__attribute__((noinline)) void adam_step(float *w, float *m, float lr, int n) { calls = calls + 5; (void)w, (void)m, (void)lr, (void)n; }
} // namespace ml

#define CHECK(name, expr) progs_check(&f, name, (int)(expr))

static void launch(struct fails *fp, const void *func, dim3 grid, dim3 block, void **args, int times)
{
	struct fails &f = *fp;
	for (int i = 0; i < times; i++)
		CHECK("cudaLaunchKernel", cudaLaunchKernel(func, grid, block, args, 0, 0));
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	struct fails f = {};
	void *w[3] = {}, *opt = NULL, *grad = NULL, *cache = NULL, *batch = NULL;

	CHECK("cudaSetDevice", cudaSetDevice(0));
	for (int i = 0; i < 3; i++)
		CHECK("cudaMalloc", cudaMalloc(&w[i], 4 * MiB));
	CHECK("cudaMalloc", cudaMalloc(&opt, 8 * MiB));
	CHECK("cudaMalloc", cudaMalloc(&grad, 12 * MiB));
	CHECK("cudaMallocHost", cudaMallocHost(&batch, 1 * MiB));
	CHECK("cudaMalloc", cudaMalloc(&cache, 16 * MiB));	/* never freed */

	float *x = (float *)w[0], *y = (float *)w[1], *g = (float *)grad, *m = (float *)opt;
	float lr = 1e-3f, loss = 0;
	int n = 1 << 20;
	void *fwd_args[] = { &y, &x, &n }, *act_args[] = { &y, &n };
	void *bwd_args[] = { &g, &x, &n }, *adam_args[] = { &x, &m, &lr, &n };
	long steps = 0;
	double end = progs_now() + seconds;

	while (progs_now() < end) {
		void *workspace = NULL;
		CHECK("cudaMemcpyAsync", cudaMemcpyAsync(w[2], batch, 1 * MiB, cudaMemcpyHostToDevice, 0));
		CHECK("cudaMallocAsync", cudaMallocAsync(&workspace, 2 * MiB, 0));
		launch(&f, (const void *)ml::linear_forward, dim3(256), dim3(256), fwd_args, 3);
		launch(&f, (const void *)ml::relu, dim3(1024), dim3(256), act_args, 2);
		launch(&f, (const void *)ml::softmax_xent, dim3(64), dim3(128), act_args, 1);
		launch(&f, (const void *)ml::linear_backward, dim3(256), dim3(256), bwd_args, 3);
		launch(&f, (const void *)ml::adam_step, dim3(512), dim3(256), adam_args, 3);
		CHECK("cudaFreeAsync", cudaFreeAsync(workspace, 0));
		CHECK("cudaMemcpy", cudaMemcpy(&loss, y, sizeof(loss), cudaMemcpyDeviceToHost));
		CHECK("cudaStreamSynchronize", cudaStreamSynchronize(0));
		if (steps % 50 == 0)
			CHECK("cudaMemset", cudaMemset(grad, 0, 12 * MiB));
		steps++;
	}
	for (int i = 0; i < 3; i++)
		CHECK("cudaFree", cudaFree(w[i]));
	CHECK("cudaFree", cudaFree(opt));
	CHECK("cudaFree", cudaFree(grad));
	CHECK("cudaFreeHost", cudaFreeHost(batch));
	progs_print_fails("demo", &f);
	printf("demo: steps=%ld%s\n", steps, f.total ? " (with failed calls)" : "");
	return 0;
}
