/* control/moves.c - an epoch's model moves by memory (control/moves.h). */
#include "control/moves.h"

#include <errno.h>
#include <math.h>

#include "core/memory.h"
#include "core/vocab.h"

const char *sym_move_name(enum sym_move m)
{
	switch (m) {
	case SYM_MOVE_SMOOTH: return "smooth";
	case SYM_MOVE_DEFERRED: return "deferred";
	case SYM_MOVE_STALLED: return "stalled";
	default: return "none";
	}
}

/* The largest dynamic memory of part j's models after the moves. */
static double dynamic_after(const struct sym_moves_in *in, int j)
{
	double d = 0;
	for (int m = 0; m < in->nmodels; m++)
		if ((in->fixed && in->fixed[m] ? in->from[m] : in->to[m]) == j)
			d = fmax(d, in->dynamic_mb[m]);
	return d;
}

int sym_moves_plan(const struct sym_moves_in *in, double *held_mb, enum sym_move *move)
{
	int n = 0;
	for (int m = 0; m < in->nmodels; m++)
		move[m] = SYM_MOVE_NONE;
	if (in->nparts < 1 || in->nparts > SYM_MAX_KINDS)
		return -EINVAL;
	/* pass 0: smooth moves; pass 1: the others, with what the moves out of a part free there
	 * (the smooth ones, and the stalled ones, unloaded first) */
	for (int pass = 0; pass < 2; pass++) {
		double out[SYM_MAX_KINDS];
		for (int j = 0; j < in->nparts; j++)
			out[j] = 0;
		for (int m = 0; pass && m < in->nmodels; m++)
			if (move[m] != SYM_MOVE_NONE)
				out[in->from[m]] += in->static_mb[m];
		for (int m = 0; m < in->nmodels; m++) {
			int to = in->to[m];
			if (to == in->from[m] || (in->fixed && in->fixed[m]) || move[m] != SYM_MOVE_NONE)
				continue;
			struct sym_mem held = { held_mb[to] - out[to], dynamic_after(in, to) };
			bool room = !(in->cap_mb > 0) ||
				    sym_mem_need_with(&held, in->static_mb[m], in->dynamic_mb[m]) <= in->cap_mb;
			if (pass == 0 && !room)
				continue;
			move[m] = pass == 0 ? SYM_MOVE_SMOOTH : room ? SYM_MOVE_DEFERRED : SYM_MOVE_STALLED;
			if (move[m] == SYM_MOVE_STALLED)
				out[in->from[m]] += in->static_mb[m];
			held_mb[to] += in->static_mb[m];
			n++;
		}
	}
	return n;
}
