/* urgency/bench_urgency.c - the urgency scheduler's own cost as the cluster
 * and the number of applications grow (urgency-scheduler.md, Section V-F,
 * Figures 5 and 6: the scheduler's time from 3 to 16 nodes and 4 to 18
 * applications, 1.22x the 3-node, 4-application time at 16 nodes and 18
 * applications). A benchmark, not a test.
 *
 * For each (nodes, applications) point, libsymphony-urgency runs on a
 * simulated clock: applications are copies of four templates (the
 * urgency-spikes study's search, sql, options and transcode: response time,
 * GPU time beta + alpha * size, a CPU three times slower, sizes uniform in
 * [0.5, 1.5]), Poisson arrivals whose total grows with the nodes (the
 * study's 7-node loads scaled by nodes / 7, split evenly over an
 * application's copies), each node 2 GPUs and one CPU. After every arrival
 * and completion each application with pending requests polls
 * sym_urg_can_issue until none is granted, as the paper's applications do.
 * The time inside the library's calls (notify, can_issue, complete; the
 * monotonic clock read around each call, its own cost included) is summed;
 * the result is that time per request, and its ratio to the first point.
 *
 *   urgency-bench [SECONDS]     simulated seconds per point (default 10)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_rng.h>

#include "core/build.h"
#include "core/iheap.h"
#include "urgency/symphony_urgency.h"

struct tmpl {
	const char *name;
	double resp_ms, rate7, alpha_ms, beta_ms;
	int consolidate;
};

static const struct tmpl tmpls[4] = {
	{ "search", 5, 3000, 0.1, 1.5, 64 },
	{ "sql", 150, 100, 5, 40, 16 },
	{ "options", 800, 10, 20, 200, 8 },
	{ "transcode", 45000, 0.3, 1500, 6000, 1 },
};

/* The simulated clock the scheduler reads. */
static double sim_ms;
static double sim_clock(void *ctx)
{
	(void)ctx;
	return sim_ms;
}

static double wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The harness's own random numbers (arrivals, sizes), seeded 1. */
static gsl_rng *rng;
static double uniform01(void)
{
	return gsl_rng_uniform(rng);
}

static double expo_ms(double rate_per_s)
{
	return -log(1 - uniform01()) * 1e3 / rate_per_s;
}

/* Events, in one indexed heap keyed by time (ns): id a < apps is
 * application a's next arrival, id apps + i the completion of the set in
 * slot i (at most one set per resource unit is in flight). */
static inline int64_t key_of(double ms)
{
	return (int64_t)llround(ms * 1e6);
}

struct point {
	int nodes, apps;
	uint64_t requests, calls, late;
	double lib_ns;
};

/* Runs one point for `seconds` simulated seconds. 0 or -1. */
static int run_point(struct point *p, double seconds)
{
	char err[256];
	struct sym_urg_config cfg = { .nodes = p->nodes, .cpus_per_node = 1, .gpus_per_node = 2, .clock_ms = sim_clock };
	sim_ms = 0;
	struct sym_urg *u = sym_urg_create(&cfg, err, sizeof(err));
	if (!u) {
		fprintf(stderr, "urgency-bench: %s\n", err);
		return -1;
	}
	int *nodelist = malloc((size_t)p->nodes * sizeof(int));
	int *id = malloc((size_t)p->apps * sizeof(int));
	int *pending = calloc((size_t)p->apps, sizeof(int));
	double *rate = malloc((size_t)p->apps * sizeof(double));
	int units = p->nodes * 3, slots_free = units;
	uint64_t *slot_sid = malloc((size_t)units * sizeof(uint64_t));
	int *free_slot = malloc((size_t)units * sizeof(int));
	struct sym_iheap h;
	bool heap_ok = !sym_iheap_init(&h, p->apps + units);
	int rc = -1;
	if (!nodelist || !id || !pending || !rate || !slot_sid || !free_slot || !heap_ok)
		goto out;
	for (int i = 0; i < units; i++)
		free_slot[i] = units - 1 - i;
	for (int n = 0; n < p->nodes; n++)
		nodelist[n] = n;
	for (int a = 0; a < p->apps; a++) {
		const struct tmpl *t = &tmpls[a % 4];
		int copies = p->apps / 4 + (a % 4 < p->apps % 4);
		rate[a] = t->rate7 * p->nodes / 7.0 / copies;
		id[a] = sym_urg_register(u, t->resp_ms, rate[a], nodelist, p->nodes, 1, t->consolidate, err, sizeof(err));
		if (id[a] < 0) {
			fprintf(stderr, "urgency-bench: register: %s\n", err);
			goto out;
		}
		sym_iheap_set(&h, a, key_of(expo_ms(rate[a])));
	}
	double end = seconds * 1e3, ns = 0;
	uint64_t calls = 0, requests = 0;
	int nodes[1], res[1];
	while (!sym_iheap_empty(&h)) {
		sim_ms = (double)sym_iheap_top_key(&h) / 1e6;
		int ev = sym_iheap_pop(&h);
		if (ev < p->apps) {
			if (sim_ms >= end)
				continue; /* arrivals stop; the sets in flight finish */
			double size = 0.5 + uniform01();
			double t0 = wall_ns();
			int r = sym_urg_notify(u, id[ev], size);
			ns += wall_ns() - t0;
			calls++;
			if (r)
				goto out;
			pending[ev]++;
			requests++;
			sym_iheap_set(&h, ev, key_of(sim_ms + expo_ms(rate[ev])));
		} else {
			int slot = ev - p->apps;
			free_slot[slots_free++] = slot;
			double t0 = wall_ns();
			int r = sym_urg_complete(u, slot_sid[slot]);
			ns += wall_ns() - t0;
			calls++;
			if (r)
				goto out;
		}
		/* every application with work polls until nobody is granted */
		for (int granted = 1; granted;) {
			granted = 0;
			for (int a = 0; a < p->apps; a++) {
				if (!pending[a])
					continue;
				int n;
				uint64_t sid;
				double t0 = wall_ns();
				bool ok = sym_urg_can_issue(u, id[a], &n, &sid, nodes, res);
				ns += wall_ns() - t0;
				calls++;
				if (!ok)
					continue;
				granted = 1;
				pending[a] -= n;
				const struct tmpl *t = &tmpls[a % 4];
				double took = t->beta_ms + t->alpha_ms * n; /* sizes average 1 */
				if (res[0] == SYM_URG_CPU)
					took *= 3;
				if (!slots_free)
					goto out; /* more sets than resource units: a library bug */
				int slot = free_slot[--slots_free];
				slot_sid[slot] = sid;
				sym_iheap_set(&h, p->apps + slot, key_of(sim_ms + took));
			}
		}
	}
	p->requests = requests;
	p->calls = calls;
	p->lib_ns = ns;
	p->late = 0;
	for (int a = 0; a < p->apps; a++) {
		struct sym_urg_stats s;
		if (!sym_urg_stats(u, id[a], &s))
			p->late += s.late;
	}
	rc = 0;
out:
	if (heap_ok)
		sym_iheap_finish(&h);
	free(slot_sid);
	free(free_slot);
	free(nodelist);
	free(id);
	free(pending);
	free(rate);
	sym_urg_destroy(u);
	return rc;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	if (argc > 2 || !(seconds > 0) || seconds > 3600) {
		fprintf(stderr, "usage: urgency-bench [SECONDS]   (simulated seconds per point, 0 < S <= 3600; "
				"default 10)\n");
		return 2;
	}
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rng)
		return 1;
	gsl_rng_set(rng, 1);
	static const int node_counts[] = { 3, 6, 10, 16 }, app_counts[] = { 4, 8, 12, 18 };
	printf("urgency-bench (symphony %s @%s, %s build): libsymphony-urgency's time per request (ns, inside its "
	       "calls), %g simulated s per point, harness seed 1; 2 GPUs and 1 CPU per node\n",
	       sym_build_version(), sym_build_commit(), sym_build_type(), seconds);
	printf("%5s %5s %10s %10s %8s %10s %8s\n", "nodes", "apps", "requests", "calls", "late%", "ns/request", "vs base");
	double base = 0;
	struct point warm = { .nodes = node_counts[0], .apps = app_counts[0] };
	if (run_point(&warm, seconds)) { /* untimed: the first point would pay for cold caches */
		gsl_rng_free(rng);
		return 1;
	}
	for (size_t i = 0; i < sizeof(node_counts) / sizeof(node_counts[0]); i++)
		for (size_t j = 0; j < sizeof(app_counts) / sizeof(app_counts[0]); j++) {
			struct point p = { .nodes = node_counts[i], .apps = app_counts[j] };
			if (run_point(&p, seconds)) {
				gsl_rng_free(rng);
				return 1;
			}
			double per = p.requests ? p.lib_ns / (double)p.requests : 0;
			if (i == 0 && j == 0)
				base = per;
			printf("%5d %5d %10llu %10llu %8.2f %10.0f %7.2fx\n", p.nodes, p.apps, (unsigned long long)p.requests,
			       (unsigned long long)p.calls, p.requests ? 100.0 * (double)p.late / (double)p.requests : 0,
			       per, base > 0 ? per / base : 0);
			fflush(stdout);
		}
	gsl_rng_free(rng);
	return 0;
}
