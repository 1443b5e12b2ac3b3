/* storm.h — the two halves of a storm program (exact_storm.c, torch_storm.c): the threads
 * make their first half, the program prints "half" and waits for the file GO.2 (when GO is
 * given: a test freezes or starves gputop meanwhile), then the threads make the second. */
#ifndef GPUTOP_TEST_STORM_H
#define GPUTOP_TEST_STORM_H

#include <pthread.h>

#include "progs.h"

struct storm {
	pthread_barrier_t halfway, second;
	const char *go;
	char go1[4096], go2[4096];
};

/* For n_threads workers; go: the GO argument (NULL: no waits). */
static inline void storm_init(struct storm *s, int n_threads, const char *go)
{
	pthread_barrier_init(&s->halfway, NULL, (unsigned)n_threads + 1);
	pthread_barrier_init(&s->second, NULL, (unsigned)n_threads + 1);
	s->go = go;
	snprintf(s->go1, sizeof s->go1, "%s.1", go ? go : "");
	snprintf(s->go2, sizeof s->go2, "%s.2", go ? go : "");
}

/* The program prints "ready <pid>" and waits for GO.1 (an attach first). */
static inline void storm_ready(struct storm *s)
{
	progs_ready();
	if (s->go)
		progs_wait_go(s->go1);
}

/* A worker at its half: on when the program has said "half" and GO.2 came. */
static inline void storm_worker_half(struct storm *s)
{
	pthread_barrier_wait(&s->halfway);
	pthread_barrier_wait(&s->second);
}

/* The program, once its workers run: "half" when all are at their half, then GO.2. */
static inline void storm_main_half(struct storm *s)
{
	pthread_barrier_wait(&s->halfway);
	printf("half\n");
	fflush(stdout);
	if (s->go)
		progs_wait_go(s->go2);
	pthread_barrier_wait(&s->second);
}

#endif
