/* Ranker and indexed-heap tests: lowest free GPU id, smallest latest among
 * ready candidates, ties, updates and removals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "core/ranker.h"

static void test_lowest_free_gpu(void **state)
{
	(void)state;
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 5, 3), 0);
	assert_int_equal(sym_ranker_free_count(&r), 5);
	for (int g = 0; g < 5; g++)
		assert_int_equal(sym_ranker_take_gpu(&r), g);
	assert_int_equal(sym_ranker_take_gpu(&r), -1);
	sym_ranker_put_gpu(&r, 3);
	sym_ranker_put_gpu(&r, 1);
	sym_ranker_put_gpu(&r, 4);
	assert_int_equal(sym_ranker_take_gpu(&r), 1);
	assert_int_equal(sym_ranker_take_gpu(&r), 3);
	assert_int_equal(sym_ranker_take_gpu(&r), 4);
	sym_ranker_finish(&r);
}

static void test_grant_order(void **state)
{
	(void)state;
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 1, 4), 0);
	assert_int_equal(sym_ranker_grant(&r), -1);
	sym_ranker_ready(&r, 0, 50);
	sym_ranker_ready(&r, 1, 20);
	sym_ranker_ready(&r, 2, 20); /* tie with model 1: lower id first */
	sym_ranker_ready(&r, 3, 30);
	sym_ranker_ready(&r, 0, 10); /* update: model 0 now most urgent */
	sym_ranker_unready(&r, 3);
	sym_ranker_unready(&r, 3); /* idempotent */
	assert_int_equal(sym_ranker_grant(&r), 0);
	assert_int_equal(sym_ranker_grant(&r), 1);
	assert_int_equal(sym_ranker_grant(&r), 2);
	assert_int_equal(sym_ranker_grant(&r), -1);
	sym_ranker_finish(&r);
}

static void test_init_rejects(void **state)
{
	(void)state;
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 1), -EINVAL);
	assert_int_equal(sym_ranker_init(&r, 1, 0), -EINVAL);
	sym_ranker_finish(NULL);
	struct sym_iheap h;
	assert_int_equal(sym_iheap_init(&h, -1), -EINVAL);
	sym_iheap_finish(&h);
}

/* Randomised check of the indexed heap against a brute-force model. */
static void test_iheap_random(void **state)
{
	(void)state;
	enum { N = 200 };
	struct sym_iheap h;
	assert_int_equal(sym_iheap_init(&h, N), 0);
	int64_t key[N];
	int in[N] = { 0 };
	uint64_t x = 7;
	for (int step = 0; step < 20000; step++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int id = (int)((x >> 33) % N);
		int op = (int)((x >> 20) % 4);
		if (op < 2) {
			key[id] = (int64_t)((x >> 40) % 50);
			in[id] = 1;
			sym_iheap_set(&h, id, key[id]);
		} else if (op == 2) {
			in[id] = 0;
			sym_iheap_remove(&h, id);
		} else {
			int best = -1;
			for (int i = 0; i < N; i++)
				if (in[i] && (best < 0 || key[i] < key[best]))
					best = i;
			assert_int_equal(sym_iheap_pop(&h), best);
			if (best >= 0)
				in[best] = 0;
		}
		int size = 0;
		for (int i = 0; i < N; i++) {
			size += in[i];
			assert_int_equal(sym_iheap_contains(&h, i), in[i]);
		}
		assert_int_equal(h.size, size);
	}
	sym_iheap_finish(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowest_free_gpu),
		cmocka_unit_test(test_grant_order),
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test(test_iheap_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
