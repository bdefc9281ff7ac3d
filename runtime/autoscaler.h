/* runtime/autoscaler.h - `symphony autoscale`: a small controller that lets
 * a cluster follow its load on schedd's advice.
 *
 * Every interval it reads schedd's /metrics (runtime/schedd.c): the advice
 * per sub-cluster (symphony_subcluster_autoscale_add_gpus and _release_gpus,
 * from the bad rate and the idle fraction of the GPUs that serve: the
 * papers' rule, core/autoscale.h) and, per backend id the cluster takes,
 * whether its GPU serves and in which sub-cluster (symphony_backend_serving).
 * It then runs the operator's commands: --add-cmd for each backend to start
 * (control/scale.h's sym_scale_pick: the lowest free ids of the sub-cluster
 * that asks, then the lowest free ids of any other, as in the simulator),
 * --remove-cmd for each to stop (the highest serving ids), with
 * SYMPHONY_BACKEND_ID and SYMPHONY_SUBCLUSTER in their environment (the add
 * command passes `--subcluster $SYMPHONY_SUBCLUSTER` to the backend, which
 * then joins that sub-cluster whatever its id's was). How many: control/scale.h, the
 * decision the simulator makes too (the papers' rule or --rule target, the
 * HPA's; --cooldown, --min, --max, one per sub-cluster, nothing released
 * while a backend comes up); a backend it started counts as coming up until
 * it serves (or --start-timeout passes). Every action is logged. A remove command should stop the backend gracefully
 * (SIGTERM: it says bye, finishes its batches and leaves), so that no request
 * is lost.
 *
 * The parsing of the metrics and the decision are pure functions, tested
 * apart (tests/test_autoscaler.c); sym_ctl_run adds the HTTP client
 * (libcurl), the commands and the clock.
 */
#ifndef SYM_AUTOSCALER_H
#define SYM_AUTOSCALER_H

#include <stdbool.h>
#include <stddef.h>

#include "control/scale.h"

#define SYM_CTL_MAX_BACKENDS 4096
#define SYM_CTL_MAX_PARTS 64

/* What one scrape of schedd says. */
struct sym_ctl_metrics {
	int nparts;                              /* sub-clusters seen (1 without a partition) */
	double add[SYM_CTL_MAX_PARTS];           /* GPUs to add */
	double release[SYM_CTL_MAX_PARTS];       /* GPUs that can be released */
	double bad_rate[SYM_CTL_MAX_PARTS];
	double idle_fraction[SYM_CTL_MAX_PARTS];
	int nbackends;                           /* ids 0..nbackends-1 the cluster takes */
	signed char serving[SYM_CTL_MAX_BACKENDS]; /* 1 serving, 0 not, -1 not listed */
	short part[SYM_CTL_MAX_BACKENDS];        /* each id's sub-cluster */
	double next_advice_s;                    /* until schedd's next advice (< 0: not said) */
	double interval_s;                       /* schedd's advice interval (< 0: not said) */
};

/* Reads the samples it needs from a Prometheus text exposition. 0, or
 * -EPROTO with a message (a sample malformed, a sub-cluster or id out of
 * range, no symphony_backend_serving sample at all: not schedd's metrics). */
int sym_ctl_parse(const char *text, size_t len, struct sym_ctl_metrics *m, char *err, size_t errlen);

struct sym_ctl_cfg {
	struct sym_scale_cfg scale; /* the decision (control/scale.h): interval, rule, target, release
				     * fraction, min and max backends, cooldown */
	double start_timeout_s;     /* a backend started that does not serve by then is no longer awaited */
};

struct sym_ctl_state {
	struct sym_scale_state scale;
	double pending_since[SYM_CTL_MAX_BACKENDS]; /* started at, < 0: not coming up */
	short pending_part[SYM_CTL_MAX_BACKENDS];   /* the sub-cluster it was started for */
	bool removing[SYM_CTL_MAX_BACKENDS];        /* asked to stop, still serving */
	struct sym_scale_gpu gpus[SYM_CTL_MAX_BACKENDS]; /* (sym_ctl_decide's scratch: the ids as the step
							  * sees them) */
	int expired;                                /* starts given up by the last decision */
	double wake_s;                              /* the next decision's time (the step's) */
	double grid0, grid_len;                     /* sym_ctl_advice_at's grid (grid_len 0: none yet) */
};

void sym_ctl_state_init(struct sym_ctl_state *st);

/* When the advice in m was given: the moment its interval closed, by schedd's
 * symphony_autoscale_interval_seconds and _next_advice_seconds, on the grid
 * of the first such moment (st keeps it) (now_s without them; at least 0, the
 * controller's start). The controller decides at that moment, as the
 * simulator decides at each interval's end, so that its cooldown counts whole
 * intervals however late each read comes. */
double sym_ctl_advice_at(struct sym_ctl_state *st, const struct sym_ctl_metrics *m, double now_s);

/* The next read: wake_s, or SYM_CTL_ADVICE_SLACK_S after schedd's next
 * advice when that is sooner (its heartbeat, or the read itself, closes the
 * interval), so that an action follows its advice by tens of ms, not by up
 * to --interval. */
#define SYM_CTL_ADVICE_SLACK_S 0.02
double sym_ctl_next_read(const struct sym_ctl_metrics *m, double now_s, double wake_s);

/* The actions at now_s (at most cap) for the scrape m: control/scale.h's
 * step (gpu: the backend id; part: its sub-cluster; delta +1: start it, -1:
 * stop it); st is updated as if they were carried out, st->wake_s is the
 * next decision's time. Pure: no clock, no I/O. */
int sym_ctl_decide(const struct sym_ctl_cfg *c, struct sym_ctl_state *st, const struct sym_ctl_metrics *m,
		   double now_s, struct sym_scale_action *out, int cap);

struct sym_ctl_opts {
	const char *url;        /* schedd's /metrics */
	const char *cacert;     /* PEM to check an HTTPS schedd with, or NULL */
	const char *add_cmd, *remove_cmd;
	double duration_s;      /* > 0: stop after this long (else at SIGTERM or SIGINT) */
	double cmd_timeout_s;   /* a command still running then is killed */
	struct sym_ctl_cfg cfg;
	bool quiet;
};

/* Runs the controller until SIGTERM/SIGINT or duration_s. 0, or 1 (it could
 * not start: the message is logged). */
int sym_ctl_run(const struct sym_ctl_opts *o);

#endif
