"""torch_alloc.py — a Python program that allocates through PyTorch's caching allocator (the
SIMULATED libc10_cuda.so, tests/sim/c10_cuda.c) with ctypes, as torch.empty(..., device="cuda")
would: for tests/e2e/torch_python.sh. The line marked "@site big" makes the 64 MiB block; the
line marked "@site small" makes eight of 1 MiB in a loop. Prints what memory_allocated() would.
Usage: python3.X torch_alloc.py LIBC10_CUDA"""
import ctypes
import sys

c10 = ctypes.CDLL(sys.argv[1])
c10.simtorch_alloc.restype = ctypes.c_void_p
c10.simtorch_alloc.argtypes = [ctypes.c_size_t, ctypes.c_void_p]
c10.simtorch_allocated.restype = ctypes.c_longlong
kept = []


def build():
    weights = c10.simtorch_alloc(64 << 20, 0x5000)  # @site big
    kept.append(weights)
    for _ in range(8):
        kept.append(c10.simtorch_alloc(1 << 20, 0x5000))  # @site small


build()
print("torch_alloc: ok allocated=%d" % c10.simtorch_allocated())
