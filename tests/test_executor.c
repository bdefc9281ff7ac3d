/* tests/test_executor.c - the emulated executor and the runtime clock.
 *
 *   - a batch of b holds the executor for l(b) of the profile: never less, and over 20 runs the
 *     median overshoot is under 100 us (it sleeps, then spins the last 200 us);
 *   - a batch starts no earlier than its planned start, and close to it;
 *   - each output is the digest of its input;
 *   - unknown models, bad batch sizes and small output buffers are refused with a message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "runtime/executor.h"
#include "testutil.h"

static int cmp_time(const void *a, const void *b)
{
	sym_time x = *(const sym_time *)a, y = *(const sym_time *)b;
	return (x > y) - (x < y);
}

struct io_bufs {
	unsigned char in[8][16];
	const void *inputs[8];
	uint32_t lens[8];
	unsigned char out[8][16];
	void *outputs[8];
	uint32_t out_lens[8];
	struct sym_batch_io io;
};

static void make_io(struct io_bufs *b, int n)
{
	for (int i = 0; i < 8; i++) {
		for (int k = 0; k < 16; k++)
			b->in[i][k] = (unsigned char)(i * 31 + k);
		b->inputs[i] = b->in[i];
		b->lens[i] = 16;
		b->outputs[i] = b->out[i];
	}
	b->io = (struct sym_batch_io){ n, b->inputs, b->lens, b->outputs, 16, b->out_lens };
}

static void test_timing(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "m", 0.5, 2.0, 8), 0); /* l(4) = 4 ms */
	struct sym_executor *x = sym_executor_emulated(NULL);
	assert_non_null(x);
	assert_string_equal(x->ops->name, "emulated");
	char err[256];
	struct sym_model_desc md;
	sym_model_desc_default(&md, "m", &p, 16);
	assert_int_equal(x->ops->load(x, 3, &md, err, sizeof(err)), 0);
	struct io_bufs b;
	make_io(&b, 4);
	sym_time over[20], late[20];
	for (int r = 0; r < 20; r++) {
		sym_time start = sym_monotonic_ns() + 1 * SYM_MS, began, ended;
		assert_int_equal(x->ops->run(x, 3, &b.io, start, &began, &ended, err, sizeof(err)), 0);
		assert_true(began >= start);
		assert_true(ended - began >= p.lat[4]);
		over[r] = ended - began - p.lat[4];
		late[r] = began - start;
	}
	qsort(over, 20, sizeof(sym_time), cmp_time);
	qsort(late, 20, sizeof(sym_time), cmp_time);
	print_message("emulated l(4) = 4 ms: overshoot median %lld ns, max %lld ns; start lateness median %lld ns\n",
		      (long long)over[10], (long long)over[19], (long long)late[10]);
	assert_true(over[10] < 100 * SYM_US);
	assert_true(late[10] < 100 * SYM_US);
	/* outputs: the digest of each input */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(b.out_lens[i], SYM_EXEC_OUTPUT);
		uint64_t h = sym_exec_digest(b.in[i], 16), got = 0;
		for (int k = 0; k < 8; k++)
			got |= (uint64_t)b.out[i][k] << (8 * k);
		assert_true(got == h);
	}
	/* a start in the past runs at once */
	sym_time began, ended, t0 = sym_monotonic_ns();
	assert_int_equal(x->ops->run(x, 3, &b.io, t0 - SYM_S, &began, &ended, err, sizeof(err)), 0);
	assert_true(began - t0 < 5 * SYM_MS);
	x->ops->destroy(x);
	sym_profile_finish(&p);
}

/* Loading holds for the modelled time (file over bandwidth, plus a fixed
 * cost), refuses a model that does not fit the device's memory, and an
 * unloaded model frees its memory and runs no more. */
static void test_load_unload(void **state)
{
	(void)state;
	struct sym_profile a, b;
	assert_int_equal(sym_profile_init_linear(&a, "a", 0.5, 2.0, 8), 0);
	assert_int_equal(sym_profile_init_linear(&b, "b", 0.5, 2.0, 8), 0);
	a.static_mb = 600, a.dynamic_mb = 80;  /* dynamic: a batch's (core/memory.h) */
	b.static_mb = 300, b.dynamic_mb = 200;
	struct sym_executor_opts o = { .memory_mb = 1000, .load_mbps = 10000, .load_ms = 20 };
	struct sym_executor *x = sym_executor_emulated(&o);
	char err[256];
	struct sym_model_desc ma, mb;
	sym_model_desc_default(&ma, "a", &a, 16);
	sym_model_desc_default(&mb, "b", &b, 16);
	ma.file_mb = 500; /* 500 MB at 10 GB/s = 50 ms, + 20 ms */
	mb.file_mb = -1;  /* unknown: its static memory, 300 MB = 30 ms, + 20 ms */
	sym_time t0 = sym_monotonic_ns();
	assert_int_equal(x->ops->load(x, 0, &ma, err, sizeof(err)), 0);
	sym_time t1 = sym_monotonic_ns();
	assert_true(t1 - t0 >= 70 * SYM_MS);
	assert_true(t1 - t0 < 140 * SYM_MS); /* (generous: CI machines are shared) */
	/* 600 + 300 static, and the largest dynamic 200: 1100 > 1000 (the simulator's rule) */
	assert_int_equal(x->ops->load(x, 1, &mb, err, sizeof(err)), -ENOSPC);
	assert_contains(err, "model 'b' does not fit: the models loaded and it need 1100 MB, the GPU has 1000");
	assert_true(sym_monotonic_ns() - t1 < 40 * SYM_MS); /* refused before any loading (50 ms) */
	struct sym_mem both = { 0, 0 };
	sym_mem_add_profile(&both, &a);
	sym_mem_add_profile(&both, &b);
	assert_true(sym_mem_need(&both) == 1100);
	/* what the executor reports is a batch's dynamic memory, whatever the size */
	struct sym_model_memory mem;
	assert_int_equal(x->ops->memory(x, 0, 1, &mem), 0);
	assert_true(mem.static_mb == 600 && mem.dynamic_mb == 80);
	assert_int_equal(x->ops->memory(x, 0, 8, &mem), 0);
	assert_true(mem.dynamic_mb == 80);
	assert_int_equal(x->ops->unload(x, 0, err, sizeof(err)), 0);
	assert_int_equal(x->ops->unload(x, 0, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 0 is not loaded");
	struct io_bufs io;
	make_io(&io, 2);
	sym_time began, ended;
	assert_int_equal(x->ops->run(x, 0, &io.io, t1, &began, &ended, err, sizeof(err)), -EINVAL);
	t0 = sym_monotonic_ns();
	assert_int_equal(x->ops->load(x, 1, &mb, err, sizeof(err)), 0); /* room now */
	t1 = sym_monotonic_ns();
	assert_true(t1 - t0 >= 50 * SYM_MS && t1 - t0 < 100 * SYM_MS);
	assert_int_equal(x->ops->run(x, 1, &io.io, t1, &began, &ended, err, sizeof(err)), 0);
	x->ops->destroy(x);
	sym_profile_finish(&a);
	sym_profile_finish(&b);
}

static void test_errors(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "m", 0.1, 0.1, 4), 0);
	struct sym_executor *x = sym_executor_emulated(&(struct sym_executor_opts){ .spin_ns = 50 * SYM_US });
	char err[256];
	struct sym_model_desc md;
	sym_model_desc_default(&md, "m", &p, 16);
	assert_int_equal(x->ops->load(x, -1, &md, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model id -1");
	assert_int_equal(x->ops->load(x, 0, &md, err, sizeof(err)), 0);
	struct io_bufs b;
	sym_time began, ended, now = sym_monotonic_ns();
	make_io(&b, 2);
	assert_int_equal(x->ops->run(x, 1, &b.io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 1 is not loaded");
	make_io(&b, 5);
	assert_int_equal(x->ops->run(x, 0, &b.io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "batch of 5");
	make_io(&b, 0);
	assert_int_equal(x->ops->run(x, 0, &b.io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	make_io(&b, 2);
	b.io.out_cap = 4;
	assert_int_equal(x->ops->run(x, 0, &b.io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "output buffers of 4 bytes");
	/* memory: the profile's, unknown stays unknown; bad sizes are refused */
	struct sym_model_memory mem;
	assert_int_equal(x->ops->memory(x, 0, 2, &mem), 0);
	assert_true(mem.static_mb < 0 && mem.dynamic_mb < 0);
	assert_int_equal(x->ops->memory(x, 0, 5, &mem), -EINVAL);
	assert_int_equal(x->ops->memory(x, 7, 1, &mem), -EINVAL);
	x->ops->destroy(x);
	/* by name; an unknown name and (in a build without CUDA) cuda are refused with a message */
	x = sym_executor_open("emulated", NULL, err, sizeof(err));
	assert_non_null(x);
	x->ops->destroy(x);
	assert_null(sym_executor_open("tpu", NULL, err, sizeof(err)));
	assert_contains(err, "unknown executor 'tpu' (expected emulated, cuda or torch)");
	if (!sym_executor_cuda_built()) {
		assert_null(sym_executor_open("cuda", NULL, err, sizeof(err)));
		assert_contains(err, "no CUDA support");
	}
	if (!sym_executor_torch_built()) { /* (with libtorch: tests/test_torch.c) */
		assert_null(sym_executor_open("torch", NULL, err, sizeof(err)));
		assert_contains(err, "torch executor: this build has no TorchScript support (libtorch-dev was not found "
				     "when it was configured");
	}
	sym_profile_finish(&p);
	/* the digest is FNV-1a 64 */
	assert_true(sym_exec_digest("", 0) == 0xcbf29ce484222325ull);
	assert_true(sym_exec_digest("a", 1) == 0xaf63dc4c8601ec8cull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timing),
		cmocka_unit_test(test_load_unload),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
