/* core/iheap.h - indexed binary min-heap over small integer ids.
 *
 * Holds a subset of the ids 0..capacity-1, each with an int64 key; the top is
 * the id with the smallest key, ties broken by the smaller id, so the order is
 * total and runs are deterministic. Because every id knows its position, a key
 * can be changed or an id removed in O(log n). The core uses it for model
 * timers (key: wake-up time), ready candidates (key: latest start) and free
 * GPUs (key: GPU id). Memory is allocated once at init.
 */
#ifndef SYM_IHEAP_H
#define SYM_IHEAP_H

#include <stdbool.h>
#include <stdint.h>

struct sym_iheap {
	int capacity;
	int size;
	int *heap;     /* heap[i] = id at heap position i */
	int *pos;      /* pos[id] = heap position, or -1 when absent */
	int64_t *key;  /* key[id] */
};

/* Returns 0, -EINVAL (capacity < 0) or -ENOMEM. */
int sym_iheap_init(struct sym_iheap *h, int capacity);
void sym_iheap_finish(struct sym_iheap *h);

static inline bool sym_iheap_contains(const struct sym_iheap *h, int id)
{
	return h->pos[id] >= 0;
}

static inline bool sym_iheap_empty(const struct sym_iheap *h) { return h->size == 0; }

/* The id at the top, or -1 when empty. */
static inline int sym_iheap_top(const struct sym_iheap *h) { return h->size ? h->heap[0] : -1; }

/* The top key; only valid when not empty. */
static inline int64_t sym_iheap_top_key(const struct sym_iheap *h) { return h->key[h->heap[0]]; }

/* Inserts id with key, or changes its key when already present. */
void sym_iheap_set(struct sym_iheap *h, int id, int64_t key);

/* Removes id if present. */
void sym_iheap_remove(struct sym_iheap *h, int id);

/* Removes and returns the top id, or -1 when empty. */
int sym_iheap_pop(struct sym_iheap *h);

#endif
