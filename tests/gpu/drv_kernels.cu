// drv_kernels.cu — the kernels driver_api loads as a module (scripts/gpu-check compiles this file
// with `nvcc -cubin` and driver_api embeds the cubin). Two extern "C" kernels, one C++ kernel in a
// namespace that driver_api looks up by its mangled name.
extern "C" __global__ void drv_fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

// Its CUfunction is fetched before the go file: in attach mode gputop meets it only at launch.
extern "C" __global__ void drv_early(float *p, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] += 1.0f;
}

namespace drv {
__global__ void saxpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}
}
