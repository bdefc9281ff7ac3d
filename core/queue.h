/* core/queue.h - one model's pending requests, ordered by deadline.
 *
 * A ring buffer of request pointers kept sorted by deadline (ties in arrival
 * order). With one SLO per model deadlines arrive in order and an insert is
 * O(1); an out-of-order deadline (a per-request override) is moved into place.
 * Batches are always taken from the head. The buffer doubles when full, so the
 * steady state allocates nothing.
 */
#ifndef SYM_QUEUE_H
#define SYM_QUEUE_H

#include <stddef.h>

#include "core/request.h"

struct sym_queue {
	struct sym_request **buf;
	size_t cap;   /* a power of two, or 0 */
	size_t head;  /* index of the first element */
	size_t len;
};

void sym_queue_init(struct sym_queue *q);
void sym_queue_finish(struct sym_queue *q);

/* Inserts r in deadline order. Returns 0 or -ENOMEM (r not inserted). */
int sym_queue_push(struct sym_queue *q, struct sym_request *r);

static inline size_t sym_queue_len(const struct sym_queue *q) { return q->len; }

/* The i-th request from the head (0 = earliest deadline); i < len. */
static inline struct sym_request *sym_queue_at(const struct sym_queue *q, size_t i)
{
	return q->buf[(q->head + i) & (q->cap - 1)];
}

/* Puts back requests taken from the head (a cancelled batch): reqs[0..n) in
 * deadline order. Each goes to the front when its deadline is no later than
 * the head's (the usual case, O(1)), else into its place. Returns 0 or
 * -ENOMEM (then none was inserted). */
int sym_queue_requeue(struct sym_queue *q, struct sym_request *const *reqs, size_t n);

/* Removes and returns the head, or NULL when empty. */
struct sym_request *sym_queue_pop(struct sym_queue *q);

/* Removes the first n (<= len) requests, writing them to out[0..n). */
void sym_queue_pop_n(struct sym_queue *q, size_t n, struct sym_request **out);

#endif
