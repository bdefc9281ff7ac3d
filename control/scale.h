/* control/scale.h - how many GPUs each part of a cluster gains or gives
 * back: the one autoscaling decision of the simulator (sim/engine.c) and the
 * runtime's controller (runtime/autoscaler.c), issue 31.
 *
 * A part is a sub-cluster (the whole cluster without a partition). For each
 * part the caller measures one interval and passes its advice (core/
 * autoscale.h: the rule of the deferred batch scheduling paper, Section
 * 3.5, from the bad rate and the idle fraction), its busy
 * fraction, the GPUs serving in it and those added but not serving yet. The
 * decision, per part:
 *   - papers: add the advice less what is already coming up in the part;
 *     release the advice (or floor(N f * release_fraction) when that
 *     fraction is below 1, never more than the advice);
 *   - target (Kubernetes' HPA): desired = ceil(N * busy / target), no change
 *     while busy / target is within 10% of 1; an increase counts the GPUs
 *     coming up;
 * then, over the whole cluster: nothing is released while a GPU comes up or
 * another part adds; adds stop at max_gpus (serving + coming up), releases at
 * min_gpus serving, and a part keeps at least one GPU; no action within
 * cooldown_s of the last one.
 *
 * Which GPU joins a part is sym_scale_pick's (below), in both drivers; the
 * highest serving ids of a part leave. sym_scale_step is the whole step both
 * drivers take: the GPUs' states in, the actions (which GPU joins or leaves
 * which part) and the next decision's time out; a driver only measures and
 * executes.
 *
 * Pure: no clock (now_s is the caller's), no I/O, no allocation.
 */
#ifndef SYM_CONTROL_SCALE_H
#define SYM_CONTROL_SCALE_H

#include <stdbool.h>

#include "core/autoscale.h"

enum sym_scale_rule { SYM_SCALE_PAPERS, SYM_SCALE_TARGET };

/* "papers" or "target". */
const char *sym_scale_rule_name(enum sym_scale_rule r);
/* 0 and *r for "papers" or "target", else -1. */
int sym_scale_rule_parse(const char *name, enum sym_scale_rule *r);

struct sym_scale_cfg {
	enum sym_scale_rule rule;
	double interval_s;       /* between decisions (sym_scale_step's next wake-up) */
	double target;           /* target: the busy fraction aimed at, in (0, 1] */
	double release_fraction; /* papers: in (0, 1]; 1 releases the advice as published */
	int min_gpus, max_gpus;  /* serving, over the cluster; 1 <= min <= max */
	double cooldown_s;       /* no action sooner than this after the last */
};

/* One part's interval. */
struct sym_scale_part {
	int serving;                 /* GPUs serving (not leaving) */
	int pending;                 /* GPUs added, not serving yet */
	double busy_fraction;        /* busy GPU-time over serving GPU-time, in [0, 1] */
	struct sym_autoscale advice; /* core/autoscale.h, for this part's interval */
	int delta;                   /* out: GPUs the decision adds (> 0) or releases (< 0) */
};

struct sym_scale_state {
	bool acted;
	double last_s; /* the time of the last action */
};

/* Sets p[j].delta (GPUs to add, > 0, or to release, < 0) for the n parts at
 * now_s and returns how many parts change; st records an action. */
int sym_scale_decide(const struct sym_scale_cfg *c, struct sym_scale_state *st, struct sym_scale_part *p, int n,
		     double now_s);


/* A GPU id as a step sees it. */
enum sym_scale_gpu_state {
	SYM_SCALE_OFF,     /* not paid for: free to join a part */
	SYM_SCALE_COMING,  /* added, not serving yet */
	SYM_SCALE_SERVING,
	SYM_SCALE_MOVING,  /* serving, moving to another part at an epoch: counts there, never released */
	SYM_SCALE_LEAVING, /* released, running out its work: counts nowhere */
};

struct sym_scale_gpu {
	enum sym_scale_gpu_state state;
	int part; /* serving: its part; moving: the part it moves to; coming: the part it was added for;
		   * off: the part it had last (-1: none) */
};

struct sym_scale_action {
	int gpu, part;
	int delta; /* +1: the GPU joins the part (provision it), -1: it leaves (drain, then release) */
};

/* The GPU that joins part j next, of ngpus: the lowest off id whose part
 * (the part it had last; -1: none yet) is j, else the lowest off id of any
 * part. -1 when none is off. (A released GPU comes back to its own part
 * first: in the runtime a backend started without its sub-cluster named
 * joins its id's.) */
int sym_scale_pick(const struct sym_scale_gpu *g, int ngpus, int j);

/* Counts each part's GPUs serving (serving, moving) and coming up into
 * p[0..n-1].serving and .pending (the rest of p untouched). */
void sym_scale_count(const struct sym_scale_gpu *g, int ngpus, struct sym_scale_part *p, int n);

/* One decision at now_s: counts the parts (sym_scale_count), decides
 * (sym_scale_decide, from each part's busy_fraction and advice, which the
 * caller has filled), picks the GPUs (sym_scale_pick's join; the highest
 * serving ids of a part leave) and writes at most cap actions to out, parts
 * in order, adds before releases. g is updated as if they were carried out
 * (joining: coming, leaving: leaving); *wake_s is the next decision's time
 * (now_s + interval_s). Returns the number of actions. */
int sym_scale_step(const struct sym_scale_cfg *c, struct sym_scale_state *st, struct sym_scale_part *p, int n,
		   struct sym_scale_gpu *g, int ngpus, double now_s, struct sym_scale_action *out, int cap,
		   double *wake_s);

#endif
