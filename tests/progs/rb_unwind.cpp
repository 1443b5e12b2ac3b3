/* rb_unwind.cpp — C++ unwinding through a CUDA call in flight, for
 * tests/e2e/robust_threads.sh. Needs SIMCUDA_SYNC_HOOK=rb_unwind_hook (the SIMULATED runtime
 * then calls rb_unwind_hook from inside every synchronize call).
 * Usage: rb_unwind MODE [N]
 *   destructor N  N threads, one after the other, each calling cudaStreamSynchronize(0) from a
 *                 frame holding an object whose destructor counts; the hook pthread_exit()s
 *                 from inside the call (a forced unwind). Prints "rb_unwind: destructor
 *                 threads=N retval=<joined with 42> destructors=<run>".
 *   throw N       N times: cudaStreamSynchronize(0) inside try; the hook throws an int, which
 *                 must unwind through the runtime's frames to the catch. Prints "rb_unwind:
 *                 throw thrown=N caught=<c> destructors=<d>". */
#include <cuda_runtime_api.h>
#include <pthread.h>

#include "progs.h"

enum action { ACT_NONE, ACT_EXIT, ACT_THROW };
static __thread int hook_action;
static int destructors;

extern "C" void rb_unwind_hook(void)
{
	int a = hook_action;
	hook_action = ACT_NONE;
	if (a == ACT_EXIT)
		pthread_exit((void *)42);
	if (a == ACT_THROW)
		throw 7;
}

struct guard {
	~guard() { __atomic_add_fetch(&destructors, 1, __ATOMIC_RELAXED); }
};

__attribute__((noinline)) static void sync_with_guard(int action)
{
	guard g;
	hook_action = action;
	cudaStreamSynchronize(0);
}

static void *exit_thread(void *)
{
	sync_with_guard(ACT_EXIT);
	return (void *)1;	/* never reached */
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 5;
	if (strcmp(mode, "destructor") == 0) {
		int retval_ok = 0;
		for (int i = 0; i < n; i++) {
			pthread_t th;
			void *ret = NULL;
			pthread_create(&th, NULL, exit_thread, NULL);
			pthread_join(th, &ret);
			retval_ok += ret == (void *)42;
		}
		printf("rb_unwind: destructor threads=%d retval=%d destructors=%d\n", n, retval_ok,
		       destructors);
		return 0;
	}
	if (strcmp(mode, "throw") == 0) {
		int caught = 0;
		for (int i = 0; i < n; i++) {
			try {
				sync_with_guard(ACT_THROW);
			} catch (int v) {
				caught += v == 7;
			}
		}
		printf("rb_unwind: throw thrown=%d caught=%d destructors=%d\n", n, caught, destructors);
		return 0;
	}
	fprintf(stderr, "usage: rb_unwind destructor|throw [N]\n");
	return 2;
}
