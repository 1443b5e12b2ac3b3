"""py_loop.py — a Python program that keeps calling the CUDA runtime through ctypes, to be
attached to (tests/e2e/namespaces.sh: Python call stacks of a program in another PID
namespace). Prints "ready <pid>", then calls cudaMalloc of 4096 bytes from grow() at the line
marked "@site grow", every 10 ms, keeping every pointer, until the file STOP exists; then prints
"py_loop: ok" and exits 0.
Usage: python3.X py_loop.py LIBCUDART STOP (the SIMULATED tests/bin/sim/libcudart.so.13)."""
import ctypes
import os
import sys
import time

cudart = ctypes.CDLL(sys.argv[1])
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
kept = []


def grow():
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), 4096)  # @site grow
    if err:
        raise SystemExit("py_loop: cudaMalloc failed: %d" % err)
    kept.append(p)


print("ready %d" % os.getpid(), flush=True)
while not os.path.exists(sys.argv[2]):
    grow()  # @site loop
    time.sleep(0.01)
print("py_loop: ok", flush=True)
