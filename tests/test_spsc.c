/* tests/test_spsc.c - the lock-free single-producer/single-consumer queue.
 *
 *   - FIFO order, full and empty edges, capacity rounded up to a power of two, wrap-around;
 *   - bad sizes refused;
 *   - two threads: a producer pushes 2 million sequence-numbered elements through a small queue
 *     and the consumer sees every one exactly once, in order, with its payload intact (this test
 *     also runs under ThreadSanitizer, see docs/testing.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "runtime/spsc.h"

struct elem {
	uint64_t seq;
	uint64_t check;
	uint32_t pad[4];
};

static void test_single_thread(void **state)
{
	(void)state;
	struct sym_spsc *q = sym_spsc_create(5, sizeof(struct elem));
	assert_non_null(q);
	assert_int_equal(sym_spsc_capacity(q), 8);
	struct elem e = { 0 }, out;
	assert_false(sym_spsc_pop(q, &out));
	for (uint64_t round = 0; round < 5; round++) { /* wraps around the ring several times */
		for (uint64_t i = 0; i < 8; i++) {
			e.seq = round * 100 + i;
			assert_true(sym_spsc_push(q, &e));
		}
		assert_false(sym_spsc_push(q, &e)); /* full */
		assert_int_equal(sym_spsc_size(q), 8);
		for (uint64_t i = 0; i < 3; i++) {
			assert_true(sym_spsc_pop(q, &out));
			assert_int_equal(out.seq, round * 100 + i);
		}
		e.seq = 999;
		assert_true(sym_spsc_push(q, &e)); /* room again */
		for (uint64_t i = 3; i < 8; i++) {
			assert_true(sym_spsc_pop(q, &out));
			assert_int_equal(out.seq, round * 100 + i);
		}
		assert_true(sym_spsc_pop(q, &out));
		assert_int_equal(out.seq, 999);
		assert_false(sym_spsc_pop(q, &out));
		assert_int_equal(sym_spsc_size(q), 0);
	}
	sym_spsc_destroy(q);
	assert_null(sym_spsc_create(0, 8));
	assert_null(sym_spsc_create(8, 0));
	assert_null(sym_spsc_create(((size_t)1 << 30) + 1, 8));
	sym_spsc_destroy(NULL);
	q = sym_spsc_create(1, 1);
	assert_int_equal(sym_spsc_capacity(q), 1);
	unsigned char c = 7, d = 0;
	assert_true(sym_spsc_push(q, &c));
	assert_false(sym_spsc_push(q, &c));
	assert_true(sym_spsc_pop(q, &d));
	assert_int_equal(d, 7);
	sym_spsc_destroy(q);
}

#define N 2000000

static void *producer(void *arg)
{
	struct sym_spsc *q = arg;
	struct elem e;
	memset(&e, 0, sizeof(e));
	for (uint64_t i = 0; i < N; i++) {
		e.seq = i;
		e.check = i * 0x9e3779b97f4a7c15ull;
		e.pad[3] = (uint32_t)i;
		while (!sym_spsc_push(q, &e))
			sched_yield();
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	(void)state;
	struct sym_spsc *q = sym_spsc_create(64, sizeof(struct elem));
	assert_non_null(q);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, producer, q), 0);
	struct elem out;
	uint64_t next = 0, bad = 0;
	while (next < N) {
		if (!sym_spsc_pop(q, &out)) {
			sched_yield();
			continue;
		}
		bad += out.seq != next || out.check != next * 0x9e3779b97f4a7c15ull || out.pad[3] != (uint32_t)next;
		next++;
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(bad, 0);
	assert_false(sym_spsc_pop(q, &out));
	sym_spsc_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_thread),
		cmocka_unit_test(test_two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
