// rt_work.cu — runtime API work with exact expected figures (scripts/gpu-check builds it twice:
// `nvcc -cudart shared` and the default static cudart). Named kernels launched known numbers of
// times (<<<>>>, a template, a namespace, cudaLaunchKernelEx, cudaLaunchKernel on the stub),
// every allocation kind with known sizes and known leaks, copies of every direction (sync and
// async), a memset and synchronize calls. usage: rt_work [--go FILE]
//
// Set-up (before the go file; counted in launch mode only): a stream, one 1 MiB cudaMalloc that
// is freed again, fill<float> and vec_add launched once each (so in attach mode their kernel
// handles already exist when gputop arrives), one cudaDeviceSynchronize.
// Measured (after the go file; counted in both modes): everything else, listed in EXPECT.
#include "gpucheck.h"

#define NF ((int)(MiB / sizeof(float)))	// floats in 1 MiB

__global__ void vec_add(float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += b[i];
}

namespace ns {
__global__ void scale(float *p, float f, int n)
{
	int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= f;
}
}

template <typename T> __global__ void fill(T *p, T v, int n)
{
	int i = blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

__global__ void launched_ex(float *p, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] += 1.0f;
}

__global__ void legacy(float *p, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] -= 0.5f;
}

__global__ void touch_managed(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = 3 * i;
}

static void print_expect(void)
{
	printf("EXPECT {\"program\": \"rt_work\","
	       " \"setup\": {"
	       "\"kernels\": {"
	       "\"vec_add(float*, float const*, int)\": {\"launches\": 1, \"grid\": [1024,1,1], \"block\": [256,1,1]},"
	       " \"void fill<float>(float*, float, int)\": {\"launches\": 1, \"grid\": [1024,1,1], \"block\": [128,2,1]}},"
	       " \"launches\": 2,"
	       " \"api\": {\"cudaMalloc\": 1, \"cudaFree\": 1, \"cudaDeviceSynchronize\": 1},"
	       " \"synchronize\": 1, \"allocations\": 1, \"frees\": 1},"
	       " \"measured\": {"
	       "\"kernels\": {"
	       "\"vec_add(float*, float const*, int)\": {\"launches\": 7, \"grid\": [1024,1,1], \"block\": [256,1,1]},"
	       " \"ns::scale(float*, float, int)\": {\"launches\": 5, \"grid\": [512,2,1], \"block\": [256,1,1]},"
	       " \"void fill<float>(float*, float, int)\": {\"launches\": 3, \"grid\": [1024,1,1], \"block\": [128,2,1]},"
	       " \"launched_ex(float*, int)\": {\"launches\": 2, \"grid\": [64,1,1], \"block\": [512,1,1]},"
	       " \"legacy(float*, int)\": {\"launches\": 4, \"grid\": [128,1,1], \"block\": [1024,1,1]},"
	       " \"touch_managed(int*, int)\": {\"launches\": 1, \"grid\": [16,1,1], \"block\": [1024,1,1]}},"
	       " \"launches\": 22,"
	       " \"transfers\": {"
	       "\"H2D\": {\"sync\": [2, %lu], \"async\": [1, %lu]},"
	       " \"D2H\": {\"sync\": [3, %lu], \"async\": [1, %lu]},"
	       " \"D2D\": {\"sync\": [1, %lu], \"async\": [0, 0]}},"
	       " \"memset\": [1, %lu],"
	       " \"synchronize\": 4,"
	       " \"api\": {\"cudaMalloc\": 3, \"cudaMallocHost\": 2, \"cudaMallocManaged\": 1, \"cudaMallocAsync\": 2,"
	       " \"cudaMemset\": 1, \"cudaMemcpy\": 6, \"cudaMemcpyAsync\": 2, \"cudaDeviceSynchronize\": 2,"
	       " \"cudaStreamSynchronize\": 2, \"cudaFree\": 2, \"cudaFreeAsync\": 1, \"cudaFreeHost\": 1},"
	       " \"leaks\": ["
	       "{\"kind\": \"device\", \"bytes\": %lu, \"api\": \"cudaMalloc\"},"
	       " {\"kind\": \"device\", \"bytes\": %lu, \"api\": \"cudaMallocAsync\"},"
	       " {\"kind\": \"managed\", \"bytes\": %lu, \"api\": \"cudaMallocManaged\"},"
	       " {\"kind\": \"host\", \"bytes\": %lu, \"api\": \"cudaMallocHost\"}],"
	       " \"allocations\": 8, \"frees\": 4}}\n",
	       2 * MiB, MiB, 5 * MiB, 2 * MiB, MiB, 3 * MiB, 3 * MiB, 512 * KiB, 64 * KiB, 256 * KiB);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	gc_name = "rt_work";
	print_expect();

	// --- set-up: counted in launch mode only ---
	cudaStream_t s;
	float *hx = (float *)malloc(MiB), *hy = (float *)malloc(MiB), *hout = (float *)malloc(3 * MiB);
	if (!hx || !hy || !hout)
		gc_fail("malloc", NULL);
	for (int i = 0; i < NF; i++) {
		hx[i] = 1.0f;
		hy[i] = 2.0f;
	}
	CK(cudaStreamCreate(&s));
	float *d_setup;
	CK(cudaMalloc(&d_setup, MiB));
	fill<float><<<1024, dim3(128, 2)>>>(d_setup, 1.0f, NF);
	CK_LAUNCH();
	vec_add<<<1024, 256>>>(d_setup, d_setup, NF);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d_setup));

	gc_wait_go(argc, argv);

	// --- measured ---
	float *a, *b, *c, *as1, *as2, *hp, *hp2;
	int *m;
	CK(cudaMalloc(&a, MiB));
	CK(cudaMalloc(&b, MiB));
	CK(cudaMalloc(&c, 3 * MiB));				// leaked
	CK(cudaMallocHost((void **)&hp, 2 * MiB));	// (void **): the typed template is cudaHostAlloc
	CK(cudaMallocHost((void **)&hp2, 256 * KiB));		// leaked
	CK(cudaMallocManaged(&m, 64 * KiB));			// leaked
	CK(cudaMallocAsync(&as1, 2 * MiB, s));
	CK(cudaMallocAsync(&as2, 512 * KiB, s));		// leaked
	CK(cudaMemset(c, 0, 3 * MiB));
	CK(cudaMemcpy(a, hx, MiB, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, hy, MiB, cudaMemcpyHostToDevice));

	for (int i = 0; i < 7; i++) {
		vec_add<<<1024, 256>>>(a, b, NF);		// a = 1 + 7 * 2 = 15
		CK_LAUNCH();
	}
	for (int i = 0; i < 5; i++) {
		ns::scale<<<dim3(512, 2), 256>>>(b, 2.0f, NF);	// b = 2 * 32 = 64
		CK_LAUNCH();
	}
	for (int i = 0; i < 3; i++) {
		fill<float><<<1024, dim3(128, 2)>>>(c, 1.5f, NF);	// c[0, NF) = 1.5
		CK_LAUNCH();
	}
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3(64);
	cfg.blockDim = dim3(512);
	for (int i = 0; i < 2; i++)
		CK(cudaLaunchKernelEx(&cfg, launched_ex, c + NF, NF));	// c[NF, 2NF) = 2
	float *c2 = c + 2 * NF;
	int nf = NF;
	void *args[] = { &c2, &nf };
	for (int i = 0; i < 4; i++)	// c[2NF, 3NF) = -2
		CK(cudaLaunchKernel((const void *)legacy, dim3(128), dim3(1024), args, 0, 0));
	int nm = (int)(64 * KiB / sizeof(int));
	touch_managed<<<16, 1024>>>(m, nm);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < nm; i++)
		gc_expect_true("managed memory written by touch_managed", m[i] == 3 * i);

	CK(cudaMemcpy(as1, a, MiB, cudaMemcpyDeviceToDevice));
	for (int i = 0; i < NF; i++) {
		hp[i] = 0.0f;
		hp[NF + i] = 7.0f;
	}
	CK(cudaMemcpyAsync(as1 + NF, hp + NF, MiB, cudaMemcpyDefault, s));	// H2D, kind inferred
	CK(cudaMemcpyAsync(hp, as1, 2 * MiB, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	gc_expect_floats("D2D then async D2H (first MiB)", hp, NF, 15.0f);
	gc_expect_floats("async H2D then async D2H (second MiB)", hp + NF, NF, 7.0f);

	CK(cudaMemcpy(hout, a, MiB, cudaMemcpyDeviceToHost));
	gc_expect_floats("vec_add x7", hout, NF, 15.0f);
	CK(cudaMemcpy(hout, b, MiB, cudaMemcpyDeviceToHost));
	gc_expect_floats("ns::scale x5", hout, NF, 64.0f);
	CK(cudaMemcpy(hout, c, 3 * MiB, cudaMemcpyDeviceToHost));
	gc_expect_floats("fill<float> x3", hout, NF, 1.5f);
	gc_expect_floats("launched_ex x2 (cudaLaunchKernelEx)", hout + NF, NF, 2.0f);
	gc_expect_floats("legacy x4 (cudaLaunchKernel)", hout + 2 * NF, NF, -2.0f);

	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFreeAsync(as1, s));
	CK(cudaFreeHost(hp));
	CK(cudaStreamSynchronize(s));
	CK(cudaDeviceSynchronize());
	(void)as2;
	(void)hp2;
	gc_ok("launches=22 leaked=3 MiB device + 512 KiB async + 64 KiB managed + 256 KiB pinned");
	return 0;
}
