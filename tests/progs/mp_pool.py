#!/usr/bin/env python3
"""mp_pool.py -- a Python multiprocessing pool (fork) whose workers call the CUDA runtime through
ctypes, as PyTorch DataLoader/multiprocessing users do: the parent loads libcudart (as
`import torch` does) and makes one allocation, then a pool of WORKERS forked processes each runs
TASKS tasks; task i allocates (i + 1) MiB, copies 4 KiB to it and back, checks the bytes, and
frees it, except task 0 of each worker, which keeps its allocation (one leak per worker).
Prints "mp_pool: ok workers=W tasks=T" when every check passed. Usage: mp_pool.py WORKERS TASKS"""
import ctypes
import multiprocessing as mp
import os
import sys

rt = ctypes.CDLL("libcudart.so.13")
H2D, D2H = 1, 2
kept = []


def task(i):
    p = ctypes.c_void_p()
    size = (i % 4 + 1) << 20
    if rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) != 0:
        return "malloc"
    src = (ctypes.c_ubyte * 4096)(*([i % 251] * 4096))
    dst = (ctypes.c_ubyte * 4096)()
    if rt.cudaMemcpy(p, src, ctypes.c_size_t(4096), H2D) != 0 or \
       rt.cudaMemcpy(dst, p, ctypes.c_size_t(4096), D2H) != 0:
        return "memcpy"
    if bytes(dst) != bytes(src):
        return "mismatch"
    if i % TASKS_PER_WORKER == 0:
        kept.append(p)  # the worker's one leak
    elif rt.cudaFree(p) != 0:
        return "free"
    return os.getpid()


if __name__ == "__main__":
    workers, tasks = int(sys.argv[1]), int(sys.argv[2])
    TASKS_PER_WORKER = tasks
    p = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) != 0:
        sys.exit("mp_pool: cudaMalloc failed in the parent")
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        # chunksize = tasks: each worker gets tasks i*tasks .. i*tasks+tasks-1 in one go
        results = pool.map(task, range(workers * tasks), chunksize=tasks)
    bad = [r for r in results if not isinstance(r, int)]
    pids = set(r for r in results if isinstance(r, int))
    if bad:
        sys.exit("mp_pool: FAILED " + ",".join(bad))
    print(f"mp_pool: ok workers={len(pids)} tasks={tasks}")
