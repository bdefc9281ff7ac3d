#include "core/iheap.h"

#include <stdlib.h>

#include "core/error.h"

int sym_iheap_init(struct sym_iheap *h, int capacity)
{
	h->capacity = capacity;
	h->size = 0;
	h->heap = NULL;
	h->pos = NULL;
	h->key = NULL;
	if (capacity < 0)
		return -EINVAL;
	size_t n = capacity ? (size_t)capacity : 1;
	h->heap = malloc(n * sizeof(*h->heap));
	h->pos = malloc(n * sizeof(*h->pos));
	h->key = malloc(n * sizeof(*h->key));
	if (!h->heap || !h->pos || !h->key) {
		sym_iheap_finish(h);
		return -ENOMEM;
	}
	for (int i = 0; i < capacity; i++)
		h->pos[i] = -1;
	return 0;
}

void sym_iheap_finish(struct sym_iheap *h)
{
	if (!h)
		return;
	free(h->heap);
	free(h->pos);
	free(h->key);
	h->heap = h->pos = NULL;
	h->key = NULL;
	h->size = 0;
}

static inline bool less(const struct sym_iheap *h, int a, int b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void sift_up(struct sym_iheap *h, int i)
{
	int id = h->heap[i];
	while (i > 0) {
		int parent = (i - 1) / 2;
		int pid = h->heap[parent];
		if (!less(h, id, pid))
			break;
		h->heap[i] = pid;
		h->pos[pid] = i;
		i = parent;
	}
	h->heap[i] = id;
	h->pos[id] = i;
}

static void sift_down(struct sym_iheap *h, int i)
{
	int id = h->heap[i];
	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->size)
			break;
		if (c + 1 < h->size && less(h, h->heap[c + 1], h->heap[c]))
			c++;
		if (!less(h, h->heap[c], id))
			break;
		h->heap[i] = h->heap[c];
		h->pos[h->heap[i]] = i;
		i = c;
	}
	h->heap[i] = id;
	h->pos[id] = i;
}

void sym_iheap_set(struct sym_iheap *h, int id, int64_t key)
{
	int i = h->pos[id];
	if (i < 0) {
		h->key[id] = key;
		i = h->size++;
		h->heap[i] = id;
		h->pos[id] = i;
		sift_up(h, i);
		return;
	}
	int64_t old = h->key[id];
	h->key[id] = key;
	if (key < old)
		sift_up(h, i);
	else if (key > old)
		sift_down(h, i);
}

void sym_iheap_remove(struct sym_iheap *h, int id)
{
	int i = h->pos[id];
	if (i < 0)
		return;
	h->pos[id] = -1;
	int last = h->heap[--h->size];
	if (i == h->size)
		return;
	h->heap[i] = last;
	h->pos[last] = i;
	sift_up(h, i);
	sift_down(h, h->pos[last]);
}

int sym_iheap_pop(struct sym_iheap *h)
{
	if (!h->size)
		return -1;
	int id = h->heap[0];
	sym_iheap_remove(h, id);
	return id;
}
