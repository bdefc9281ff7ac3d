/* Queue tests: deadline order, ties in arrival order, growth across the ring
 * boundary, batch removal. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/queue.h"

static void test_order_and_ties(void **state)
{
	(void)state;
	struct sym_queue q;
	sym_queue_init(&q);
	assert_null(sym_queue_pop(&q));
	struct sym_request r[6] = {
		{ .id = 0, .deadline = 10 }, { .id = 1, .deadline = 30 }, { .id = 2, .deadline = 20 },
		{ .id = 3, .deadline = 20 }, { .id = 4, .deadline = 5 },  { .id = 5, .deadline = 30 },
	};
	for (int i = 0; i < 6; i++)
		assert_int_equal(sym_queue_push(&q, &r[i]), 0);
	int expect[6] = { 4, 0, 2, 3, 1, 5 };
	assert_int_equal(sym_queue_len(&q), 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(sym_queue_at(&q, (size_t)i)->id, expect[i]);
	struct sym_request *out[3];
	sym_queue_pop_n(&q, 3, out);
	assert_int_equal(out[0]->id, 4);
	assert_int_equal(out[2]->id, 2);
	assert_int_equal(sym_queue_pop(&q)->id, 3);
	assert_int_equal(sym_queue_len(&q), 2);
	sym_queue_finish(&q);
	sym_queue_finish(NULL);
}

static void test_wrap_and_grow(void **state)
{
	(void)state;
	struct sym_queue q;
	sym_queue_init(&q);
	static struct sym_request r[1000];
	uint64_t next_out = 0;
	/* push 3, pop 2 repeatedly: the head walks around the ring while it grows */
	for (int i = 0; i < 1000; i++) {
		r[i] = (struct sym_request){ .id = (uint64_t)i, .deadline = i };
		assert_int_equal(sym_queue_push(&q, &r[i]), 0);
		if (i % 3 == 2) {
			for (int k = 0; k < 2; k++)
				assert_int_equal(sym_queue_pop(&q)->id, next_out++);
		}
	}
	while (sym_queue_len(&q))
		assert_int_equal(sym_queue_pop(&q)->id, next_out++);
	assert_int_equal(next_out, 1000);
	sym_queue_finish(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_ties),
		cmocka_unit_test(test_wrap_and_grow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
