/* core/request.h - one inference request as the core sees it.
 *
 * The driver owns requests (the simulator pools them, the runtime keeps them
 * with their frontend metadata); the core only holds pointers to them between
 * sym_core_arrive() and the dispatch or drop that ends their stay. A request
 * must not be moved or freed while the core holds it.
 */
#ifndef SYM_REQUEST_H
#define SYM_REQUEST_H

#include <stdint.h>

#include "core/time.h"

struct sym_request {
	uint64_t id;       /* driver-chosen, unique within a run */
	sym_time arrival;  /* when the scheduler learned of it */
	sym_time deadline; /* when its response must be back (arrival + SLO by default) */
	int32_t model;     /* index of its model in the core's model table */
	int32_t state;     /* free for the driver (the core never reads or writes it) */
	sym_time start;    /* set by the core at dispatch: planned execution start */
	float size;        /* its data size, in units of its model's mean request (the profile's
			    * alpha is the cost of a request of mean size); 0: not known, read as 1.
			    * Only policies that fit against size read it (urgency) */
	uint32_t tag;      /* a second word free for the driver */
};

/* A batch to run: what the core's sink (core/core.h) and the model side
 * (core/models.h) dispatch. */
struct sym_dispatch {
	int model;
	int gpu;
	int kind;        /* the GPU's kind */
	int size;
	sym_time now;    /* the dispatch decision */
	sym_time start;  /* planned execution start: now + ctrl + data*size, after the GPU's earlier batches */
	sym_time finish; /* planned finish: start + l_kind(size) */
	sym_time reject_after; /* the driver must not start it later than this (it rejects the batch
				* instead); SYM_TIME_NEVER: no limit */
	uint32_t dropped_before; /* this model's drops since its previous dispatch */
	uint32_t epoch;  /* the GPU's epoch at the grant (the runtime's offline/online count) */
	struct sym_request *const *reqs; /* size requests, valid during the callback */
};

#endif
