/* urgency/example_two_apps.c - two client-server applications sharing a
 * 3-node CPU+GPU cluster through libsymphony-urgency, on the real clock.
 *
 * "search": 20 ms response time, 200 requests/s, its data on nodes 0 and 1
 * (any one node serves a request), consolidates up to 8 requests; a request
 * takes 2 ms + 0.5 ms per request of its set on a GPU, four times that on a
 * CPU. "transcode": 400 ms, 10 requests/s of 1-8 MB, on any node, one
 * request at a time; 20 ms per MB on a GPU, 60 on a CPU. From second 1 to
 * 2 search gets a 2x spike.
 *
 * Each application runs the paper's two threads: one notifies the scheduler
 * of each arriving request (open-loop arrivals), the other polls
 * canIssueRequests, "processes" the set (sleeps its time on the granted
 * resource, on a worker thread, so that sets run in parallel) and reports
 * the completion. Prints, per application, the requests served and late.
 *
 *   urgency-two-apps [SECONDS]      (default 3)
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "urgency/symphony_urgency.h"

struct appdef {
	const char *name;
	double resp_ms, rate, spike;
	int nodes[3], nnodes, consolidate;
	double gpu_fixed_ms, gpu_per_unit_ms, cpu_factor;
	double size_lo, size_hi; /* uniform request sizes */
};

static const struct appdef apps[2] = {
	{ "search", 20, 200, 2, { 0, 1 }, 2, 8, 2, 0.5, 4, 1, 1 },
	{ "transcode", 400, 10, 1, { 0, 1, 2 }, 3, 1, 0, 20, 3, 1, 8 },
};

static struct sym_urg *sched;
static int ids[2];
static double seconds = 3;
static atomic_int running = 1;
static atomic_int inflight;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(double ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { (time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* sizes of the requests notified and not yet issued, per application (a FIFO: the scheduler issues oldest first) */
static double sizes[2][1 << 16];
static atomic_uint head[2], tail[2];

struct job {
	int app, n;
	uint64_t id;
	double ms;
};

static void *work(void *p)
{
	struct job *j = p;
	sleep_ms(j->ms);
	sym_urg_complete(sched, j->id);
	atomic_fetch_sub(&inflight, 1);
	free(j);
	return NULL;
}

static void *notifier(void *p)
{
	int a = (int)(intptr_t)p;
	unsigned seed = 7u + (unsigned)a;
	double t0 = now_s(), t = 0;
	while (t < seconds) {
		double rate = apps[a].rate * (t >= 1 && t < 2 ? apps[a].spike : 1);
		t += -log((rand_r(&seed) + 1.0) / (RAND_MAX + 2.0)) / rate;
		sleep_ms(1e3 * (t0 + t - now_s()));
		double size = apps[a].size_lo + (apps[a].size_hi - apps[a].size_lo) * rand_r(&seed) / (double)RAND_MAX;
		unsigned i = atomic_fetch_add(&tail[a], 1);
		sizes[a][i % (1u << 16)] = size;
		sym_urg_notify(sched, ids[a], size);
	}
	return NULL;
}

static void *issuer(void *p)
{
	int a = (int)(intptr_t)p;
	while (atomic_load(&running)) {
		int n, nodes[3], res[3];
		uint64_t id;
		if (!sym_urg_can_issue(sched, ids[a], &n, &id, nodes, res)) {
			sleep_ms(0.2);
			continue;
		}
		double size = 0;
		for (int i = 0; i < n; i++)
			size += sizes[a][atomic_fetch_add(&head[a], 1) % (1u << 16)];
		double ms = apps[a].gpu_fixed_ms + apps[a].gpu_per_unit_ms * size;
		if (res[0] == SYM_URG_CPU)
			ms *= apps[a].cpu_factor;
		struct job *j = malloc(sizeof(*j));
		pthread_t th;
		if (!j)
			abort();
		*j = (struct job){ a, n, id, ms };
		atomic_fetch_add(&inflight, 1);
		if (pthread_create(&th, NULL, work, j))
			abort();
		pthread_detach(th);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	if (!(seconds > 0 && seconds <= 3600)) {
		fprintf(stderr, "usage: urgency-two-apps [SECONDS (0 < S <= 3600)]\n");
		return 2;
	}
	char err[256];
	struct sym_urg_config cfg = { .nodes = 3, .cpus_per_node = 2, .gpus_per_node = 1 };
	if (!(sched = sym_urg_create(&cfg, err, sizeof(err)))) {
		fprintf(stderr, "urgency-two-apps: %s\n", err);
		return 1;
	}
	for (int a = 0; a < 2; a++) {
		ids[a] = sym_urg_register(sched, apps[a].resp_ms, apps[a].rate, apps[a].nodes, apps[a].nnodes, 1,
					  apps[a].consolidate, err, sizeof(err));
		if (ids[a] < 0) {
			fprintf(stderr, "urgency-two-apps: %s: %s\n", apps[a].name, err);
			return 1;
		}
	}
	pthread_t th[4];
	for (int a = 0; a < 2; a++) {
		pthread_create(&th[2 * a], NULL, notifier, (void *)(intptr_t)a);
		pthread_create(&th[2 * a + 1], NULL, issuer, (void *)(intptr_t)a);
	}
	pthread_join(th[0], NULL);
	pthread_join(th[2], NULL);
	/* drain: until every notified request was issued and completed */
	for (int spin = 0; spin < 20000; spin++) {
		struct sym_urg_stats s0, s1;
		sym_urg_stats(sched, ids[0], &s0);
		sym_urg_stats(sched, ids[1], &s1);
		if (s0.completed == s0.notified && s1.completed == s1.notified && !atomic_load(&inflight))
			break;
		sleep_ms(1);
	}
	atomic_store(&running, 0);
	pthread_join(th[1], NULL);
	pthread_join(th[3], NULL);
	int rc = 0;
	for (int a = 0; a < 2; a++) {
		struct sym_urg_stats s;
		sym_urg_stats(sched, ids[a], &s);
		printf("%-10s %6llu requests, %6llu served, %5llu late (%.2f%%); EPT of one unit: GPU %.2f ms%s, CPU "
		       "%.2f ms%s\n", apps[a].name, (unsigned long long)s.notified, (unsigned long long)s.completed,
		       (unsigned long long)s.late, s.completed ? 100.0 * (double)s.late / (double)s.completed : 0,
		       s.ept_ms[SYM_URG_GPU], s.fitted[SYM_URG_GPU] ? "" : " (no fit yet)", s.ept_ms[SYM_URG_CPU],
		       s.fitted[SYM_URG_CPU] ? "" : " (no fit yet)");
		if (s.completed != s.notified)
			rc = 1; /* every request ends served exactly once */
	}
	sym_urg_destroy(sched);
	return rc;
}
