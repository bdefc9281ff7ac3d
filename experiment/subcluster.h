/* experiment/subcluster.h - a run's sub-clusters (symphony-centralized-orchestration.md,
 * Section 4.7 and Appendix A): the models split into parts by the
 * partitioning MILP (partition/partition.h), each part served by GPUs of its
 * own, which hold every model of the part, and by its own ranker (the
 * simulator runs one scheduling core per part).
 *
 * GPUs are divided by the GPU time each part's models need: with n GPUs,
 * model i at rate r_i keeps r_i * l(b) / b of them busy, b its staggered
 * batch for n GPUs (core/capacity.h: batches shrink when fewer GPUs take
 * turns). Every part gets one GPU, then each further GPU goes to the part
 * whose GPUs would be the busiest (water-filling), kind by kind.
 *
 * The policies whose core cannot take GPUs out of service (preemption:
 * shepherd) and nexus (which packs models onto GPUs itself) are refused
 * with sub-clusters.
 */
#ifndef SYM_SUBCLUSTER_H
#define SYM_SUBCLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "control/moves.h"
#include "experiment/config.h"
#include "partition/partition.h"

struct sym_subclusters {
	int n;           /* parts (1 when the experiment has no partition) */
	int *model_part; /* nmodels entries */
	int *gpu_part;   /* gpus entries */
	double *need;    /* n entries: the GPU time the part's models need (GPUs, on kind 0) */
};

/* Solves e's partition when it has sub-clusters but no assignment, and
 * stores the assignment in e (so that every later run, and the echoed
 * configuration, use it). quiet: no note on standard error about the
 * solving. Returns 0, or -EINVAL (no assignment meets the limits: the
 * message names them) or -ENOMEM. */
int sym_subclusters_solve(struct sym_experiment *e, double rate, char *err, size_t errlen);

/* The sub-clusters of a run of e at total rate `rate` (e's assignment: see
 * sym_subclusters_solve; without one, the MILP is solved here, each time).
 * GPUs 0..pool-1 are those serving at the start (the simulator's
 * autoscale.start_gpus, the runtime's `backends`; pool >= e->gpus: all):
 * they are split among the parts; each GPU from pool on gets the part a
 * split of all e->gpus would give it, the first ones keeping theirs (the
 * part an autoscaler adds it to first: control/scale.h, sym_scale_pick).
 * Returns 0 or an error with a message. */
int sym_subclusters_build(const struct sym_experiment *e, double rate, int pool, struct sym_subclusters *sc,
			  char *err, size_t errlen);
void sym_subclusters_finish(struct sym_subclusters *sc);

/* The partition problem of an epoch (Section 4.7: re-partitioned from the
 * rates measured in the last epoch, under the disruption bound): model i at
 * rates[i] with its static and dynamic memory (the largest over the kinds),
 * its move cost (its file size, else its static memory) and its part
 * current[i]; e's L, R_max, w and C_max, S_max e's or else the smallest
 * memory of the kinds (memory_check), and 1 s for the search (the simulator
 * and schedd run sym_partition_local on it). pm: nmodels entries, filled;
 * p points to it. */
void sym_subclusters_epoch_problem(const struct sym_experiment *e, const double *rates, const int *current,
				   struct sym_part_model *pm, struct sym_part_problem *p);

/* An epoch's step, one for both drivers (Section 4.7): what the simulator's
 * on_epoch and schedd's epoch timer execute. */
struct sym_epoch_step {
	/* in */
	const double *rates;    /* per model: requests/s measured over the epoch */
	double secs;            /* the epoch's length, over which they were counted */
	const int *model_part;  /* per model: its part now */
	const int *gpu_part;    /* per GPU: its part now */
	const bool *in_service; /* per GPU, or NULL (every GPU): the GPUs split; the others keep their part */
	const bool *fixed;      /* per model, or NULL: a model that stays and holds no memory (unloaded) */
	bool busy;              /* the last epoch's moves are still under way */
	/* out, in the caller's arrays */
	int *assign;            /* per model: its part after the epoch */
	int *gpu_new;           /* per GPU: its part after the epoch (it moves once the models have) */
	enum sym_move *move;    /* per model: how it moves (control/moves.h), NONE when it stays */
	double *held_mb;        /* per part: the static memory its GPUs hold, the models moving in added
				 * (sym_moves_plan's; those moving out count until they switch) */
	int models_moving, gpus_moving;
	double rate_imbalance, mem_imbalance; /* of the new assignment */
};

/* The step: nothing while the last epoch's moves are under way or no request
 * was measured (at zero rates every split is as good, and the search's
 * tie-break would crowd one part). Else, from the current assignment, the
 * local search (sym_partition_local, at most SYM_EPOCH_SEARCH_STEPS steps) at
 * the measured rates under the partition's limits, then the GPU split for the
 * new assignment at those rates, each GPU staying in its part where the
 * counts allow (with in_service only the GPUs it marks are split, a pool of
 * that many). A new assignment whose gain (the objective's drop) is below
 * partition.noise_sigmas standard deviations of the rates' counting noise,
 * sqrt(sum of rates / secs), is not taken (a gain the noise can make moves
 * models back and forth from one epoch to the next, each move costing loads
 * and, when memory is tight, stalls); nor, when the models stay, is a GPU
 * split whose busiest part is less busy than the current split's by no more
 * than that many standard deviations of its count's noise (relative 1 /
 * sqrt(its rate * secs)): on equal loads the odd GPU would change parts
 * every epoch (control/epoch.h). Last, each moving model's kind of move by
 * memory (control/moves.h). Returns 0 with the outputs filled (perhaps
 * nothing moving); 1 when nothing is to change, err saying why (moves under
 * way, no requests, no assignment meets the limits, fewer GPUs than parts);
 * -ENOMEM. */
#define SYM_EPOCH_SEARCH_STEPS 100
int sym_subclusters_epoch(const struct sym_experiment *e, struct sym_epoch_step *x, char *err, size_t errlen);

/* The GPU split alone: e->gpus GPUs among L parts for models assigned by
 * model_part at per-model rates (requests/s), into gpu_part (and each part's
 * need into need, when not NULL). prev: the split before (GPUs keep their
 * part where the new counts allow: fewest moves), or NULL. */
int sym_subclusters_split(const struct sym_experiment *e, const double *rates, const int *model_part, int L,
			  const int *prev, int *gpu_part, double *need, char *err, size_t errlen);

#endif
