/* core/parts.h - sub-clusters as parts of one core
 * (symphony-centralized-orchestration.md, Section 4.7).
 *
 * A core of P parts and K GPU kinds keeps P * K rankers: the ranker of part j
 * and kind k is the core's kind j * K + k (its "slot"), with kind k's profiles
 * and kind k's name followed by "/subJ". A model of part j runs on part j's
 * slots only (sym_model_cfg.kinds_off), a GPU of part j and kind k serves slot
 * j * K + k. A model or a GPU changes part by changing slot: the model keeps
 * its queue (sym_core_set_part), the GPU goes offline first
 * (sym_core_gpu_set_part). The core and the runtime's threaded scheduler both
 * build their rankers from this expansion, so a part means the same in the
 * simulator and in schedd.
 *
 * Pure: no clock, no I/O.
 */
#ifndef SYM_PARTS_H
#define SYM_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* A core configuration with its parts expanded into kinds. */
struct sym_parts {
	int nparts, nkinds;              /* P and K (each >= 1) */
	struct sym_core_cfg cfg;         /* nparts 0, nkinds P * K, pointing into the arrays below */
	struct sym_kind kinds[SYM_MAX_KINDS];
	int *gpu_kind;                   /* ngpus: each GPU's slot */
	struct sym_model_cfg *models;    /* nmodels: each model with its part's kinds_off and per-slot profiles */
};

/* Expands in (nparts >= 2) into out. 0; -EINVAL with a message naming what
 * was wrong (parts times kinds over SYM_MAX_KINDS, a part out of range, a
 * scheduler policy); -ENOMEM. out is finished on error. */
int sym_parts_expand(const struct sym_core_cfg *in, struct sym_parts *out, char *err, size_t errlen);
void sym_parts_finish(struct sym_parts *p);

/* Model cfg (of part cfg->part) for a core of nparts parts and nkinds kinds:
 * its profile per slot and kinds_off. -EINVAL for a part out of range. */
int sym_parts_model(const struct sym_model_cfg *cfg, int nparts, int nkinds, struct sym_model_cfg *out);

/* The slots that are not part j's (every slot for part -1: none, held). */
uint32_t sym_parts_kinds_off(int nparts, int nkinds, int part);

/* The slot of part j and GPU kind k. */
static inline int sym_parts_slot(int nkinds, int part, int kind)
{
	return part * nkinds + kind;
}

#endif
