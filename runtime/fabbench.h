/* runtime/fabbench.h - `symphony fabbench`: the transport's latencies on one host.
 *
 * Two threads, each with its own sym_fab, connected over 127.0.0.1: a
 * "frontend" thread that registers a region and echoes messages, and the
 * calling thread, which measures the round trip of a 64-byte message and the
 * latency of an RMA read of the region (150 KB unless --size), polling
 * without blocking. Prints median, p99 and maximum in microseconds. The
 * options are in `symphony help fabbench` (cli/commands.c).
 */
#ifndef SYM_FABBENCH_H
#define SYM_FABBENCH_H

#include <stdbool.h>
#include <stddef.h>

/* Measures on provider: iters round trips and iters/4 (at least 1) RMA reads
 * of size bytes; prints the results, and writes them as JSON to json ("-":
 * stdout, and no text) when not NULL; with auth, both sides authenticate
 * with credentials and every message is sealed (runtime/fabric.h), as in a
 * cluster. Returns the exit status: 0 or 1. */
int sym_fabbench_run(const char *provider, long iters, size_t size, bool auth, const char *json);

#endif
