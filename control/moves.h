/* control/moves.h - how an epoch's model moves go, by memory: the one move
 * protocol of the simulator (sim/engine.c) and schedd (runtime/schedd.c),
 * issue 31 (symphony-centralized-orchestration.md, Section 4.7).
 *
 * An epoch gives some models a new part (experiment/subcluster.h,
 * sym_subclusters_epoch). Each is loaded on its new part's GPUs while its old
 * part still serves it, then switches there with its queue (sym_core_set_part),
 * and its old part unloads it. A GPU must hold what its part's models need
 * (core/memory.h: their static memory and the largest dynamic one), so a move
 * is one of:
 *   - smooth: its new part has room for it beside what it holds now: it
 *     starts at the epoch;
 *   - deferred: room once the smooth moves out of its new part have switched
 *     and freed their memory: it starts when the smooth moves are done;
 *   - stalled: no room even then (parts waiting on each other): when the
 *     smooth moves are done its old part unloads it first (for room), and its
 *     requests wait in the core (the model has no part, sym_core_set_part -1)
 *     until its new part has loaded it.
 * The models are taken in order, smooth ones first; a model that moves in
 * claims its memory in its new part at once.
 *
 * Pure: no clock, no I/O, no allocation. When the moves happen is the
 * driver's: the simulator times the loads (partition.load_mbps, load_ms), schedd
 * waits for its backends' reports.
 */
#ifndef SYM_CONTROL_MOVES_H
#define SYM_CONTROL_MOVES_H

#include <stdbool.h>

enum sym_move { SYM_MOVE_NONE, SYM_MOVE_SMOOTH, SYM_MOVE_DEFERRED, SYM_MOVE_STALLED };

/* "none", "smooth", "deferred" or "stalled". */
const char *sym_move_name(enum sym_move m);

struct sym_moves_in {
	int nmodels, nparts;
	const int *from, *to;                  /* per model: its part now, and the epoch's (equal: it stays) */
	const bool *fixed;                     /* per model, or NULL: true stays put (it holds no memory either:
						* an unloaded model) */
	const double *static_mb, *dynamic_mb;  /* per model */
	double cap_mb;                         /* one GPU's memory; <= 0: unchecked (every move smooth) */
};

/* The kind of each model's move (move[m]; NONE for those that stay) and, in
 * held_mb (nparts entries), each part's static memory: on entry what its GPUs
 * hold, on return with the models moving in added (those moving out count
 * until they switch: the caller takes them off then). Returns how many
 * models move, or -EINVAL for nparts outside 1..SYM_MAX_KINDS (the parts
 * of one core; every move[m] NONE then). */
int sym_moves_plan(const struct sym_moves_in *in, double *held_mb, enum sym_move *move);

#endif
