"""py_alloc.py — a Python program that calls the CUDA runtime through ctypes, for the Python
call-stack tests (tests/e2e/stacks_python.sh). Lines marked "@site NAME" are what the tests
look for. main() -> grow() -> cudaMalloc leaks 2 MiB; main() -> Cache.fill() -> grow() leaks
1 MiB more (a method: its qualified name is Cache.fill). Prints "py_alloc: ok leaks=2".
Usage: python3.X py_alloc.py LIBCUDART (the SIMULATED tests/bin/sim/libcudart.so.13)."""
import ctypes
import sys

cudart = ctypes.CDLL(sys.argv[1])
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
kept = []


def grow(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), n)  # @site grow
    if err:
        raise SystemExit("py_alloc: cudaMalloc failed: %d" % err)
    kept.append(p)


class Cache:
    def fill(self):
        grow(1 << 20)  # @site fill


def main():
    grow(2 << 20)  # @site main_grow
    Cache().fill()  # @site main_fill
    print("py_alloc: ok leaks=%d" % len(kept))


main()  # @site module
