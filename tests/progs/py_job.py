"""py_job.py — one rank of a data-parallel job on the SIMULATED runtime and NCCL (tests/sim,
through ctypes; nothing moves): for gputop --dump (tests/e2e/dump_job.sh). Run NRANKS of them
with NCCL_SIM_JOB=FILE, so that each collective waits until every rank has reached it.

Each rank makes its communicator, prints "ready <pid>", waits for the file GO, then makes ITER
steps: a bit of arithmetic (its "loss"), one ncclAllReduce, one cudaStreamSynchronize. Rank ODD,
before its collective number AT (1-based), calls straggle(), which waits in Python for the file
STOP (at the line marked "@site straggle") after printing "straggling <pid>"; the others then
wait inside that collective. With PY_JOB_SLOW_MS=M in its environment, rank ODD also sleeps M ms
in Python before each collective (slow(), "@site slow"): a straggler the others wait for at
every step. With PY_JOB_HANG=FILE, rank ODD also calls straggle() at its first step after FILE
appears (tests/e2e/metrics_job.sh: a job that hangs when the test says). With PY_JOB_WARM=W,
each makes W collectives before "ready" (before any attach: NCCL's own counter has them,
gputop's count since the attach does not), and prints "counter_offset N" (where the simulated
NCCL keeps its counter); with PY_JOB_STEP_MS=M each of the first 30 steps ends with M ms in
Python (quiet moments between collectives); with PY_JOB_QUERY=Q every Qth step asks
ncclCommCount (as frameworks do). Each rank also runs PY_JOB_THREADS (8) idle Python threads, as a training process runs
loader and helper threads: --dump takes every thread's stack. At the end each prints
"py_job: rank R collectives=N loss=X" and exits 0.

Usage: python3 py_job.py LIBCUDART LIBNCCL RANK NRANKS ITER ODD AT GO STOP"""
import ctypes
import os
import sys
import threading
import time

cudart_path, nccl_path, rank, nranks, iters, odd, at, go, stop = sys.argv[1:10]
rank, nranks, iters, odd, at = int(rank), int(nranks), int(iters), int(odd), int(at)
cudart = ctypes.CDLL(cudart_path)
nccl = ctypes.CDLL(nccl_path)


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


NCCL_FLOAT32, NCCL_SUM = 7, 0


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.01)


def straggle():
    print("straggling %d" % os.getpid(), flush=True)
    # One line, and C functions only (os.access, time.sleep): wherever a dump catches the
    # thread, its innermost Python frame is this line. With os.path.exists (Python code,
    # genericpath.py) a dump once named that file's line, in make check.
    while not os.access(stop, os.F_OK): time.sleep(0.01)  # @site straggle


def slow(ms):
    time.sleep(ms / 1000.0)  # @site slow


def helper(finished):
    finished.wait()


def main():
    slow_ms = float(os.environ.get("PY_JOB_SLOW_MS", "0"))
    step_ms = float(os.environ.get("PY_JOB_STEP_MS", "0"))
    query = int(os.environ.get("PY_JOB_QUERY", "0"))
    hang = os.environ.get("PY_JOB_HANG")
    finished = threading.Event()
    for _ in range(int(os.environ.get("PY_JOB_THREADS", "8"))):
        threading.Thread(target=helper, args=(finished,), daemon=True).start()
    comm = ctypes.c_void_p()
    err = nccl.ncclCommInitRank(ctypes.byref(comm), nranks, UniqueId(), rank)
    if err:
        raise SystemExit("py_job: ncclCommInitRank failed: %d" % err)
    buf = ctypes.c_void_p()
    if cudart.cudaMalloc(ctypes.byref(buf), 4096):
        raise SystemExit("py_job: cudaMalloc failed")
    for _ in range(int(os.environ.get("PY_JOB_WARM", "0"))):
        nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(1024), NCCL_FLOAT32, NCCL_SUM, comm, None)
    print("counter_offset %d" % ctypes.c_size_t.in_dll(nccl, "sim_nccl_counter_offset").value, flush=True)
    print("ready %d" % os.getpid(), flush=True)
    wait_for(go)
    loss, done = 1.0, 0
    for step in range(iters):
        loss = loss * 0.97 + 0.01 * ((step * (rank + 3)) % 7)
        if rank == odd and (step + 1 == at or (hang and os.path.exists(hang))):
            hang = None
            straggle()
        if rank == odd and slow_ms:
            slow(slow_ms)
        err = nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(1024), NCCL_FLOAT32, NCCL_SUM, comm, None)  # @site allreduce
        if err:
            raise SystemExit("py_job: ncclAllReduce failed: %d" % err)
        done += 1
        cudart.cudaStreamSynchronize(None)
        if query and step % query == query - 1:
            nccl.ncclCommCount(comm, ctypes.byref(ctypes.c_int()))
        if step_ms and step < 30:
            time.sleep(step_ms / 1000.0)
    print("py_job: rank %d collectives=%d loss=%.6f" % (rank, done, loss), flush=True)
    finished.set()


main()
