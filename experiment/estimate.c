#include "experiment/estimate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hist.h"

/* Bytes, as measured (experiment/estimate.h): rounded up. */
#define HIST_BYTES ((double)SYM_HIST_BUCKETS * 4)
#define RNG_BYTES 5120.0      /* a gsl mt19937 generator */
#define MODEL_FIXED 1024.0    /* the model's own structures in the engine and the core */
#define GPU_FIXED 256.0
#define REQUEST_BYTES 64.0    /* a request, its free-list and queue pointers */
#define ROW_BYTES 40.0        /* struct sym_timeline_row */
#define MODEL_ROW_BYTES 24.0  /* offered, good, bad */
#define BASE_BYTES 16e6       /* the program and its libraries */

enum { MODELS, GPUS, TIMELINE, MODEL_TIMELINE, REQUESTS };

/* Model m's largest batch over the device kinds. */
static int max_batch(const struct sym_experiment *e, size_t m)
{
	int b = 1;
	for (int k = 0; k < e->nkinds; k++)
		if (e->profiles[(size_t)k * e->nmodels + m].max_batch > b)
			b = e->profiles[(size_t)k * e->nmodels + m].max_batch;
	return b;
}

/* The schedule at scale 1, computed once: per rate-table column or for the
 * segments (whose rates split by the shares), the mean and the peak. */
struct sched {
	size_t ncols;
	double *col;            /* ncols means, then ncols peaks; NULL when no memory */
	double seg_mean, seg_peak;
};

/* Model m's mean and highest rate (req/s) at rate option `rate`. */
static void model_rates(const struct sym_experiment *e, const struct sched *s, size_t m, double rate, double *mean,
			double *peak)
{
	if (e->rate_csv[0] && s->col) {
		*mean = rate * s->col[e->table_col[m]];
		*peak = rate * s->col[s->ncols + (size_t)e->table_col[m]];
	} else if (e->rate_csv[0]) { /* the column read again (no memory for the means) */
		*mean = rate * sym_experiment_model_rate(e, m);
		*peak = 0;
		for (size_t r = 0; r < e->table.nrows; r++)
			*peak = fmax(*peak, rate * e->table.rates[r * e->table.ncols + (size_t)e->table_col[m]]);
	} else if (e->arrival_trace[0]) {
		*mean = rate * sym_experiment_model_rate(e, m);
		*peak = rate * e->trace->peak[e->trace_col[m]];
	} else if (e->nseg) {
		*mean = rate * sym_experiment_share(e, m) * s->seg_mean;
		*peak = rate * sym_experiment_share(e, m) * s->seg_peak;
	} else {
		*mean = *peak = rate * sym_experiment_share(e, m);
	}
}

void sym_estimate_run(const struct sym_experiment *e, double rate, int gpus, bool model_timeline,
		      struct sym_estimate *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = e->nmodels;
	double dur = sym_experiment_duration(e);
	double sched = e->rate_csv[0] ? (double)e->table.nrows : (double)e->nseg; /* each model's copy */
	double burst = e->arrival.kind == SYM_ARRIVAL_GAMMA ? ceil(1 / e->arrival.shape) : 1;
	double net_ms = e->ctrl_ms + e->resp_ms + e->done_ms + 10 * e->tail_ms;
	int maxb_all = 1;
	struct sched sc = { .ncols = e->rate_csv[0] ? e->table.ncols : 0 };
	sc.col = sc.ncols ? calloc(2 * sc.ncols, sizeof(double)) : NULL;
	for (size_t r = 0; sc.col && r < e->table.nrows; r++)
		for (size_t c = 0; c < sc.ncols; c++) {
			double v = e->table.rates[r * sc.ncols + c];
			sc.col[c] += v / (double)e->table.nrows;
			sc.col[sc.ncols + c] = fmax(sc.col[sc.ncols + c], v);
		}
	double len = 0;
	for (size_t i = 0; i < e->nseg; i++) {
		double d = sym_to_s(e->segments[i].duration);
		sc.seg_mean += e->segments[i].rate * d;
		sc.seg_peak = fmax(sc.seg_peak, e->segments[i].rate);
		len += d;
	}
	sc.seg_mean = len > 0 ? sc.seg_mean / len : 0;
	for (size_t m = 0; m < n; m++) {
		int maxb = max_batch(e, m);
		maxb_all = maxb > maxb_all ? maxb : maxb_all;
		out->part[MODELS] += 2 * HIST_BYTES + RNG_BYTES + MODEL_FIXED + 8.0 * (maxb + 2) * (2 * e->nkinds + 3) +
				     16 * sched + 32;
		double mean, peak;
		model_rates(e, &sc, m, rate, &mean, &peak);
		double reqs = mean * dur;
		out->requests += reqs;
		if (reqs > out->model_requests) {
			out->model_requests = reqs;
			out->busiest = m;
		}
		/* alive at once: arrived within about two SLOs (early drop ends the rest), a burst, at most all */
		double window_s = (2 * e->model_slo_ms[m] + net_ms + e->data_ms * maxb) / 1e3 + 0.01;
		out->live += fmin(reqs + 1, peak * window_s + burst);
	}
	free(sc.col);
	out->part[MODELS] += 2 * HIST_BYTES + 8.0 * (maxb_all + 1); /* the totals */
	double g = gpus > 0 ? gpus : e->gpus;
	out->part[GPUS] = g * (GPU_FIXED + 16.0 * maxb_all);
	out->timeline_rows = ceil(dur / e->interval_s);
	out->part[TIMELINE] = out->timeline_rows * ROW_BYTES;
	if (model_timeline)
		out->part[MODEL_TIMELINE] = out->timeline_rows * (double)n * MODEL_ROW_BYTES;
	out->part[REQUESTS] = out->live * REQUEST_BYTES;
	for (int i = 0; i <= REQUESTS; i++)
		out->bytes += out->part[i];
}

/* A limit in bytes, or 0: cgroup v2's memory.max less memory.current. */
static double cgroup_available(void)
{
	double lim = 0, cur = 0;
	FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
	if (!f)
		return 0;
	int ok = fscanf(f, "%lf", &lim) == 1;
	fclose(f);
	if (!ok) /* "max" */
		return 0;
	if ((f = fopen("/sys/fs/cgroup/memory.current", "r"))) {
		if (fscanf(f, "%lf", &cur) != 1)
			cur = 0;
		fclose(f);
	}
	return lim > cur ? lim - cur : 1;
}

double sym_memory_available(void)
{
	double avail = 0;
	FILE *f = fopen("/proc/meminfo", "r");
	if (f) {
		char line[256];
		double kb;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
				avail = kb * 1024;
		fclose(f);
	}
	if (!(avail > 0)) {
		long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
		avail = pages > 0 && size > 0 ? (double)pages * (double)size : 0;
	}
	double cg = cgroup_available();
	return cg > 0 && (cg < avail || !(avail > 0)) ? cg : avail;
}

static const char *human(double bytes, char *buf, size_t len)
{
	const char *unit[] = { "B", "KB", "MB", "GB", "TB", "PB" };
	int u = 0;
	while (bytes >= 1000 && u < 5)
		bytes /= 1000, u++;
	snprintf(buf, len, "%.*f %s", bytes < 10 ? 1 : 0, bytes, unit[u]);
	return buf;
}

int sym_estimate_check(const struct sym_experiment *e, double rate, int gpus, bool model_timeline, int jobs,
		       char *err, size_t errlen)
{
	struct sym_estimate x;
	sym_estimate_run(e, rate, gpus, model_timeline, &x);
	double dur = sym_experiment_duration(e);
	if (x.model_requests > SYM_MAX_MODEL_REQUESTS)
		return snprintf(err, errlen, "model '%s' would get about %.3g requests in one run (%.6g req/s for %g s); a "
					     "model's latency histogram counts at most %g: shorten duration_s or lower the rate",
				e->models[x.busiest].name, x.model_requests, x.model_requests / dur, dur,
				SYM_MAX_MODEL_REQUESTS), -EINVAL;
	double avail = sym_memory_available();
	if (!(avail > 0))
		return 0; /* unknown: nothing to compare with */
	if (jobs < 1)
		jobs = 1;
	double need = BASE_BYTES + jobs * x.bytes, limit = 0.8 * avail;
	if (need <= limit)
		return 0;
	int top = 0;
	for (int i = 1; i <= REQUESTS; i++)
		if (x.part[i] > x.part[top])
			top = i;
	char what[200], b1[32], b2[32], b3[32];
	const char *advice;
	switch (top) {
	case MODELS:
		snprintf(what, sizeof(what), "%zu models at %s each", e->nmodels,
			 human(x.part[MODELS] / (double)e->nmodels, b3, sizeof(b3)));
		advice = "serve fewer models (models, num_models)";
		break;
	case GPUS:
		snprintf(what, sizeof(what), "%.0f GPUs", gpus > 0 ? (double)gpus : (double)e->gpus);
		advice = "use fewer GPUs";
		break;
	case TIMELINE:
		snprintf(what, sizeof(what), "a timeline of %.3g intervals: duration_s %g / interval_s %g", x.timeline_rows,
			 dur, e->interval_s);
		advice = "raise interval_s or shorten duration_s";
		break;
	case MODEL_TIMELINE:
		snprintf(what, sizeof(what), "a per-model timeline of %.3g intervals x %zu models", x.timeline_rows,
			 e->nmodels);
		advice = "leave out --model-timeline, raise interval_s or shorten duration_s";
		break;
	default:
		snprintf(what, sizeof(what), "up to %.3g requests in memory at once", x.live);
		advice = "lower the rate, shorten the SLOs or raise the gamma shape K";
		break;
	}
	if (jobs > 1 && BASE_BYTES + x.bytes <= limit)
		return snprintf(err, errlen, "%d runs at once would need about %s of memory (%s each, mostly %s), more "
					     "than the %s available (80%% of what this machine has free); run fewer at once "
					     "(-j)", jobs, human(need, b1, sizeof(b1)), human(x.bytes, b3, sizeof(b3)), what,
				human(limit, b2, sizeof(b2))), -EINVAL;
	return snprintf(err, errlen, "the run would need about %s of memory, mostly %s: more than the %s available (80%% "
				     "of what this machine has free); %s", human(BASE_BYTES + x.bytes, b1, sizeof(b1)), what,
			human(limit, b2, sizeof(b2)), advice), -EINVAL;
}
