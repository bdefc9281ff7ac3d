/* tests/test_suggest.c - core/suggest.h: "did you mean", the nearest known name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/suggest.h"

static const char *nearest(const char *name, const char *const *cands)
{
	struct sym_suggest s;
	sym_suggest_init(&s, name);
	for (size_t i = 0; cands[i]; i++)
		sym_suggest_consider(&s, cands[i]);
	return s.best;
}

static void test_nearest(void **state)
{
	(void)state;
	const char *opts[] = { "seed", "seeds", "rate", "trace", "models", "ResNet50", "ResNet50V2", NULL };
	assert_string_equal(nearest("sed", opts), "seed");           /* one edit */
	assert_string_equal(nearest("resnet50", opts), "ResNet50");  /* case is no edit */
	assert_string_equal(nearest("ResNet5", opts), "ResNet50");   /* the nearer of two */
	assert_string_equal(nearest("modles", opts), "models");      /* two edits in a long name */
	assert_null(nearest("race", (const char *[]){ "trace2", NULL })); /* two edits in a short one: no */
	assert_null(nearest("xyzzy", opts));
	assert_string_equal(nearest("seeds", opts), "seeds");        /* itself */
	assert_null(nearest("a-name-longer-than-forty-characters-is-never-near", opts));
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_nearest) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
