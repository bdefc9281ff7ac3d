#include "core/ranker.h"

#include "core/error.h"

int sym_ranker_init(struct sym_ranker *r, int ngpus, int nmodels)
{
	r->ngpus = ngpus;
	r->nmodels = nmodels;
	if (ngpus < 1 || nmodels < 1)
		return -EINVAL;
	int err = sym_iheap_init(&r->free_gpus, ngpus);
	if (!err)
		err = sym_iheap_init(&r->ready, nmodels);
	if (err) {
		sym_ranker_finish(r);
		return err;
	}
	for (int g = 0; g < ngpus; g++)
		sym_iheap_set(&r->free_gpus, g, g);
	return 0;
}

void sym_ranker_finish(struct sym_ranker *r)
{
	if (!r)
		return;
	sym_iheap_finish(&r->free_gpus);
	sym_iheap_finish(&r->ready);
}

int sym_ranker_take_gpu(struct sym_ranker *r)
{
	return sym_iheap_pop(&r->free_gpus);
}

void sym_ranker_put_gpu(struct sym_ranker *r, int g)
{
	sym_iheap_set(&r->free_gpus, g, g);
}

void sym_ranker_ready(struct sym_ranker *r, int m, sym_time latest)
{
	sym_iheap_set(&r->ready, m, latest);
}

void sym_ranker_unready(struct sym_ranker *r, int m)
{
	sym_iheap_remove(&r->ready, m);
}

int sym_ranker_grant(struct sym_ranker *r)
{
	return sym_iheap_pop(&r->ready);
}
