/* tests/fuzz/fuzz_csv.c - libFuzzer: the CSV files of workloads/workload.h,
 * a rate table and a per-request arrival trace, read from a file (an
 * in-memory one), then a trace replayed for a few arrivals. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workloads/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-csv", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	char err[512];
	struct sym_rate_table t;
	if (!sym_rate_table_load(path, &t, err, sizeof(err)))
		sym_rate_table_finish(&t);
	struct sym_trace tr;
	if (!sym_trace_load(path, &tr, err, sizeof(err))) {
		for (size_t m = 0; m < tr.nmodels && m < 4; m++) {
			struct sym_arrivals a;
			if (sym_arrivals_init_replay(&a, tr.times[m], tr.sizes ? tr.sizes[m] : NULL, tr.count[m], tr.length,
						     m ? 0.5 + (double)m : 1, 1, m))
				__builtin_trap(); /* a loaded trace always replays */
			for (int k = 0; k < 16; k++)
				if (sym_arrivals_next(&a) == SYM_TIME_NEVER)
					break;
			sym_arrivals_finish(&a);
		}
		sym_trace_finish(&tr);
	}
	return 0;
}
