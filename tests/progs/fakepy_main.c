/* fakepy_main.c — the program around the stand-in CPython (progs/fakepy.c, linked as
 * libpython3.X.so.1.0): "Python" calls cudaMalloc of 1 MiB (SIMULATED runtime), never freed,
 * from the frames grow (train.py:42) <- <module> (train.py:7); prints "fakepy: ok" when the call
 * succeeded. For tests/e2e/stacks_python_debug_offsets.sh. */
#include <cuda_runtime_api.h>
#include <stdio.h>

int fakepy_run(int (*cb)(void));

static __attribute__((noinline)) int alloc_from_python(void)
{
	void *p = NULL;
	volatile int err = (int)cudaMalloc(&p, 1 << 20);
	return err;
}

int main(void)
{
	int err = fakepy_run(alloc_from_python);
	printf(err ? "fakepy: cudaMalloc failed (%d)\n" : "fakepy: ok\n", err);
	return err != 0;
}
