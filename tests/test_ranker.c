/* Ranker and indexed-heap tests: lowest free GPU id, smallest latest among
 * ready candidates, ties, updates and removals; send-ahead timing, one plan
 * ahead, late ends, ends before their TAKEN, offline and online; look-ahead:
 * the plan's caps (worked cases), when it plans, the measured waits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/policy.h"
#include "core/ranker.h"

/* Grants recorded from a ranker. */
struct rec {
	int n;
	struct sym_xmsg m[64];
};

static void rec_send(void *ctx, const struct sym_xmsg *m)
{
	struct rec *r = ctx;
	assert_true(r->n < 64);
	assert_int_equal(m->type, SYM_X_GRANT);
	r->m[r->n++] = *m;
}

/* Every message from a ranker (look-ahead sends PULLs beside GRANTs). */
struct all {
	int n;
	struct sym_xmsg m[64];
};

static void all_send(void *ctx, const struct sym_xmsg *m)
{
	struct all *a = ctx;
	assert_true(a->n < 64);
	a->m[a->n++] = *m;
}

static void defer(struct sym_ranker *r, int m, sym_time d, sym_time f, sym_time p, uint32_t seq)
{
	struct sym_xmsg x = { .type = SYM_X_DEFER, .model = m, .seq = seq, .t1 = d, .t2 = f, .t3 = p };
	sym_ranker_recv(r, &x);
}

static void ready(struct sym_ranker *r, int m, sym_time latest, sym_time delay, uint32_t seq)
{
	struct sym_xmsg x = { .type = SYM_X_READY, .model = m, .seq = seq, .t1 = latest, .t2 = delay };
	sym_ranker_recv(r, &x);
}

static void simple(struct sym_ranker *r, int type, int m, int g, sym_time t1, sym_time t2)
{
	struct sym_xmsg x = { .type = type, .model = m, .gpu = g, .t1 = t1, .t2 = t2 };
	sym_ranker_recv(r, &x);
}

/* Ready candidates take idle GPUs lowest id first, most urgent (smallest
 * latest, ties: lower model) first; a GPU given back is idle again. */
static void test_lowest_idle_gpu(void **state)
{
	(void)state;
	struct rec rc = { 0 };
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 5, NULL, 4, true, rec_send, &rc), 0);
	assert_int_equal(sym_ranker_idle_count(&r), 5);
	ready(&r, 0, 50, 0, 1);
	ready(&r, 1, 20, 0, 1);
	ready(&r, 2, 20, 0, 7); /* tie with model 1: lower id first */
	ready(&r, 3, 30, 0, 1);
	ready(&r, 0, 10, 0, 2); /* update: model 0 now most urgent */
	simple(&r, SYM_X_UNREADY, 3, 0, 0, 0);
	simple(&r, SYM_X_UNREADY, 3, 0, 0, 0); /* idempotent */
	sym_ranker_match(&r, 5);
	assert_int_equal(rc.n, 3);
	int want_m[3] = { 0, 1, 2 }, want_seq[3] = { 2, 1, 7 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rc.m[i].model, want_m[i]);
		assert_int_equal(rc.m[i].gpu, i);
		assert_int_equal(rc.m[i].seq, want_seq[i]);
		assert_int_equal(rc.m[i].t1, 5); /* idle: free now */
	}
	assert_int_equal(sym_ranker_idle_count(&r), 2);
	/* GPU 1 given back, GPU 0 taken: the next candidate gets GPU 1 */
	simple(&r, SYM_X_GIVEBACK, 1, 1, 0, 0);
	simple(&r, SYM_X_TAKEN, 0, 0, 5, 25);
	ready(&r, 3, 40, 0, 2);
	sym_ranker_match(&r, 6);
	assert_int_equal(rc.n, 4);
	assert_int_equal(rc.m[3].gpu, 1);
	assert_int_equal(sym_ranker_next_wakeup(&r), SYM_TIME_NEVER);
	sym_ranker_finish(&r);
}

/* Send-ahead: a GPU running a batch that ends at 100 takes the waiting
 * candidate (delay 10) once its plan sent then arrives after 100: at
 * 100 - 10 + 1; the grant says when the GPU frees. At most one plan ahead:
 * with it taken, the GPU is not eligible again until its running batch
 * ends, and a late end moves the plan (and the GPU's free time) later. */
static void test_send_ahead(void **state)
{
	(void)state;
	struct rec rc = { 0 };
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 2, true, rec_send, &rc), 0);
	ready(&r, 0, 0, 10, 1);
	sym_ranker_match(&r, 0);
	assert_int_equal(rc.n, 1);
	simple(&r, SYM_X_TAKEN, 0, 0, 10, 100); /* runs 10..100 */
	ready(&r, 1, 500, 10, 1);
	sym_ranker_match(&r, 50);
	assert_int_equal(rc.n, 1);
	assert_int_equal(sym_ranker_next_wakeup(&r), 91);
	sym_ranker_match(&r, 90);
	assert_int_equal(rc.n, 1);
	sym_ranker_match(&r, 91);
	assert_int_equal(rc.n, 2);
	assert_int_equal(rc.m[1].model, 1);
	assert_int_equal(rc.m[1].t1, 100);
	simple(&r, SYM_X_TAKEN, 1, 0, 101, 151); /* planned 101..151 */
	ready(&r, 0, 900, 10, 2);
	sym_ranker_match(&r, 145);
	assert_int_equal(rc.n, 2); /* one plan ahead already */
	assert_int_equal(sym_ranker_next_wakeup(&r), SYM_TIME_NEVER);
	/* the first batch ends late, at 120: the plan runs 120..170 */
	sym_ranker_gpu_done(&r, 0, 120);
	assert_int_equal(r.g[0].free_at, 170);
	assert_int_equal(sym_ranker_next_wakeup(&r), 161);
	sym_ranker_match(&r, 161);
	assert_int_equal(rc.n, 3);
	assert_int_equal(rc.m[2].t1, 170);
	sym_ranker_finish(&r);
}

/* Without send-ahead a running GPU is eligible only once its end is
 * reported; an end that overtakes its batch's TAKEN (threads) is counted. */
static void test_no_send_ahead(void **state)
{
	(void)state;
	struct rec rc = { 0 };
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 2, false, rec_send, &rc), 0);
	ready(&r, 0, 0, 10, 1);
	sym_ranker_match(&r, 0);
	simple(&r, SYM_X_TAKEN, 0, 0, 10, 100);
	ready(&r, 1, 500, 10, 1);
	sym_ranker_match(&r, 99);
	assert_int_equal(rc.n, 1);
	assert_int_equal(sym_ranker_next_wakeup(&r), SYM_TIME_NEVER);
	sym_ranker_gpu_done(&r, 0, 102);
	sym_ranker_match(&r, 102);
	assert_int_equal(rc.n, 2);
	/* its end comes before its TAKEN: still one batch, then idle */
	sym_ranker_gpu_done(&r, 0, 160);
	assert_int_equal(r.g[0].nout, -1);
	simple(&r, SYM_X_TAKEN, 1, 0, 112, 160);
	assert_int_equal(r.g[0].nout, 0);
	assert_int_equal(sym_ranker_idle_count(&r), 1);
	sym_ranker_finish(&r);
}

/* The lowest id among the eligible: an idle GPU 3 against a pending GPU 1
 * (eligible) goes to GPU 1; GPUs of another kind are never granted. */
static void test_lowest_eligible_and_kinds(void **state)
{
	(void)state;
	struct rec rc = { 0 };
	struct sym_ranker r;
	int kinds[4] = { 1, 0, 1, 0 };
	assert_int_equal(sym_ranker_init(&r, 0, 4, kinds, 2, true, rec_send, &rc), 0);
	assert_int_equal(sym_ranker_idle_count(&r), 2);
	ready(&r, 0, 0, 5, 1);
	sym_ranker_match(&r, 0);
	assert_int_equal(rc.m[0].gpu, 1);
	simple(&r, SYM_X_TAKEN, 0, 1, 5, 50);
	ready(&r, 1, 100, 5, 1);
	sym_ranker_match(&r, 46); /* 50 < 46 + 5: GPU 1 eligible, lower than idle GPU 3 */
	assert_int_equal(rc.n, 2);
	assert_int_equal(rc.m[1].gpu, 1);
	assert_int_equal(rc.m[1].t1, 50);
	sym_ranker_finish(&r);
}

/* Offline: no grant; a grant out when a GPU goes offline comes back lost
 * (its TAKEN counts for nothing); online makes it idle. */
static void test_offline_online(void **state)
{
	(void)state;
	struct rec rc = { 0 };
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 1, true, rec_send, &rc), 0);
	sym_ranker_gpu_offline(&r, 0, 1);
	ready(&r, 0, 100, 0, 1);
	sym_ranker_match(&r, 0);
	assert_int_equal(rc.n, 0);
	sym_ranker_gpu_online(&r, 0, 2, 5);
	sym_ranker_match(&r, 5);
	assert_int_equal(rc.n, 1);
	assert_int_equal(rc.m[0].epoch, 2);
	sym_ranker_gpu_offline(&r, 0, 3);
	simple(&r, SYM_X_TAKEN, 0, 0, 5, 50);
	assert_int_equal(r.g[0].nout, 0);
	sym_ranker_gpu_online(&r, 0, 4, 60);
	ready(&r, 0, 100, 0, 2);
	sym_ranker_match(&r, 60);
	assert_int_equal(rc.n, 2);
	assert_int_equal(rc.m[1].epoch, 4);
	sym_ranker_finish(&r);
}

static const struct sym_lookahead plan_la = { .plan = true, .margin = 1, .replan = 0, .wait = false,
					       .wait_quantile = 0.99 };

/* The plan, worked (ms): one GPU, idle; A (model 0) defers with deadline 30,
 * expecting to be due at 23 with a batch of le 6; B (model 1) with 32, 25, 6.
 * Latest deadline first: B goes on the GPU at 25 (free by then: on time);
 * A must end a batch length (margin 1) before that, by 19, so start by 13:
 * A is pulled to 13 (PULL, the seq of its DEFER); B has no cap. With a
 * second idle GPU each has one of its own and the cap goes (PULL with
 * SYM_TIME_NEVER). */
static void test_plan_caps(void **state)
{
	(void)state;
	struct all a = { 0 };
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 2, NULL, 2, true, all_send, &a), 0);
	assert_int_equal(sym_ranker_set_lookahead(&r, &plan_la), 0);
	sym_ranker_gpu_offline(&r, 1, 1); /* one GPU to begin with */
	defer(&r, 0, 30 * SYM_MS, 23 * SYM_MS, 6 * SYM_MS, 7);
	defer(&r, 1, 32 * SYM_MS, 25 * SYM_MS, 6 * SYM_MS, 3);
	sym_ranker_match(&r, 2 * SYM_MS);
	assert_int_equal(a.n, 0); /* nothing ready: no grant */
	assert_true(sym_ranker_settle(&r, 2 * SYM_MS));
	assert_int_equal(a.n, 1);
	assert_int_equal(a.m[0].type, SYM_X_PULL);
	assert_int_equal(a.m[0].model, 0);
	assert_int_equal(a.m[0].seq, 7);
	assert_int_equal(a.m[0].t1, 13 * SYM_MS);
	assert_false(sym_ranker_settle(&r, 2 * SYM_MS)); /* nothing changed since */
	/* the second GPU comes online (a relaxation: no plan for it alone), then a new head for B
	 * (a plan): two idle GPUs for two candidates, the cap goes */
	sym_ranker_gpu_online(&r, 1, 2, 3 * SYM_MS);
	assert_false(sym_ranker_settle(&r, 3 * SYM_MS));
	defer(&r, 1, 33 * SYM_MS, 26 * SYM_MS, 6 * SYM_MS, 4);
	assert_true(sym_ranker_settle(&r, 4 * SYM_MS));
	assert_int_equal(a.n, 2);
	assert_int_equal(a.m[1].model, 0);
	assert_int_equal(a.m[1].t1, SYM_TIME_NEVER);
	assert_int_equal(r.pstats.fast, 1);
	sym_ranker_finish(&r);
}

/* A candidate that fits nowhere (its only GPU is busy past its latest start)
 * is pulled to now; a plan waits while a grant is outstanding; with replan
 * the next plan waits for that many of the shortest batch planned, and the
 * ranker's wakeup says when. */
static void test_plan_when(void **state)
{
	(void)state;
	struct all a = { 0 };
	struct sym_ranker r;
	struct sym_lookahead la = plan_la;
	la.replan = 1;
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 3, false, all_send, &a), 0);
	assert_int_equal(sym_ranker_set_lookahead(&r, &la), 0);
	ready(&r, 2, 0, 0, 1);
	sym_ranker_match(&r, 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.m[0].type, SYM_X_GRANT);
	defer(&r, 0, 30 * SYM_MS, 20 * SYM_MS, 6 * SYM_MS, 5);
	defer(&r, 1, 40 * SYM_MS, 30 * SYM_MS, 6 * SYM_MS, 5);
	assert_false(sym_ranker_settle(&r, 0)); /* the grant is out */
	simple(&r, SYM_X_TAKEN, 2, 0, 0, 100 * SYM_MS); /* the GPU is busy until 100 */
	assert_true(sym_ranker_settle(&r, 1 * SYM_MS));
	assert_int_equal(a.n, 3); /* both pulled to now: neither can start by its latest */
	for (int i = 1; i < 3; i++) {
		assert_int_equal(a.m[i].type, SYM_X_PULL);
		assert_int_equal(a.m[i].t1, 1 * SYM_MS);
	}
	assert_int_equal(r.pstats.asap, 2);
	/* a new head for model 1: the next plan no sooner than 1 + 6 ms (replan 1, le 6) */
	defer(&r, 1, 41 * SYM_MS, 31 * SYM_MS, 6 * SYM_MS, 6);
	assert_false(sym_ranker_settle(&r, 2 * SYM_MS));
	assert_int_equal(sym_ranker_next_wakeup(&r), 7 * SYM_MS);
	assert_true(sym_ranker_settle(&r, 7 * SYM_MS));
	assert_int_equal(a.n, 4);
	assert_int_equal(a.m[3].model, 1);
	assert_int_equal(a.m[3].t1, 7 * SYM_MS);
	assert_int_equal(sym_ranker_next_wakeup(&r), SYM_TIME_NEVER);
	/* bad settings */
	la.margin = -1;
	assert_int_equal(sym_ranker_set_lookahead(&r, &la), -EINVAL);
	la.margin = 1;
	la.wait = true;
	la.wait_quantile = 1;
	assert_int_equal(sym_ranker_set_lookahead(&r, &la), -EINVAL);
	sym_ranker_finish(&r);
}

/* The measured waits: a wait above the estimate moves it up by a step of a
 * twentieth of it times the quantile, one at or under it down by (1 - q);
 * a lost head moves wait_safe four times as far (and wait by the time it
 * waited); the samples between two settles count against the estimates as
 * they stood, in any order; GRANTs and PULLs carry them. */
static void test_measured_wait(void **state)
{
	(void)state;
	struct sym_lookahead la = { .plan = false, .wait = true, .wait_quantile = 0.9 };
	struct all a = { 0 }, b = { 0 };
	struct sym_ranker r, s;
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 4, false, all_send, &a), 0);
	assert_int_equal(sym_ranker_init(&s, 0, 1, NULL, 4, false, all_send, &b), 0);
	assert_int_equal(sym_ranker_set_lookahead(&r, &la), 0);
	assert_int_equal(sym_ranker_set_lookahead(&s, &la), 0);
	assert_true(r.wait == SYM_WAIT_START && r.wait_safe == SYM_WAIT_START);
	/* r: model 0 granted and taken after waiting 3 ms; model 1 reports a lost head that
	 * waited 0.5 ms. s: the same, in the other order. */
	ready(&r, 0, 0, 0, 1);
	sym_ranker_match(&r, 0);
	struct sym_xmsg t = { .type = SYM_X_TAKEN, .model = 0, .gpu = 0, .t1 = 0, .t2 = 1, .t3 = 3 * SYM_MS };
	sym_ranker_recv(&r, &t);
	struct sym_xmsg u = { .type = SYM_X_UNREADY, .model = 1, .epoch = 1, .t4 = SYM_MS / 2 };
	sym_ranker_recv(&r, &u);
	sym_ranker_recv(&s, &u);
	ready(&s, 0, 0, 0, 1);
	sym_ranker_match(&s, 0);
	sym_ranker_recv(&s, &t);
	sym_ranker_settle(&r, 1);
	sym_ranker_settle(&s, 1);
	/* wait: 3 ms above (+0.9 step), 0.5 ms under (-0.1 step): 1 ms + 0.8 * 50 us = 1.04 ms;
	 * wait_safe: 3 ms above and a lost head (four steps up): 1 ms + 5 * 0.9 * 50 us = 1.225 ms */
	assert_true(fabs(r.wait - 1.04e6) < 1e-3 && fabs(r.wait_safe - 1.225e6) < 1e-3);
	assert_true(r.wait == s.wait && r.wait_safe == s.wait_safe);
	/* the next grant carries them */
	sym_ranker_gpu_done(&r, 0, 2);
	ready(&r, 2, 10, 0, 1);
	sym_ranker_match(&r, 2);
	assert_int_equal(a.m[a.n - 1].type, SYM_X_GRANT);
	assert_int_equal(a.m[a.n - 1].t2, (sym_time)r.wait);
	assert_int_equal(a.m[a.n - 1].t3, (sym_time)r.wait_safe);
	/* without the measured wait they are -1 */
	struct all c = { 0 };
	struct sym_ranker q;
	assert_int_equal(sym_ranker_init(&q, 0, 1, NULL, 1, false, all_send, &c), 0);
	ready(&q, 0, 0, 0, 1);
	sym_ranker_match(&q, 0);
	assert_int_equal(c.m[0].t2, -1);
	sym_ranker_finish(&r);
	sym_ranker_finish(&s);
	sym_ranker_finish(&q);
}

static void test_init_rejects(void **state)
{
	(void)state;
	struct rec rc = { 0 };
	struct sym_ranker r;
	assert_int_equal(sym_ranker_init(&r, 0, 0, NULL, 1, true, rec_send, &rc), -EINVAL);
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 0, true, rec_send, &rc), -EINVAL);
	assert_int_equal(sym_ranker_init(&r, 0, 1, NULL, 1, true, NULL, &rc), -EINVAL);
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
		cmocka_unit_test(test_lowest_idle_gpu),
		cmocka_unit_test(test_send_ahead),
		cmocka_unit_test(test_no_send_ahead),
		cmocka_unit_test(test_lowest_eligible_and_kinds),
		cmocka_unit_test(test_offline_online),
		cmocka_unit_test(test_plan_caps),
		cmocka_unit_test(test_plan_when),
		cmocka_unit_test(test_measured_wait),
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test(test_iheap_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
