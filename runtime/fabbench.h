/* runtime/fabbench.h - `symphony fabbench`: the transport's latencies on one host.
 *
 * Two threads, each with its own sym_fab, connected over 127.0.0.1: a
 * "frontend" thread that registers a region and echoes messages, and the
 * calling thread, which measures the round trip of a 64-byte message and the
 * latency of an RMA read of the region (150 KB unless --size), polling
 * without blocking. Prints median, p99 and maximum in microseconds.
 *
 *   --provider NAME  libfabric provider (default tcp)
 *   --iters N        round trips (default 20000); reads are N/4 (at least 1)
 *   --size BYTES     bytes per read (default 153600)
 *   --json FILE|-    also write the results as JSON ("-": stdout, text off)
 *
 * Returns 0, 1 on a failure (with a message on stderr), 2 on bad options.
 */
#ifndef SYM_FABBENCH_H
#define SYM_FABBENCH_H

int sym_fabbench_main(int argc, char **argv);

#endif
