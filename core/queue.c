#include "core/queue.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void sym_queue_init(struct sym_queue *q)
{
	memset(q, 0, sizeof(*q));
}

void sym_queue_finish(struct sym_queue *q)
{
	if (!q)
		return;
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

static int grow(struct sym_queue *q)
{
	size_t ncap = q->cap ? q->cap * 2 : 64;
	struct sym_request **nb = malloc(ncap * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	for (size_t i = 0; i < q->len; i++)
		nb[i] = sym_queue_at(q, i);
	free(q->buf);
	q->buf = nb;
	q->cap = ncap;
	q->head = 0;
	return 0;
}

int sym_queue_push(struct sym_queue *q, struct sym_request *r)
{
	if (q->len == q->cap) {
		int err = grow(q);
		if (err)
			return err;
	}
	size_t mask = q->cap - 1;
	size_t i = q->len++;
	/* Walk back from the tail past every later deadline (insertion sort step). */
	while (i > 0) {
		struct sym_request *prev = q->buf[(q->head + i - 1) & mask];
		if (prev->deadline <= r->deadline)
			break;
		q->buf[(q->head + i) & mask] = prev;
		i--;
	}
	q->buf[(q->head + i) & mask] = r;
	return 0;
}

int sym_queue_requeue(struct sym_queue *q, struct sym_request *const *reqs, size_t n)
{
	while (q->cap - q->len < n) {
		int err = grow(q);
		if (err)
			return err;
	}
	for (size_t i = n; i-- > 0;) {
		struct sym_request *r = reqs[i];
		if (!q->len || r->deadline <= sym_queue_at(q, 0)->deadline) {
			q->head = (q->head - 1) & (q->cap - 1);
			q->buf[q->head] = r;
			q->len++;
		} else {
			sym_queue_push(q, r); /* room is there: cannot fail */
		}
	}
	return 0;
}

struct sym_request *sym_queue_pop(struct sym_queue *q)
{
	if (!q->len)
		return NULL;
	struct sym_request *r = q->buf[q->head];
	q->head = (q->head + 1) & (q->cap - 1);
	q->len--;
	return r;
}

void sym_queue_pop_n(struct sym_queue *q, size_t n, struct sym_request **out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = sym_queue_at(q, i);
	q->head = (q->head + n) & (q->cap - 1);
	q->len -= n;
}
