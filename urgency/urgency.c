/* urgency/urgency.c - libsymphony-urgency: the urgency scheduler's
 * application API (symphony_urgency.h) on the real clock. */
#include "urgency/symphony_urgency.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/grow.h"
#include "core/urgency.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

struct req {
	double deadline, size;
};

struct app {
	double resp_ms, navg;
	int *nodes, nnodes, num_nodes, consolidate;
	struct req *q; /* a ring of qcap */
	size_t qh, qn, qcap;
	struct sym_urg_hist hist[SYM_URG_NRES];
	struct sym_urg_stats st;
};

struct set {
	bool used;
	uint32_t seq;
	int app, res, count;
	double start, size;
	int *nodes;      /* num_nodes of its app */
	double *deadlines; /* count */
};

struct sym_urg {
	pthread_mutex_t mu;
	int nnodes, units[SYM_URG_NRES];
	int *busy; /* [node * SYM_URG_NRES + res] */
	struct sym_urg_shape shape;
	enum sym_urg_app_rule app_rule;
	int min_samples;
	double (*clock_ms)(void *);
	void *clock_ctx;
	struct app *apps;
	int napps, appcap;
	struct set *sets;
	size_t nsets, setcap;
	uint32_t seq;
};

static double mono_ms(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct sym_urg *sym_urg_create(const struct sym_urg_config *cfg, char *err, size_t errlen)
{
	if (!cfg || cfg->nodes < 1 || cfg->nodes > SYM_URG_MAX_NODES) {
		snprintf(err, errlen, "nodes: %d (expected 1 to %d)", cfg ? cfg->nodes : 0, SYM_URG_MAX_NODES);
		return NULL;
	}
	if (cfg->cpus_per_node < 0 || cfg->gpus_per_node < 0 || cfg->cpus_per_node + cfg->gpus_per_node < 1 ||
	    cfg->cpus_per_node > 1024 || cfg->gpus_per_node > 1024) {
		snprintf(err, errlen, "a node needs 0 to 1024 CPUs and 0 to 1024 GPUs, at least one in all (got %d CPUs, %d GPUs)",
		    cfg->cpus_per_node, cfg->gpus_per_node);
		return NULL;
	}
	struct sym_urg_shape sh = { SYM_URG_POWER, cfg->p > 0 ? cfg->p : 3, cfg->monotone };
	if (cfg->shape && !strcmp(cfg->shape, "linear"))
		sh.kind = SYM_URG_LINEAR;
	else if (cfg->shape && !strcmp(cfg->shape, "exp"))
		sh.kind = SYM_URG_EXP;
	else if (cfg->shape && strcmp(cfg->shape, "power")) {
		snprintf(err, errlen, "shape: '%s' (expected power, linear or exp)", cfg->shape);
		return NULL;
	}
	if (!(cfg->p >= 0 && cfg->p <= 16)) {
		snprintf(err, errlen, "p: %g (expected 0 < p <= 16, or 0 for the default 3)", cfg->p);
		return NULL;
	}
	int ms = cfg->min_samples ? cfg->min_samples : 8;
	if (ms < 2 || ms > SYM_URG_HIST_CAP) {
		snprintf(err, errlen, "min_samples: %d (expected 2 to %d, or 0 for the default 8)", cfg->min_samples, SYM_URG_HIST_CAP);
		return NULL;
	}
	struct sym_urg *u = calloc(1, sizeof(*u));
	if (!u || !(u->busy = calloc((size_t)cfg->nodes * SYM_URG_NRES, sizeof(int)))) {
		free(u);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&u->mu, NULL);
	u->nnodes = cfg->nodes;
	u->units[SYM_URG_CPU] = cfg->cpus_per_node;
	u->units[SYM_URG_GPU] = cfg->gpus_per_node;
	u->shape = sh;
	u->app_rule = cfg->signed_app ? SYM_URG_APP_SIGNED : SYM_URG_APP_EQ5;
	u->min_samples = ms;
	u->clock_ms = cfg->clock_ms ? cfg->clock_ms : mono_ms;
	u->clock_ctx = cfg->clock_ctx;
	return u;
}

void sym_urg_destroy(struct sym_urg *u)
{
	if (!u)
		return;
	for (int a = 0; a < u->napps; a++) {
		free(u->apps[a].nodes);
		free(u->apps[a].q);
	}
	for (size_t i = 0; i < u->nsets; i++) {
		free(u->sets[i].nodes);
		free(u->sets[i].deadlines);
	}
	free(u->apps);
	free(u->sets);
	free(u->busy);
	pthread_mutex_destroy(&u->mu);
	free(u);
}

int sym_urg_register(struct sym_urg *u, double response_time_ms, double average_load, const int *nodelist,
		     int nodelist_size, int num_nodes, int consolidate, char *err, size_t errlen)
{
	if (!(response_time_ms > 0) || !isfinite(response_time_ms))
		return ERR("response_time: %g ms (expected a positive number)", response_time_ms);
	if (!(average_load >= 0) || !isfinite(average_load))
		return ERR("average_load: %g (expected requests per second >= 0)", average_load);
	if (!nodelist || nodelist_size < 1 || nodelist_size > u->nnodes)
		return ERR("nodelist: %d nodes (expected 1 to the cluster's %d)", nodelist_size, u->nnodes);
	if (num_nodes < 1 || num_nodes > nodelist_size)
		return ERR("num_nodes: %d (expected 1 to the nodelist's %d)", num_nodes, nodelist_size);
	if (consolidate < 1 || consolidate > 1000000)
		return ERR("consolidate: %d (expected 1 to 1000000)", consolidate);
	for (int i = 0; i < nodelist_size; i++) {
		if (nodelist[i] < 0 || nodelist[i] >= u->nnodes)
			return ERR("nodelist[%d]: node %d (the cluster has nodes 0 to %d)", i, nodelist[i], u->nnodes - 1);
		for (int j = 0; j < i; j++)
			if (nodelist[j] == nodelist[i])
				return ERR("nodelist: node %d twice", nodelist[i]);
	}
	pthread_mutex_lock(&u->mu);
	int rc = -ENOMEM;
	if (u->napps == SYM_URG_MAX_APPS) {
		rc = ERR("at most %d applications", SYM_URG_MAX_APPS);
		goto out;
	}
	if (u->napps == u->appcap) {
		int cap = u->appcap ? 2 * u->appcap : 8;
		struct app *x = realloc(u->apps, (size_t)cap * sizeof(*x));
		if (!x)
			goto out;
		u->apps = x;
		u->appcap = cap;
	}
	struct app *a = &u->apps[u->napps];
	memset(a, 0, sizeof(*a));
	if (!(a->nodes = malloc((size_t)nodelist_size * sizeof(int))))
		goto out;
	memcpy(a->nodes, nodelist, (size_t)nodelist_size * sizeof(int));
	a->nnodes = nodelist_size;
	a->num_nodes = num_nodes;
	a->consolidate = consolidate;
	a->resp_ms = response_time_ms;
	a->navg = average_load > 1 ? average_load : 1;
	rc = u->napps++;
out:
	pthread_mutex_unlock(&u->mu);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

int sym_urg_notify(struct sym_urg *u, int app, double size)
{
	if (!(size > 0) || !isfinite(size))
		return -EINVAL;
	pthread_mutex_lock(&u->mu);
	int rc = 0;
	if (app < 0 || app >= u->napps) {
		rc = -ENOENT;
		goto out;
	}
	struct app *a = &u->apps[app];
	if (a->qn == a->qcap) {
		size_t cap = a->qcap ? 2 * a->qcap : 64;
		struct req *q = malloc(cap * sizeof(*q));
		if (!q) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < a->qn; i++)
			q[i] = a->q[(a->qh + i) % a->qcap];
		free(a->q);
		a->q = q;
		a->qh = 0;
		a->qcap = cap;
	}
	a->q[(a->qh + a->qn) % a->qcap] = (struct req){ u->clock_ms(u->clock_ctx) + a->resp_ms, size };
	a->qn++;
	a->st.notified++;
	a->st.pending = (int)a->qn;
out:
	pthread_mutex_unlock(&u->mu);
	return rc;
}

/* Nodes of a with a free unit of res, least loaded first (ties: lower
 * node): fills pick[0..num_nodes) and returns true when there are enough. */
static bool pick_nodes(const struct sym_urg *u, const struct app *a, int res, int *pick)
{
	int got = 0;
	bool *taken = NULL;
	bool small[64] = { false };
	taken = a->nnodes <= 64 ? small : calloc((size_t)a->nnodes, sizeof(bool));
	if (!taken)
		return false;
	while (got < a->num_nodes) {
		int best = -1, best_load = 0;
		for (int i = 0; i < a->nnodes; i++) {
			int n = a->nodes[i];
			if (taken[i] || u->busy[n * SYM_URG_NRES + res] >= u->units[res])
				continue;
			int load = u->busy[n * SYM_URG_NRES + SYM_URG_CPU] + u->busy[n * SYM_URG_NRES + SYM_URG_GPU];
			if (best < 0 || load < best_load || (load == best_load && n < a->nodes[best])) {
				best = i;
				best_load = load;
			}
		}
		if (best < 0)
			break;
		taken[best] = true;
		if (pick)
			pick[got] = a->nodes[best];
		got++;
	}
	if (taken != small)
		free(taken);
	return got == a->num_nodes;
}

/* The size of the set a would issue now. */
static double set_size(const struct app *a, int q)
{
	double s = 0;
	for (int i = 0; i < q; i++)
		s += a->q[(a->qh + (size_t)i) % a->qcap].size;
	return s;
}

/* Algorithm 1: the application to issue now and its resource; -1 when no
 * application with pending requests has a resource available. */
static int decide(const struct sym_urg *u, double now, int *res_out)
{
	int best = -1, best_res = -1;
	double best_u = -INFINITY, best_dl = 0;
	for (int i = 0; i < u->napps; i++) {
		const struct app *a = &u->apps[i];
		if (!a->qn)
			continue;
		int q = a->consolidate < (int)a->qn ? a->consolidate : (int)a->qn;
		double size = set_size(a, q), dl = a->q[a->qh].deadline, load = (double)a->qn / a->navg;
		struct sym_urg_app ua;
		sym_urg_app_begin(&ua);
		for (int r = SYM_URG_NRES - 1; r >= 0; r--) { /* the GPU first: it keeps a tie */
			if (!u->units[r] || !pick_nodes(u, a, r, NULL))
				continue;
			double ept = sym_urg_hist_estimate(&a->hist[r], size, 0);
			sym_urg_app_add(&ua, u->app_rule, &u->shape, r, sym_urgency(&u->shape, dl - (now + ept), load), false);
		}
		if (ua.res < 0)
			continue;
		if (sym_urg_app_before(ua.u, dl, best >= 0, best_u, best_dl)) {
			best = i;
			best_res = ua.res;
			best_u = ua.u;
			best_dl = dl;
		}
	}
	*res_out = best_res;
	return best;
}

bool sym_urg_can_issue(struct sym_urg *u, int app, int *num_reqs, uint64_t *id, int *nodes, int *resources)
{
	pthread_mutex_lock(&u->mu);
	bool ok = false;
	if (app < 0 || app >= u->napps || !u->apps[app].qn)
		goto out;
	double now = u->clock_ms(u->clock_ctx);
	int res;
	if (decide(u, now, &res) != app)
		goto out;
	struct app *a = &u->apps[app];
	size_t slot = u->nsets;
	for (size_t i = 0; i < u->nsets; i++)
		if (!u->sets[i].used) {
			slot = i;
			break;
		}
	if (slot == u->nsets) {
		if (sym_grow(&u->sets, &u->setcap, u->nsets + 1, sizeof(*u->sets), 16))
			goto out;
		u->nsets++;
	}
	struct set *s = &u->sets[slot];
	int q = a->consolidate < (int)a->qn ? a->consolidate : (int)a->qn;
	int *nn = realloc(s->nodes, (size_t)a->num_nodes * sizeof(int));
	if (nn)
		s->nodes = nn;
	double *dd = nn ? realloc(s->deadlines, (size_t)q * sizeof(double)) : NULL;
	if (dd)
		s->deadlines = dd;
	if (!nn || !dd || !pick_nodes(u, a, res, s->nodes))
		goto out;
	s->used = true;
	s->seq = ++u->seq;
	s->app = app;
	s->res = res;
	s->count = q;
	s->start = now;
	s->size = 0;
	for (int i = 0; i < q; i++) {
		struct req *r = &a->q[a->qh];
		s->size += r->size;
		s->deadlines[i] = r->deadline;
		a->qh = (a->qh + 1) % a->qcap;
		a->qn--;
	}
	for (int i = 0; i < a->num_nodes; i++) {
		u->busy[s->nodes[i] * SYM_URG_NRES + res]++;
		nodes[i] = s->nodes[i];
		resources[i] = res;
	}
	a->st.issued += (uint64_t)q;
	a->st.pending = (int)a->qn;
	*num_reqs = q;
	*id = ((uint64_t)s->seq << 32) | (uint64_t)slot;
	ok = true;
out:
	pthread_mutex_unlock(&u->mu);
	return ok;
}

int sym_urg_complete(struct sym_urg *u, uint64_t id)
{
	pthread_mutex_lock(&u->mu);
	size_t slot = (size_t)(id & 0xffffffffu);
	int rc = -ENOENT;
	if (slot < u->nsets && u->sets[slot].used && u->sets[slot].seq == (uint32_t)(id >> 32)) {
		struct set *s = &u->sets[slot];
		struct app *a = &u->apps[s->app];
		double now = u->clock_ms(u->clock_ctx);
		sym_urg_hist_add(&a->hist[s->res], s->size, now - s->start, u->min_samples);
		for (int i = 0; i < a->num_nodes; i++)
			u->busy[s->nodes[i] * SYM_URG_NRES + s->res]--;
		for (int i = 0; i < s->count; i++)
			a->st.late += now > s->deadlines[i];
		a->st.completed += (uint64_t)s->count;
		s->used = false;
		rc = 0;
	}
	pthread_mutex_unlock(&u->mu);
	return rc;
}

int sym_urg_stats(struct sym_urg *u, int app, struct sym_urg_stats *out)
{
	pthread_mutex_lock(&u->mu);
	int rc = -ENOENT;
	if (app >= 0 && app < u->napps) {
		struct app *a = &u->apps[app];
		*out = a->st;
		for (int r = 0; r < SYM_URG_NRES; r++) {
			out->fitted[r] = a->hist[r].fitted;
			out->ept_ms[r] = sym_urg_hist_estimate(&a->hist[r], 1, 0);
		}
		rc = 0;
	}
	pthread_mutex_unlock(&u->mu);
	return rc;
}

double sym_urg_estimate(struct sym_urg *u, int app, int res, double size)
{
	pthread_mutex_lock(&u->mu);
	double x = -1;
	if (app >= 0 && app < u->napps && res >= 0 && res < SYM_URG_NRES)
		x = sym_urg_hist_estimate(&u->apps[app].hist[res], size, 0);
	pthread_mutex_unlock(&u->mu);
	return x;
}
