/* sim/parallel.c - a parallel for over a thread pool (sim/parallel.h). */
#include "sim/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct pfor {
	size_t n;
	atomic_size_t next;
	atomic_int failed;
	int (*fn)(void *, size_t);
	void *ctx;
};

static void *pfor_worker(void *arg)
{
	struct pfor *p = arg;
	for (;;) {
		if (atomic_load(&p->failed))
			break;
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		int rc = p->fn(p->ctx, i);
		if (rc) {
			int zero = 0;
			atomic_compare_exchange_strong(&p->failed, &zero, rc);
		}
	}
	return NULL;
}

int sym_parallel_for(size_t n, int jobs, int (*fn)(void *ctx, size_t i), void *ctx)
{
	struct pfor p = { .n = n, .fn = fn, .ctx = ctx };
	atomic_init(&p.next, 0);
	atomic_init(&p.failed, 0);
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > n)
		jobs = n ? (int)n : 1;
	pthread_t *th = jobs > 1 ? calloc((size_t)jobs, sizeof(*th)) : NULL;
	int started = 0;
	for (int t = 0; th && t < jobs; t++, started++)
		if (pthread_create(&th[t], NULL, pfor_worker, &p))
			break;
	if (!started)
		pfor_worker(&p); /* one job, or no thread could start: run here */
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	free(th);
	return atomic_load(&p.failed);
}

int sym_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}
