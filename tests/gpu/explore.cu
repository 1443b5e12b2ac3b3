// explore.cu — first look at real CUDA under gputop: which layer sees what.
#include <cstdio>
#include <cuda_runtime.h>
namespace ns { __global__ void nsk(float *p) { p[threadIdx.x] += 1; } }
template <typename T> __global__ void tk(T *p, int n) { if (threadIdx.x < n) p[threadIdx.x] *= 2; }
__global__ void kk(float *p) { p[threadIdx.x] = 2; }
__global__ void legacy(float *p) { p[threadIdx.x] = 3; }
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
int main() {
  float *d; CK(cudaMalloc(&d, 1 << 20));
  for (int i = 0; i < 7; i++) kk<<<1, 32>>>(d);
  for (int i = 0; i < 5; i++) ns::nsk<<<2, 32>>>(d);
  for (int i = 0; i < 3; i++) tk<float><<<1, 32>>>(d, 16);
  void *args[] = { &d };
  for (int i = 0; i < 4; i++) CK(cudaLaunchKernel((const void *)legacy, dim3(3), dim3(64), args, 0, 0));
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(5); cfg.blockDim = dim3(32);
  CK(cudaLaunchKernelEx(&cfg, kk, d));
  CK(cudaDeviceSynchronize());
  size_t n = 64 << 20; void *h; CK(cudaMallocHost(&h, n)); void *d2; CK(cudaMalloc(&d2, n));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; i++) {
    cudaEventRecord(a); CK(cudaMemcpy(d2, h, n, cudaMemcpyHostToDevice)); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); printf("H2D 64MiB: %.3f ms %.2f GB/s\n", ms, n / ms / 1e6);
    cudaEventRecord(a); CK(cudaMemcpy(h, d2, n, cudaMemcpyDeviceToHost)); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); printf("D2H 64MiB: %.3f ms %.2f GB/s\n", ms, n / ms / 1e6);
  }
  CK(cudaFree(d2)); CK(cudaFreeHost(h));
  printf("expected: kk=8 (7 + 1 Ex) nsk=5 tk<float>=3 legacy=4, 1 MiB leaked\n");
  return 0;
}
