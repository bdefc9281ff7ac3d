#include "control/scale.h"

#include <math.h>
#include <string.h>

const char *sym_scale_rule_name(enum sym_scale_rule r)
{
	return r == SYM_SCALE_TARGET ? "target" : "papers";
}

int sym_scale_rule_parse(const char *name, enum sym_scale_rule *r)
{
	if (!strcmp(name, "papers"))
		*r = SYM_SCALE_PAPERS;
	else if (!strcmp(name, "target"))
		*r = SYM_SCALE_TARGET;
	else
		return -1;
	return 0;
}

/* A part's wish before the cluster's bounds: > 0 add, < 0 release. */
static int part_wish(const struct sym_scale_cfg *c, const struct sym_scale_part *p)
{
	if (c->rule == SYM_SCALE_PAPERS) {
		if (p->advice.add)
			return p->advice.add > p->pending ? p->advice.add - p->pending : 0;
		int release = p->advice.release;
		if (c->release_fraction < 1) {
			int r = (int)floor(p->serving * p->advice.idle_fraction * c->release_fraction);
			release = r < release ? r : release;
		}
		return -release;
	}
	/* Kubernetes' HPA: desired = ceil(current * metric / target), within 10% no change */
	double ratio = p->busy_fraction / c->target;
	if (ratio > 1.1) {
		int d = (int)ceil(p->serving * ratio - 1e-9) - p->serving - p->pending;
		return d > 0 ? d : 0;
	}
	if (ratio < 0.9) {
		int d = (int)ceil(p->serving * ratio - 1e-9) - p->serving;
		return d < 0 ? d : 0;
	}
	return 0;
}

int sym_scale_decide(const struct sym_scale_cfg *c, struct sym_scale_state *st, struct sym_scale_part *p, int n,
		     double now_s)
{
	int serving = 0, pending = 0, changed = 0;
	bool adds = false;
	for (int j = 0; j < n; j++) {
		serving += p[j].serving;
		pending += p[j].pending;
		p[j].delta = part_wish(c, &p[j]);
		adds |= p[j].delta > 0;
	}
	bool cool = st->acted && now_s - st->last_s < c->cooldown_s - 1e-9; /* (to the ns: drivers count in ns) */
	int room = c->max_gpus - serving - pending; /* adds left */
	int spare = serving - c->min_gpus;         /* releases left */
	for (int j = 0; j < n; j++) {
		if (cool)
			p[j].delta = 0;
		else if (p[j].delta > 0) {
			p[j].delta = p[j].delta < room ? p[j].delta : (room > 0 ? room : 0);
			room -= p[j].delta;
		} else if (p[j].delta < 0) {
			/* nothing leaves while a GPU comes up or a part grows; a part keeps one */
			int r = adds || pending ? 0 : -p[j].delta;
			r = r < p[j].serving - 1 ? r : p[j].serving - 1;
			r = r < spare ? r : spare;
			p[j].delta = r > 0 ? -r : 0;
			spare -= r > 0 ? r : 0;
		}
		changed += p[j].delta != 0;
	}
	if (changed) {
		st->acted = true;
		st->last_s = now_s;
	}
	return changed;
}

void sym_scale_count(const struct sym_scale_gpu *g, int ngpus, struct sym_scale_part *p, int n)
{
	for (int j = 0; j < n; j++)
		p[j].serving = p[j].pending = 0;
	for (int i = 0; i < ngpus; i++) {
		if (g[i].part < 0 || g[i].part >= n)
			continue;
		p[g[i].part].serving += g[i].state == SYM_SCALE_SERVING || g[i].state == SYM_SCALE_MOVING;
		p[g[i].part].pending += g[i].state == SYM_SCALE_COMING;
	}
}

int sym_scale_pick(const struct sym_scale_gpu *g, int ngpus, int j)
{
	int any = -1;
	for (int i = 0; i < ngpus; i++)
		if (g[i].state == SYM_SCALE_OFF) {
			if (g[i].part == j)
				return i;
			if (any < 0)
				any = i;
		}
	return any;
}

int sym_scale_step(const struct sym_scale_cfg *c, struct sym_scale_state *st, struct sym_scale_part *p, int n,
		   struct sym_scale_gpu *g, int ngpus, double now_s, struct sym_scale_action *out, int cap,
		   double *wake_s)
{
	*wake_s = now_s + c->interval_s;
	sym_scale_count(g, ngpus, p, n);
	int k = 0;
	if (!sym_scale_decide(c, st, p, n, now_s))
		return 0;
	for (int j = 0; j < n; j++) {
		int i, left = p[j].delta;
		while (left > 0 && k < cap && (i = sym_scale_pick(g, ngpus, j)) >= 0) {
			g[i] = (struct sym_scale_gpu){ SYM_SCALE_COMING, j };
			out[k++] = (struct sym_scale_action){ i, j, +1 };
			left--;
		}
		for (i = ngpus - 1; i >= 0 && left < 0 && k < cap; i--)
			if (g[i].state == SYM_SCALE_SERVING && g[i].part == j) {
				g[i].state = SYM_SCALE_LEAVING;
				out[k++] = (struct sym_scale_action){ i, j, -1 };
				left++;
			}
	}
	return k;
}
