/* cli/progress.c - the progress line (cli/progress.h). */
#include "cli/progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sim/engine.h"

struct cli_progress {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, shown;
	const char *what;
	double total_ns, t0;
	uint64_t base_ns;
};

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_fmt_duration(double s, char *buf, size_t len)
{
	if (s < 0 || s > 1e8)
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void show(struct cli_progress *p)
{
	double el = cli_now() - p->t0;
	double done = (double)(atomic_load_explicit(&sym_sim_work_ns, memory_order_relaxed) - p->base_ns);
	double frac = p->total_ns > 0 ? done / p->total_ns : 0;
	if (frac > 0.99)
		frac = 0.99; /* an estimate: never claim to be done before the end */
	char ela[32], eta[32];
	cli_fmt_duration(el, ela, sizeof(ela));
	cli_fmt_duration(frac > 0.01 ? el * (1 - frac) / frac : -1, eta, sizeof(eta));
	fprintf(stderr, "\r  %s: ~%.0f%%, %.0f of ~%.0f simulated s, elapsed %s, ETA ~%s\033[K", p->what, 100 * frac,
		done / 1e9, p->total_ns / 1e9, ela, eta);
	fflush(stderr);
	p->shown = true;
}

static void *meter(void *arg)
{
	struct cli_progress *p = arg;
	pthread_mutex_lock(&p->mu);
	double next = p->t0 + 2; /* nothing for short runs */
	while (!p->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		double wait = next - cli_now();
		if (wait > 0) {
			long ns = ts.tv_nsec + (long)(wait * 1e9);
			ts.tv_sec += ns / 1000000000L;
			ts.tv_nsec = ns % 1000000000L;
			int rc = pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			if (rc != ETIMEDOUT || p->stop)
				continue;
		}
		show(p);
		next = cli_now() + 0.5;
	}
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct cli_progress *cli_progress_start(const char *what, double total_s, bool enabled)
{
	if (!enabled || !isatty(2))
		return NULL;
	struct cli_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->what = what;
	p->total_ns = total_s * 1e9;
	p->t0 = cli_now();
	p->base_ns = atomic_load_explicit(&sym_sim_work_ns, memory_order_relaxed);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, meter, p)) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p);
		return NULL;
	}
	return p;
}

void cli_progress_stop(struct cli_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
