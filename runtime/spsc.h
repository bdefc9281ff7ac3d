/* runtime/spsc.h - a bounded lock-free single-producer/single-consumer queue.
 *
 * Carries fixed-size elements (the scheduler's small value messages)
 * between exactly two threads: one calls sym_spsc_push, the other
 * sym_spsc_pop. Neither blocks or takes a lock; a push on a full queue and a
 * pop on an empty one return false at once, and the caller decides whether
 * to spin, yield or sleep on its event loop.
 *
 * Ordering: the producer writes the element, then publishes its new tail
 * with a release store; the consumer reads the tail with an acquire load
 * before reading the element, and publishes its new head with a release
 * store that the producer reads with acquire before reusing the slot. Each
 * side keeps a private copy of the other's index and rereads the shared one
 * only when its copy says full (or empty), so in steady state a push or pop
 * touches one shared cache line. Head and tail live on separate cache lines.
 */
#ifndef SYM_SPSC_H
#define SYM_SPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_spsc {
	/* consumer side */
	_Alignas(64) atomic_size_t head;
	size_t tail_cache;
	/* producer side */
	_Alignas(64) atomic_size_t tail;
	size_t head_cache;
	/* read-only after create */
	_Alignas(64) size_t mask;  /* capacity - 1 */
	size_t elem;               /* element size in bytes */
	unsigned char *slots;
};

/* A queue of at least `capacity` elements (rounded up to a power of two,
 * at most 2^30) of `elem` bytes each. Returns NULL on ENOMEM or bad sizes. */
struct sym_spsc *sym_spsc_create(size_t capacity, size_t elem);
void sym_spsc_destroy(struct sym_spsc *q);

/* Producer: copies elem bytes from e. false when full. */
bool sym_spsc_push(struct sym_spsc *q, const void *e);

/* Consumer: copies the oldest element to out. false when empty. */
bool sym_spsc_pop(struct sym_spsc *q, void *out);

/* Elements queued (exact when called by either side about itself; a snapshot otherwise). */
size_t sym_spsc_size(struct sym_spsc *q);
size_t sym_spsc_capacity(const struct sym_spsc *q);

#endif
