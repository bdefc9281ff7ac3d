/* runtime/executor.h - where a backend runs its batches.
 *
 * An executor loads models and runs batches of inputs, each batch starting
 * no earlier than a given moment of CLOCK_MONOTONIC. Implementations are
 * small vtables: `emulated` (here: it holds the device for l(b) from the
 * model's profile, and writes a digest of each input as its output) and
 * `cuda` (its own issue). Everything above this interface (the backend, its
 * tests, the fidelity check) runs on a machine without a GPU.
 *
 * Thread safety: one executor per GPU, driven by one thread.
 */
#ifndef SYM_EXECUTOR_H
#define SYM_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "core/profile.h"
#include "core/time.h"

/* CLOCK_MONOTONIC in nanoseconds: the runtime's clock. */
sym_time sym_monotonic_ns(void);

/* Sleeps until `t` (monotonic), then spins the last `spin` ns for precision.
 * Returns the moment it returned (>= t). */
sym_time sym_wait_until(sym_time t, sym_time spin);

#define SYM_EXEC_OUTPUT 8 /* bytes of an emulated output: the input's FNV-1a 64 digest */

struct sym_batch_io {
	int n;                       /* inputs, 1..max_batch of the model */
	const void *const *inputs;   /* n pointers */
	const uint32_t *lens;        /* n lengths */
	void *const *outputs;        /* n buffers of at least out_cap bytes */
	uint32_t out_cap;
	uint32_t *out_lens;          /* n output lengths, written */
};

struct sym_executor;

struct sym_executor_ops {
	const char *name;
	/* Loads model `id` with its profile (which must outlive the executor). */
	int (*load)(struct sym_executor *x, int id, const struct sym_profile *p, char *err, size_t errlen);
	/* Runs a batch of model `id` no earlier than `start`; returns when it is done, with the
	 * moments it began and ended. 0, or -EINVAL (unknown model, bad size) with a message. */
	int (*run)(struct sym_executor *x, int id, const struct sym_batch_io *io, sym_time start, sym_time *began,
		   sym_time *ended, char *err, size_t errlen);
	void (*destroy)(struct sym_executor *x);
};

struct sym_executor {
	const struct sym_executor_ops *ops;
};

/* The emulated executor: holds for l(n) of the model's profile (sleeping,
 * then spinning the last `spin_ns`; 0: the default 200 us). */
struct sym_executor *sym_executor_emulated(sym_time spin_ns);

/* The digest an emulated output holds: FNV-1a 64 of the input, little-endian. */
uint64_t sym_exec_digest(const void *data, size_t len);

#endif
