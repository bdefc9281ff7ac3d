#include "runtime/spsc.h"

#include <stdlib.h>
#include <string.h>

struct sym_spsc *sym_spsc_create(size_t capacity, size_t elem)
{
	if (!capacity || capacity > ((size_t)1 << 30) || !elem || elem > 4096)
		return NULL;
	size_t cap = 1;
	while (cap < capacity)
		cap <<= 1;
	struct sym_spsc *q = aligned_alloc(64, sizeof(*q));
	if (!q)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->slots = malloc(cap * elem);
	if (!q->slots) {
		free(q);
		return NULL;
	}
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	q->mask = cap - 1;
	q->elem = elem;
	return q;
}

void sym_spsc_destroy(struct sym_spsc *q)
{
	if (!q)
		return;
	free(q->slots);
	free(q);
}

bool sym_spsc_push(struct sym_spsc *q, const void *e)
{
	size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	if (t - q->head_cache > q->mask) {
		q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
		if (t - q->head_cache > q->mask)
			return false;
	}
	memcpy(q->slots + (t & q->mask) * q->elem, e, q->elem);
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	return true;
}

bool sym_spsc_pop(struct sym_spsc *q, void *out)
{
	size_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
	if (h == q->tail_cache) {
		q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
		if (h == q->tail_cache)
			return false;
	}
	memcpy(out, q->slots + (h & q->mask) * q->elem, q->elem);
	atomic_store_explicit(&q->head, h + 1, memory_order_release);
	return true;
}

size_t sym_spsc_size(struct sym_spsc *q)
{
	size_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
	size_t h = atomic_load_explicit(&q->head, memory_order_acquire);
	return t - h;
}

size_t sym_spsc_capacity(const struct sym_spsc *q)
{
	return q->mask + 1;
}
