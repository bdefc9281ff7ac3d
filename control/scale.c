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

int sym_scale_decide(const struct sym_scale_cfg *c, struct sym_scale_state *st, const struct sym_scale_part *p,
		     int n, double now_s, int *delta)
{
	int serving = 0, pending = 0, changed = 0;
	bool adds = false;
	for (int j = 0; j < n; j++) {
		serving += p[j].serving;
		pending += p[j].pending;
		delta[j] = part_wish(c, &p[j]);
		adds |= delta[j] > 0;
	}
	bool cool = st->acted && now_s - st->last_s < c->cooldown_s - 1e-9; /* (to the ns: drivers count in ns) */
	int room = c->max_gpus - serving - pending; /* adds left */
	int spare = serving - c->min_gpus;         /* releases left */
	for (int j = 0; j < n; j++) {
		if (cool)
			delta[j] = 0;
		else if (delta[j] > 0) {
			delta[j] = delta[j] < room ? delta[j] : (room > 0 ? room : 0);
			room -= delta[j];
		} else if (delta[j] < 0) {
			/* nothing leaves while a GPU comes up or a part grows; a part keeps one */
			int r = adds || pending ? 0 : -delta[j];
			r = r < p[j].serving - 1 ? r : p[j].serving - 1;
			r = r < spare ? r : spare;
			delta[j] = r > 0 ? -r : 0;
			spare -= r > 0 ? r : 0;
		}
		changed += delta[j] != 0;
	}
	if (changed) {
		st->acted = true;
		st->last_s = now_s;
	}
	return changed;
}

int sym_scale_pick(const bool *free, const int *part, int n, int j)
{
	int any = -1;
	for (int g = 0; g < n; g++)
		if (free[g]) {
			if (part[g] == j)
				return g;
			if (any < 0)
				any = g;
		}
	return any;
}
