/* rb_vfork.c — a thread that cannot stop while CUDA arrives, for tests/e2e/robust_vfork.sh: the
 * parent of a vfork waits (uninterruptibly: no ptrace interrupt reaches it) until its child
 * execs or ends, and the child, a process gputop follows too, is stopped with the others when
 * gputop stops the world to probe the parent: neither would ever stop or go on.
 * Usage: rb_vfork STOP_FILE
 *   a thread vforks a child that polls for STOP_FILE (every 10 ms) and then _exits; another
 *   prints "beat N" every 50 ms; the main thread dlopens libcudart.so.13 after 20 ms. Once
 *   STOP_FILE exists and the child has ended, prints "rb_vfork: done" and exits 0. Not linked
 *   against libcudart. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *stop_file;
static atomic_bool done;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void *vforker(void *arg)
{
	(void)arg;
	pid_t child = vfork();
	if (child == 0) {	/* in the parent's memory: only system calls until _exit */
		struct timespec ts = { 0, 10000000 };
		while (access(stop_file, F_OK) != 0)
			nanosleep(&ts, NULL);
		_exit(0);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
	atomic_store(&done, 1);
	return NULL;
}

static void *beater(void *arg)
{
	(void)arg;
	for (long n = 1; !atomic_load(&done); n++) {
		printf("beat %ld\n", n);
		fflush(stdout);
		sleep_ms(50);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	stop_file = argv[1];
	pthread_t v, b;
	pthread_create(&b, NULL, beater, NULL);
	pthread_create(&v, NULL, vforker, NULL);
	sleep_ms(20);
	if (!dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL))
		return 1;
	pthread_join(v, NULL);
	pthread_join(b, NULL);
	printf("rb_vfork: done\n");
	return 0;
}
