/* partition/partition.c - the partitioning MILP and its random baseline (see partition.h). */
#include "partition/partition.h"
#include "core/memory.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <coin/Cbc_C_Interface.h>

#define EPS 1e-7 /* slack on the capacity checks of a scored assignment (the solver's own tolerance) */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *sym_part_status_name(enum sym_part_status s)
{
	switch (s) {
	case SYM_PART_OPTIMAL: return "optimal";
	case SYM_PART_FEASIBLE: return "feasible";
	case SYM_PART_INFEASIBLE: return "infeasible";
	default: return "unknown";
	}
}

void sym_part_result_free(struct sym_part_result *r)
{
	free(r->assign);
	r->assign = NULL;
}

static int check(const struct sym_part_problem *p, char *err, size_t errlen)
{
	if (p->nmodels < 1 || !p->models)
		return snprintf(err, errlen, "partition: no models"), -EINVAL;
	if (p->nparts < 1 || p->nparts > 100000)
		return snprintf(err, errlen, "partition: %d parts (expected 1 to 100000)", p->nparts), -EINVAL;
	if ((double)p->nmodels * p->nparts > 5e7)
		return snprintf(err, errlen, "partition: %d models x %d parts is too large a problem", p->nmodels,
				p->nparts), -EINVAL;
	for (int i = 0; i < p->nmodels; i++) {
		const struct sym_part_model *m = &p->models[i];
		if (!(m->rate >= 0 && isfinite(m->rate)) || !(m->static_mb >= 0 && isfinite(m->static_mb)) ||
		    !(m->dynamic_mb >= 0 && isfinite(m->dynamic_mb)) || !(m->move_cost >= 0 && isfinite(m->move_cost)))
			return snprintf(err, errlen, "partition: model %d: rate, memory and move cost must be finite and "
					"not negative", i), -EINVAL;
		if (m->current < -1 || m->current >= p->nparts)
			return snprintf(err, errlen, "partition: model %d is now in part %d, of %d", i, m->current,
					p->nparts), -EINVAL;
	}
	if (!isfinite(p->r_max) || !isfinite(p->s_max) || !isfinite(p->w) || !isfinite(p->c_max) ||
	    !isfinite(p->time_limit_s))
		return snprintf(err, errlen, "partition: a limit is not a finite number"), -EINVAL;
	return 0;
}

/* A part's memory on each of its GPUs by the one rule (core/memory.h): S its
 * models' static memory, D their largest dynamic memory; and with md added. */
static double part_need(double S, double D)
{
	struct sym_mem u = { S, D };
	return sym_mem_need(&u);
}

static double part_need_with(double S, double D, const struct sym_part_model *md)
{
	struct sym_mem u = { S, D };
	return sym_mem_need_with(&u, md->static_mb, md->dynamic_mb);
}

/* The averages and the weight. */
static void averages(const struct sym_part_problem *p, double *rbar, double *sbar, double *w)
{
	double rs = 0, ss = 0;
	for (int i = 0; i < p->nmodels; i++) {
		rs += p->models[i].rate;
		ss += p->models[i].static_mb;
	}
	*rbar = rs / p->nparts;
	*sbar = ss / p->nparts;
	*w = p->w > 0 ? p->w : *sbar > 0 ? *rbar / *sbar : 1;
}

/* The change cost of an assignment: c_i for each part model i leaves and each it joins. */
static double change_cost(const struct sym_part_problem *p, const int *assign)
{
	double c = 0;
	for (int i = 0; i < p->nmodels; i++) {
		const struct sym_part_model *m = &p->models[i];
		if (assign[i] != m->current)
			c += m->current >= 0 ? 2 * m->move_cost : m->move_cost;
	}
	return c;
}

/* Scores assign with the parts' sums in the caller's scratch (3 * nparts doubles). */
static bool score_into(const struct sym_part_problem *p, const int *assign, double *scratch,
		       struct sym_part_result *r)
{
	int l = p->nparts;
	double *R = scratch, *S = scratch + l, *D = scratch + 2 * l;
	memset(scratch, 0, 3 * (size_t)l * sizeof(double));
	for (int i = 0; i < p->nmodels; i++) {
		const struct sym_part_model *m = &p->models[i];
		int j = assign[i];
		R[j] += m->rate;
		S[j] += m->static_mb;
		if (m->dynamic_mb > D[j])
			D[j] = m->dynamic_mb;
	}
	double rbar, sbar, w;
	averages(p, &rbar, &sbar, &w);
	bool ok = true;
	double dr = 0, ds = 0, rmin = INFINITY, rmax = -INFINITY, smin = INFINITY, smax = -INFINITY;
	for (int j = 0; j < l; j++) {
		if (p->r_max > 0 && R[j] > p->r_max * (1 + EPS) + EPS)
			ok = false;
		if (p->s_max > 0 && part_need(S[j], D[j]) > p->s_max * (1 + EPS) + EPS)
			ok = false;
		dr = fmax(dr, fabs(R[j] - rbar));
		ds = fmax(ds, fabs(S[j] - sbar));
		rmin = fmin(rmin, R[j]), rmax = fmax(rmax, R[j]);
		smin = fmin(smin, S[j]), smax = fmax(smax, S[j]);
	}
	r->w = w;
	r->dr = dr;
	r->ds = ds;
	r->objective = dr + w * ds;
	r->rate_imbalance = rbar > 0 ? (rmax - rmin) / rbar : 0;
	r->mem_imbalance = sbar > 0 ? (smax - smin) / sbar : 0;
	r->change_cost = change_cost(p, assign);
	if (p->c_max >= 0 && r->change_cost > p->c_max * (1 + EPS) + EPS)
		ok = false;
	return ok;
}

int sym_partition_score(const struct sym_part_problem *p, const int *assign, struct sym_part_result *r)
{
	double *scratch = malloc(3 * (size_t)p->nparts * sizeof(double));
	int *copy = malloc((size_t)p->nmodels * sizeof(int));
	if (!scratch || !copy) {
		free(scratch);
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, assign, (size_t)p->nmodels * sizeof(int));
	free(r->assign);
	r->assign = copy;
	bool ok = score_into(p, assign, scratch, r);
	free(scratch);
	return ok;
}

/* A start for the solver: the current assignment when it is complete and
 * feasible (it changes nothing), else each model, largest rate first, into the
 * part where it adds least relative imbalance and fits. NULL when none fits. */
static int *greedy(const struct sym_part_problem *p)
{
	int m = p->nmodels, l = p->nparts;
	int *a = calloc((size_t)m, sizeof(int)), *order = malloc((size_t)m * sizeof(int));
	double *R = calloc((size_t)l, sizeof(double)), *S = calloc((size_t)l, sizeof(double)),
	       *D = calloc((size_t)l, sizeof(double)), *scratch = malloc(3 * (size_t)l * sizeof(double));
	int *result = NULL;
	if (!a || !order || !R || !S || !D || !scratch)
		goto out;
	bool complete = true;
	for (int i = 0; i < m; i++)
		complete &= (a[i] = p->models[i].current) >= 0;
	struct sym_part_result tmp = { 0 };
	if (complete && score_into(p, a, scratch, &tmp)) {
		result = a;
		a = NULL;
		goto out;
	}
	for (int i = 0; i < m; i++)
		order[i] = i;
	for (int i = 1; i < m; i++) { /* insertion sort by rate, descending: m is at most a few thousand */
		int k = order[i], j = i;
		while (j > 0 && p->models[order[j - 1]].rate < p->models[k].rate) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = k;
	}
	double rbar, sbar, w;
	averages(p, &rbar, &sbar, &w);
	for (int n = 0; n < m; n++) {
		const struct sym_part_model *md = &p->models[order[n]];
		int best = -1;
		double best_v = INFINITY;
		for (int j = 0; j < l; j++) {
			if ((p->r_max > 0 && R[j] + md->rate > p->r_max) ||
			    (p->s_max > 0 && part_need_with(S[j], D[j], md) > p->s_max))
				continue;
			double v = (rbar > 0 ? (R[j] + md->rate) / rbar : 0) + (sbar > 0 ? (S[j] + md->static_mb) / sbar : 0);
			if (v < best_v)
				best_v = v, best = j;
		}
		if (best < 0)
			goto out;
		a[order[n]] = best;
		R[best] += md->rate;
		S[best] += md->static_mb;
		D[best] = fmax(D[best], md->dynamic_mb);
	}
	if (score_into(p, a, scratch, &tmp)) {
		result = a;
		a = NULL;
	}
out:
	free(a);
	free(order);
	free(R);
	free(S);
	free(D);
	free(scratch);
	return result;
}

/* Another start, for memory-tight problems where the balancing greedy one
 * finds no room: first fit, largest dynamic memory first (then largest
 * static), each model into the first part it fits. NULL when none fits. */
static int *first_fit(const struct sym_part_problem *p)
{
	int m = p->nmodels, l = p->nparts;
	int *a = malloc((size_t)(m ? m : 1) * sizeof(int)), *order = malloc((size_t)(m ? m : 1) * sizeof(int));
	double *R = calloc((size_t)l, sizeof(double)), *S = calloc((size_t)l, sizeof(double)),
	       *D = calloc((size_t)l, sizeof(double));
	int *result = NULL;
	if (!a || !order || !R || !S || !D)
		goto out;
	for (int i = 0; i < m; i++)
		order[i] = i;
	for (int i = 1; i < m; i++) { /* insertion sort: (dynamic, static) descending */
		int k = order[i], j = i;
		const struct sym_part_model *x = &p->models[k];
		while (j > 0) {
			const struct sym_part_model *y = &p->models[order[j - 1]];
			if (y->dynamic_mb > x->dynamic_mb || (y->dynamic_mb == x->dynamic_mb && y->static_mb >= x->static_mb))
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = k;
	}
	for (int n = 0; n < m; n++) {
		const struct sym_part_model *md = &p->models[order[n]];
		int j = 0;
		for (; j < l; j++)
			if (!(p->r_max > 0 && R[j] + md->rate > p->r_max) &&
			    !(p->s_max > 0 && part_need_with(S[j], D[j], md) > p->s_max))
				break;
		if (j == l)
			goto out;
		a[order[n]] = j;
		R[j] += md->rate;
		S[j] += md->static_mb;
		D[j] = fmax(D[j], md->dynamic_mb);
	}
	result = a;
	a = NULL;
out:
	free(a);
	free(order);
	free(R);
	free(S);
	free(D);
	return result;
}

/* ---- a local search: the solver's start ----
 *
 * From a feasible assignment, single moves and pairwise swaps that lower dR + w dS and keep (5),
 * (6) and (11), first improvement, until none is left or the time given is spent. CBC finds
 * balanced assignments of this min-max objective slowly on its own; started from a polished one,
 * it only has to improve on it (and its answer is never worse than its start). */

struct ls {
	const struct sym_part_problem *p;
	int *a;
	double *R, *S, *D;
	double rbar, sbar, w, cost;
};

static double ls_dmax(const struct ls *t, int j, int skip, int add)
{
	double d = add >= 0 ? t->p->models[add].dynamic_mb : 0;
	for (int i = 0; i < t->p->nmodels; i++)
		if (t->a[i] == j && i != skip && t->p->models[i].dynamic_mb > d)
			d = t->p->models[i].dynamic_mb;
	return d;
}

static double ls_obj(const struct ls *t)
{
	double dr = 0, ds = 0;
	for (int j = 0; j < t->p->nparts; j++) {
		dr = fmax(dr, fabs(t->R[j] - t->rbar));
		ds = fmax(ds, fabs(t->S[j] - t->sbar));
	}
	return dr + t->w * ds;
}

static double move_cost_delta(const struct sym_part_model *m, int from, int to)
{
	double before = from == m->current ? 0 : m->current >= 0 ? 2 * m->move_cost : m->move_cost;
	double after = to == m->current ? 0 : m->current >= 0 ? 2 * m->move_cost : m->move_cost;
	return after - before;
}

/* Moves model i to part b (and model k, if >= 0, from b to i's part) if that is feasible and
 * better; returns whether it did. */
static bool ls_try(struct ls *t, int i, int b, int k, double cur)
{
	const struct sym_part_problem *p = t->p;
	const struct sym_part_model *mi = &p->models[i], *mk = k >= 0 ? &p->models[k] : NULL;
	int a = t->a[i];
	double dR = mi->rate - (mk ? mk->rate : 0), dS = mi->static_mb - (mk ? mk->static_mb : 0);
	double dc = move_cost_delta(mi, a, b) + (mk ? move_cost_delta(mk, b, a) : 0);
	if (p->c_max >= 0 && t->cost + dc > p->c_max + EPS)
		return false;
	if (p->r_max > 0 && (t->R[b] + dR > p->r_max || (mk && t->R[a] - dR > p->r_max)))
		return false;
	t->R[a] -= dR, t->R[b] += dR, t->S[a] -= dS, t->S[b] += dS;
	double obj = ls_obj(t);
	bool ok = obj < cur - 1e-9;
	double Da = 0, Db = 0;
	if (ok && p->s_max > 0) {
		Da = ls_dmax(t, a, i, k);
		Db = ls_dmax(t, b, k, i);
		ok = part_need(t->S[a], Da) <= p->s_max && part_need(t->S[b], Db) <= p->s_max;
	}
	if (!ok) {
		t->R[a] += dR, t->R[b] -= dR, t->S[a] += dS, t->S[b] -= dS;
		return false;
	}
	t->a[i] = b;
	if (k >= 0)
		t->a[k] = a;
	if (p->s_max > 0)
		t->D[a] = Da, t->D[b] = Db;
	t->cost += dc;
	return true;
}

static void local_search(const struct sym_part_problem *p, int *a, double seconds, int max_passes)
{
	int m = p->nmodels, l = p->nparts;
	struct ls t = { p, a, calloc((size_t)l, sizeof(double)), calloc((size_t)l, sizeof(double)),
			calloc((size_t)l, sizeof(double)), 0, 0, 0, 0 };
	if (!t.R || !t.S || !t.D)
		goto out;
	averages(p, &t.rbar, &t.sbar, &t.w);
	for (int i = 0; i < m; i++) {
		t.R[a[i]] += p->models[i].rate;
		t.S[a[i]] += p->models[i].static_mb;
		t.D[a[i]] = fmax(t.D[a[i]], p->models[i].dynamic_mb);
	}
	t.cost = change_cost(p, a);
	double end = now_s() + seconds, cur = ls_obj(&t);
	for (bool better = true; better && now_s() < end && max_passes-- > 0;) {
		better = false;
		for (int i = 0; i < m && now_s() < end; i++) {
			for (int b = 0; b < l; b++)
				if (b != a[i] && ls_try(&t, i, b, -1, cur)) {
					cur = ls_obj(&t);
					better = true;
				}
			for (int k = i + 1; k < m; k++)
				if (a[k] != a[i] && ls_try(&t, i, a[k], k, cur)) {
					cur = ls_obj(&t);
					better = true;
				}
		}
	}
out:
	free(t.R);
	free(t.S);
	free(t.D);
}

/* What a CBC run left: its status, bound and best solution (nx values). */
struct cbc_out {
	bool finished;   /* CBC returned (else it was stopped at the deadline) */
	bool infeasible, optimal;
	double bound;
	double *x;       /* nx values, or NULL: no integer solution */
};

/* Writes all of buf, or fails. */
static bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return false;
		p += w, n -= (size_t)w;
	}
	return true;
}

/* Runs CBC on model within the time left until `deadline` (now_s()), in a
 * child process that is killed at the deadline: CBC checks its own limit
 * only between nodes and its root processing of a large instance (800 x 20
 * takes several seconds) overshoots any limit, while the caller's limit is a
 * promise. The child sends its status, bound and solution through a pipe. */
static int cbc_bounded(Cbc_Model *model, int nx, double deadline, struct cbc_out *o)
{
	memset(o, 0, sizeof(*o));
	o->x = malloc((size_t)nx * sizeof(double));
	int fd[2];
	if (!o->x || pipe(fd))
		return -ENOMEM;
	double left = deadline - now_s();
	/* CBC's own limit ends its search with its best found; the kill only catches the overshoot */
	Cbc_setMaximumSeconds(model, fmax(left * 2 / 3, 0.05));
	Cbc_setParameter(model, "threads", "1");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]), close(fd[1]);
		return -errno;
	}
	if (pid == 0) {
		close(fd[0]);
		Cbc_solve(model);
		const double *x = Cbc_bestSolution(model);
		double head[4] = { Cbc_isProvenInfeasible(model), Cbc_isProvenOptimal(model),
				   Cbc_getBestPossibleObjValue(model), x != NULL };
		bool ok = write_all(fd[1], head, sizeof(head)) && (!x || write_all(fd[1], x, (size_t)nx * sizeof(double)));
		_exit(ok ? 0 : 1);
	}
	close(fd[1]);
	size_t want = 4 * sizeof(double) + (size_t)nx * sizeof(double), got = 0;
	char *buf = malloc(want);
	while (buf && got < want) {
		int ms = (int)ceil((deadline - now_s()) * 1000);
		struct pollfd pfd = { fd[0], POLLIN, 0 };
		if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
			break; /* the deadline */
		ssize_t n = read(fd[0], buf + got, want - got);
		if (n <= 0)
			break; /* the child is done (or failed) */
		got += (size_t)n;
	}
	close(fd[0]);
	kill(pid, SIGKILL); /* harmless when it has exited */
	waitpid(pid, NULL, 0);
	bool has_x = false;
	if (buf && got >= 4 * sizeof(double)) {
		double head[4];
		memcpy(head, buf, sizeof(head));
		has_x = head[3] != 0;
		/* finished: the whole message came (a solution cut short by the deadline is not used) */
		o->finished = has_x ? got == want : true;
		o->infeasible = o->finished && head[0] != 0;
		o->optimal = o->finished && head[1] != 0;
		o->bound = o->finished ? head[2] : 0;
		if (o->finished && has_x)
			memcpy(o->x, buf + sizeof(head), (size_t)nx * sizeof(double));
	}
	if (!o->finished || !has_x) {
		free(o->x);
		o->x = NULL;
	}
	free(buf);
	return 0;
}

/* Whether the totals alone rule every assignment out: the parts' rates add
 * up to the total, so it must be at most l * R_max; a part's static memory
 * is at most S_max minus its largest dynamic memory, which is at least the
 * smallest d_i, so the total static memory must be at most l * (S_max -
 * min d_i). (Identical models make the MILP symmetric: CBC may not prove
 * such cases infeasible within any reasonable time.) */
static bool totals_infeasible(const struct sym_part_problem *p)
{
	double rsum = 0, ssum = 0, dmin = HUGE_VAL;
	for (int i = 0; i < p->nmodels; i++) {
		rsum += p->models[i].rate;
		ssum += p->models[i].static_mb;
		if (p->models[i].dynamic_mb < dmin)
			dmin = p->models[i].dynamic_mb;
	}
	if (p->r_max > 0 && rsum > p->nparts * p->r_max * (1 + 1e-12))
		return true;
	return p->s_max > 0 && p->nmodels > 0 && ssum > p->nparts * (p->s_max - dmin) * (1 + 1e-12) + 1e-9;
}

int sym_partition_milp(const struct sym_part_problem *p, struct sym_part_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->status = SYM_PART_UNKNOWN;
	int rc = check(p, err, errlen);
	if (rc)
		return rc;
	double t0 = now_s();
	if (totals_infeasible(p)) {
		r->status = SYM_PART_INFEASIBLE;
		double rb, sb;
		averages(p, &rb, &sb, &r->w); /* the weight, for the record */
		r->seconds = now_s() - t0;
		return 0;
	}
	int m = p->nmodels, l = p->nparts;
	double rbar, sbar, w;
	averages(p, &rbar, &sbar, &w);
	bool mem = p->s_max > 0;
	bool change = p->c_max >= 0;
	int nx = m * l, cdr = nx, cds = nx + 1, cd0 = nx + 2; /* columns: x_ij, dR, dS, D_j */
	int ncols = nx + 2 + (mem ? l : 0);
	int *idx = malloc((size_t)(m > l ? m : l) * sizeof(int) + (size_t)ncols * sizeof(int));
	double *val = malloc(((size_t)(m > l ? m : l) + 2 + (size_t)ncols) * sizeof(double));
	Cbc_Model *model = Cbc_newModel();
	if (!idx || !val || !model) {
		free(idx);
		free(val);
		if (model)
			Cbc_deleteModel(model);
		return snprintf(err, errlen, "partition: out of memory"), -ENOMEM;
	}
	Cbc_setLogLevel(model, 0);
	char name[32] = "";
	for (int i = 0; i < m; i++)
		for (int j = 0; j < l; j++)
			Cbc_addCol(model, name, 0, 1, 0, 1, 0, NULL, NULL);
	Cbc_addCol(model, name, 0, DBL_MAX, 1, 0, 0, NULL, NULL); /* dR */
	Cbc_addCol(model, name, 0, DBL_MAX, w, 0, 0, NULL, NULL); /* dS */
	for (int j = 0; mem && j < l; j++)
		Cbc_addCol(model, name, 0, DBL_MAX, 0, 0, 0, NULL, NULL); /* D_j */
	/* (9): each model in one part */
	for (int i = 0; i < m; i++) {
		for (int j = 0; j < l; j++)
			idx[j] = i * l + j, val[j] = 1;
		Cbc_addRow(model, name, l, idx, val, 'E', 1);
	}
	for (int j = 0; j < l; j++) {
		/* (5) and (7): the part's rate */
		for (int i = 0; i < m; i++)
			idx[i] = i * l + j, val[i] = p->models[i].rate;
		if (p->r_max > 0)
			Cbc_addRow(model, name, m, idx, val, 'L', p->r_max);
		idx[m] = cdr, val[m] = -1;
		Cbc_addRow(model, name, m + 1, idx, val, 'L', rbar);
		idx[m] = cdr, val[m] = 1;
		Cbc_addRow(model, name, m + 1, idx, val, 'G', rbar);
		/* (6) and (8): its static memory (and, with S_max, its largest dynamic memory) */
		for (int i = 0; i < m; i++)
			idx[i] = i * l + j, val[i] = p->models[i].static_mb;
		if (mem) {
			idx[m] = cd0 + j, val[m] = 1;
			Cbc_addRow(model, name, m + 1, idx, val, 'L', p->s_max);
			for (int i = 0; i < m; i++)
				if (p->models[i].dynamic_mb > 0) {
					int c2[2] = { i * l + j, cd0 + j };
					double v2[2] = { p->models[i].dynamic_mb, -1 };
					Cbc_addRow(model, name, 2, c2, v2, 'L', 0);
				}
		}
		idx[m] = cds, val[m] = -1;
		Cbc_addRow(model, name, m + 1, idx, val, 'L', sbar);
		idx[m] = cds, val[m] = 1;
		Cbc_addRow(model, name, m + 1, idx, val, 'G', sbar);
	}
	/* (11): |x_ij - x'_ij| is x_ij where x' is 0 and 1 - x_ij where it is 1 */
	if (change) {
		int *cidx = malloc((size_t)nx * sizeof(int));
		double *cval = malloc((size_t)nx * sizeof(double));
		if (cidx && cval) {
			double fixed = 0;
			for (int i = 0; i < m; i++) {
				const struct sym_part_model *md = &p->models[i];
				if (md->current >= 0)
					fixed += md->move_cost;
				for (int j = 0; j < l; j++)
					cidx[i * l + j] = i * l + j, cval[i * l + j] = j == md->current ? -md->move_cost : md->move_cost;
			}
			Cbc_addRow(model, name, nx, cidx, cval, 'L', p->c_max - fixed);
		}
		free(cidx);
		free(cval);
		if (!cidx || !cval) {
			Cbc_deleteModel(model);
			free(idx);
			free(val);
			return snprintf(err, errlen, "partition: out of memory"), -ENOMEM;
		}
	}
	/* a start: the current assignment, or the greedy one, improved by a local search (a fifth of
	 * the time) */
	double limit = p->time_limit_s > 0 ? p->time_limit_s : 10;
	int *start = greedy(p);
	if (!start)
		start = first_fit(p);
	if (start)
		local_search(p, start, limit / 5, INT_MAX);
	if (start) {
		int *sidx = malloc((size_t)nx * sizeof(int));
		double *sval = malloc((size_t)nx * sizeof(double));
		if (sidx && sval) {
			for (int i = 0; i < m; i++)
				for (int j = 0; j < l; j++)
					sidx[i * l + j] = i * l + j, sval[i * l + j] = start[i] == j;
			Cbc_setMIPStartI(model, nx, sidx, sval);
		}
		free(sidx);
		free(sval);
	}
	struct cbc_out co;
	rc = cbc_bounded(model, nx, t0 + limit, &co);
	r->seconds = now_s() - t0;
	const double *x = co.x; /* the best integer solution, or NULL */
	int *assign = malloc((size_t)m * sizeof(int));
	if (rc || !assign) {
		rc = rc && rc != -ENOMEM ? rc : -ENOMEM;
		snprintf(err, errlen, "partition: cannot run the solver: %s", strerror(-rc));
	} else if (co.infeasible) {
		r->status = SYM_PART_INFEASIBLE;
	} else if (x || start) {
		for (int i = 0; i < m; i++) {
			int best = 0;
			for (int j = 1; x && j < l; j++)
				if (x[i * l + j] > x[i * l + best])
					best = j;
			assign[i] = x ? best : start[i];
		}
		struct sym_part_result sc = { 0 }, st = { 0 };
		bool ok = sym_partition_score(p, assign, &sc) == 1;
		if (start && sym_partition_score(p, start, &st) == 1 && (!ok || st.objective < sc.objective - 1e-9)) {
			/* the solver did not improve on its start (or rounded badly): the start stands */
			sym_part_result_free(&sc);
			sc = st;
			st.assign = NULL;
			ok = true;
			x = NULL; /* not the solver's: not proven optimal */
		}
		sym_part_result_free(&st);
		if (ok) {
			*r = sc;
			r->seconds = now_s() - t0;
			r->status = co.optimal && x ? SYM_PART_OPTIMAL : SYM_PART_FEASIBLE;
		} else {
			sym_part_result_free(&sc);
		}
	}
	r->bound = co.bound;
	r->solver_stopped = !co.finished;
	if (!isfinite(r->bound) || r->bound < 0)
		r->bound = 0;
	free(co.x);
	free(assign);
	free(start);
	free(idx);
	free(val);
	Cbc_deleteModel(model);
	return rc;
}

int sym_partition_local(const struct sym_part_problem *p, int max_passes, struct sym_part_result *r, char *err,
			size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->status = SYM_PART_UNKNOWN;
	int rc = check(p, err, errlen);
	if (rc)
		return rc;
	double t0 = now_s();
	int *a = greedy(p); /* the current assignment when complete and feasible */
	if (!a)
		a = first_fit(p);
	if (!a) {
		r->seconds = now_s() - t0;
		return 0; /* UNKNOWN: the greedy assignment found no room */
	}
	local_search(p, a, INFINITY, max_passes);
	if (sym_partition_score(p, a, r) == 1)
		r->status = SYM_PART_FEASIBLE;
	else
		r->status = SYM_PART_UNKNOWN;
	r->seconds = now_s() - t0;
	free(a);
	return 0;
}

/* xoshiro256** (Blackman and Vigna), seeded by splitmix64. */
struct rng {
	uint64_t s[4];
};

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *g)
{
	uint64_t *s = g->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
	return res;
}

static void rng_seed(struct rng *g, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		g->s[i] = z ^ (z >> 31);
	}
}

int sym_partition_random(const struct sym_part_problem *p, struct sym_part_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->status = SYM_PART_UNKNOWN;
	int rc = check(p, err, errlen);
	if (rc)
		return rc;
	int m = p->nmodels, l = p->nparts;
	int *a = malloc((size_t)m * sizeof(int)), *best = malloc((size_t)m * sizeof(int));
	double *scratch = malloc(3 * (size_t)l * sizeof(double));
	if (!a || !best || !scratch) {
		free(a);
		free(best);
		free(scratch);
		return snprintf(err, errlen, "partition: out of memory"), -ENOMEM;
	}
	struct rng g;
	rng_seed(&g, p->seed);
	double t0 = now_s(), limit = p->time_limit_s > 0 ? p->time_limit_s : 10, best_obj = INFINITY;
	bool found = false;
	for (uint64_t n = 0;; n++) {
		if ((n & 255) == 0 && now_s() - t0 >= limit)
			break;
		for (int i = 0; i < m; i++)
			a[i] = (int)(rng_next(&g) % (uint64_t)l);
		struct sym_part_result s;
		r->tries++;
		if (!score_into(p, a, scratch, &s))
			continue;
		r->feasible++;
		if (s.objective < best_obj) {
			best_obj = s.objective;
			memcpy(best, a, (size_t)m * sizeof(int));
			found = true;
		}
	}
	uint64_t tries = r->tries, feasible = r->feasible;
	if (found) {
		sym_partition_score(p, best, r);
		r->status = SYM_PART_FEASIBLE;
	}
	r->tries = tries;
	r->feasible = feasible;
	r->seconds = now_s() - t0;
	free(a);
	free(best);
	free(scratch);
	return 0;
}
