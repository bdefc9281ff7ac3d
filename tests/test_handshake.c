/* tests/test_handshake.c - the fabric's handshake state machine (runtime/handshake.h),
 * without a transport:
 *   - an honest exchange: H1 164 bytes, H2 220, H3 72; both finish, each knows the other's
 *     role, id and serial, and one side's send key is the other's receive key;
 *   - "any frontend" is reached by frontend 0; fresh ephemeral keys make fresh session keys;
 *   - refusals, by class and named: a responder that is not the one wanted (identity, by
 *     the responder; and by the initiator when the wanted field is rewritten on the way),
 *     another CA's credential (credential), a revoked serial (revoked), a wrong signature
 *     in H2 or H3 (credential), wrong lengths, types, versions and order (protocol).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <sodium.h>

#include "runtime/handshake.h"
#include "tests/testutil.h"

static uint8_t ca_pk[SYM_CRED_PK], ca_sk[SYM_CRED_SK];
static struct sym_cred fe0, fe1, be2;
static struct sym_revoked none;

static int setup(void **state)
{
	(void)state;
	sym_ca_mem(ca_pk, ca_sk);
	sym_cred_mem(ca_pk, ca_sk, SYM_CRED_FRONTEND, 0, 10, &fe0);
	sym_cred_mem(ca_pk, ca_sk, SYM_CRED_FRONTEND, 1, 11, &fe1);
	sym_cred_mem(ca_pk, ca_sk, SYM_CRED_BACKEND, 2, 12, &be2);
	return 0;
}

struct run {
	struct sym_hs i, r;
	int refusal;
	char why[200];
	int failed_at; /* 0: none; 1: H1 at r, 2: H2 at i, 3: H3 at r */
};

/* An exchange; tamper(k, msg, len) may alter message k (1..3) on the way. */
static void exchange(struct run *x, const struct sym_cred *ic, const struct sym_cred *rc,
		     const struct sym_revoked *irev, const struct sym_revoked *rrev, int want_role, uint32_t want_id,
		     void (*tamper)(int k, uint8_t *msg, size_t len))
{
	uint8_t m[SYM_HS_MAX];
	memset(x, 0, sizeof(*x));
	sym_hs_start(&x->i, ic, irev, true, want_role, want_id);
	sym_hs_start(&x->r, rc, rrev, false, 0, 0);
	assert_int_equal(sym_hs_out(&x->r, m, &x->refusal, x->why, sizeof(x->why)), 0); /* nothing due yet */
	long n = sym_hs_out(&x->i, m, &x->refusal, x->why, sizeof(x->why));
	assert_int_equal(n, SYM_HS_H1);
	uint8_t again[SYM_HS_MAX];
	assert_int_equal(sym_hs_out(&x->i, again, &x->refusal, x->why, sizeof(x->why)), 0); /* H1 goes once */
	if (tamper)
		tamper(1, m, (size_t)n);
	if (sym_hs_in(&x->r, m, (size_t)n, &x->refusal, x->why, sizeof(x->why))) {
		x->failed_at = 1;
		return;
	}
	n = sym_hs_out(&x->r, m, &x->refusal, x->why, sizeof(x->why));
	assert_int_equal(n, SYM_HS_H2);
	if (tamper)
		tamper(2, m, (size_t)n);
	if (sym_hs_in(&x->i, m, (size_t)n, &x->refusal, x->why, sizeof(x->why))) {
		x->failed_at = 2;
		return;
	}
	n = sym_hs_out(&x->i, m, &x->refusal, x->why, sizeof(x->why));
	assert_int_equal(n, SYM_HS_H3);
	assert_true(sym_hs_done(&x->i));
	if (tamper)
		tamper(3, m, (size_t)n);
	if (sym_hs_in(&x->r, m, (size_t)n, &x->refusal, x->why, sizeof(x->why))) {
		x->failed_at = 3;
		return;
	}
	assert_true(sym_hs_done(&x->r));
}

static void test_honest(void **state)
{
	(void)state;
	struct run x, y;
	exchange(&x, &be2, &fe0, &none, &none, SYM_CRED_FRONTEND, 0, NULL);
	assert_int_equal(x.failed_at, 0);
	assert_int_equal(x.i.peer_role, SYM_CRED_FRONTEND);
	assert_int_equal(x.i.peer_id, 0);
	assert_int_equal(x.i.peer_serial, 10);
	assert_int_equal(x.r.peer_role, SYM_CRED_BACKEND);
	assert_int_equal(x.r.peer_id, 2);
	assert_int_equal(x.r.peer_serial, 12);
	assert_memory_equal(x.i.tx_key, x.r.rx_key, SYM_HS_KX);
	assert_memory_equal(x.i.rx_key, x.r.tx_key, SYM_HS_KX);
	assert_memory_not_equal(x.i.tx_key, x.i.rx_key, SYM_HS_KX);
	/* any frontend; fresh keys each time */
	exchange(&y, &be2, &fe0, &none, &none, SYM_CRED_FRONTEND, SYM_HS_ANY_ID, NULL);
	assert_int_equal(y.failed_at, 0);
	assert_memory_not_equal(x.i.tx_key, y.i.tx_key, SYM_HS_KX);
	/* once done, anything more is out of order */
	uint8_t m[SYM_HS_MAX] = { 0 };
	assert_int_equal(sym_hs_in(&y.r, m, SYM_HS_H3, &y.refusal, y.why, sizeof(y.why)), -1);
	assert_int_equal(y.refusal, SYM_HS_PROTOCOL);
	assert_contains(y.why, "out of order");
	sym_hs_wipe(&y.i);
	uint8_t zero[SYM_HS_KX] = { 0 };
	assert_memory_equal(y.i.tx_key, zero, SYM_HS_KX);
}

static uint32_t rewrite_to;
static void rewrite_want(int k, uint8_t *m, size_t len)
{
	(void)len;
	if (k == 1)
		for (int b = 0; b < 4; b++)
			m[8 + SYM_HS_KX + SYM_CRED_WIRE + 4 + b] = (uint8_t)(rewrite_to >> (8 * b));
}

static int flip_k, flip_at;
static void flip(int k, uint8_t *m, size_t len)
{
	if (k == flip_k)
		m[flip_at < 0 ? (int)len + flip_at : flip_at] ^= 1;
}

static void test_refusals(void **state)
{
	(void)state;
	struct run x;
	/* wants frontend 1, reaches frontend 0: the responder refuses */
	exchange(&x, &be2, &fe0, &none, &none, SYM_CRED_FRONTEND, 1, NULL);
	assert_int_equal(x.failed_at, 1);
	assert_int_equal(x.refusal, SYM_HS_IDENTITY);
	assert_string_equal(x.why, "backend 2 wanted frontend 1, and this is frontend 0 (a relay?)");
	/* the wanted id rewritten on the way to 0 (a relay fixing it up): the responder answers,
	 * its signature covers the rewritten H1, which the initiator never sent */
	rewrite_to = 0;
	exchange(&x, &be2, &fe0, &none, &none, SYM_CRED_FRONTEND, 1, rewrite_want);
	assert_int_equal(x.failed_at, 2);
	assert_int_equal(x.refusal, SYM_HS_IDENTITY);
	assert_string_equal(x.why, "it is frontend 0, and frontend 1 was wanted there (a relay?)");
	/* and where the initiator wanted "any frontend" and the relay rewrote nothing useful:
	 * the initiator's transcript differs from the responder's */
	rewrite_to = SYM_HS_ANY_ID;
	exchange(&x, &be2, &fe1, &none, &none, SYM_CRED_FRONTEND, 1, rewrite_want);
	assert_int_equal(x.failed_at, 2);
	assert_int_equal(x.refusal, SYM_HS_CREDENTIAL);
	assert_string_equal(x.why, "frontend 1's signature of the handshake is wrong");
	/* wrong role */
	exchange(&x, &be2, &fe0, &none, &none, SYM_CRED_SCHEDD, 0, NULL);
	assert_int_equal(x.refusal, SYM_HS_IDENTITY);
	/* another CA's credential, on either side */
	uint8_t pk[SYM_CRED_PK], sk[SYM_CRED_SK];
	struct sym_cred other;
	sym_ca_mem(pk, sk);
	sym_cred_mem(pk, sk, SYM_CRED_BACKEND, 2, 12, &other);
	memcpy(other.ca_pk, ca_pk, SYM_CRED_PK);
	exchange(&x, &other, &fe0, &none, &none, SYM_CRED_FRONTEND, 0, NULL);
	assert_int_equal(x.failed_at, 1);
	assert_int_equal(x.refusal, SYM_HS_CREDENTIAL);
	assert_contains(x.why, "did not sign");
	sym_cred_mem(pk, sk, SYM_CRED_FRONTEND, 0, 10, &other);
	memcpy(other.ca_pk, ca_pk, SYM_CRED_PK);
	exchange(&x, &be2, &other, &none, &none, SYM_CRED_FRONTEND, 0, NULL);
	assert_int_equal(x.failed_at, 2);
	assert_int_equal(x.refusal, SYM_HS_CREDENTIAL);
	/* revoked, on either side */
	uint64_t s12 = 12, s10 = 10;
	struct sym_revoked r12 = { &s12, 1 }, r10 = { &s10, 1 };
	exchange(&x, &be2, &fe0, &none, &r12, SYM_CRED_FRONTEND, 0, NULL);
	assert_int_equal(x.failed_at, 1);
	assert_int_equal(x.refusal, SYM_HS_REVOKED);
	assert_string_equal(x.why, "backend 2's credential (serial 12) is revoked");
	exchange(&x, &be2, &fe0, &r10, &none, SYM_CRED_FRONTEND, 0, NULL);
	assert_int_equal(x.failed_at, 2);
	assert_int_equal(x.refusal, SYM_HS_REVOKED);
	/* one bit flipped in each message: its ephemeral key (in H1: the responder cannot tell, the
	 * initiator refuses its signature of the altered transcript), its credential, its signature */
	const int cases[][3] = { { 1, 8, 2 },	     { 1, 8 + SYM_HS_KX + 30, 1 }, { 2, 8, 2 },
				 { 2, -1, 2 },	     { 2, 8 + SYM_HS_KX + 9, 2 },  { 3, 8, 3 },
				 { 3, -1, 3 } };
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		flip_k = cases[k][0];
		flip_at = cases[k][1];
		exchange(&x, &be2, &fe0, &none, &none, SYM_CRED_FRONTEND, 0, flip);
		if (x.failed_at != cases[k][2])
			print_error("case %zu: failed at %d (%s)\n", k, x.failed_at, x.why);
		assert_int_equal(x.failed_at, cases[k][2]);
		assert_true(x.refusal == SYM_HS_CREDENTIAL || x.refusal == SYM_HS_IDENTITY);
	}
	/* protocol: lengths, type, version, order */
	struct sym_hs r;
	uint8_t m[SYM_HS_MAX];
	sym_hs_start(&r, &fe0, &none, false, 0, 0);
	struct sym_hs i;
	sym_hs_start(&i, &be2, &none, true, SYM_CRED_FRONTEND, 0);
	int why;
	char text[200];
	assert_int_equal(sym_hs_out(&i, m, &why, text, sizeof(text)), SYM_HS_H1);
	assert_int_equal(sym_hs_in(&r, m, SYM_HS_H1 - 1, &why, text, sizeof(text)), -1);
	assert_int_equal(why, SYM_HS_PROTOCOL);
	assert_string_equal(text, "it sent something else than the handshake");
	sym_hs_start(&r, &fe0, &none, false, 0, 0);
	m[5] = 1; /* version 1 */
	assert_int_equal(sym_hs_in(&r, m, SYM_HS_H1, &why, text, sizeof(text)), -1);
	assert_int_equal(why, SYM_HS_PROTOCOL);
	m[5] = 2;
	m[4] = 3; /* H3 first */
	sym_hs_start(&r, &fe0, &none, false, 0, 0);
	assert_int_equal(sym_hs_in(&r, m, SYM_HS_H1, &why, text, sizeof(text)), -1);
	assert_int_equal(why, SYM_HS_PROTOCOL);
	/* the initiator before it sent H1: anything is out of order */
	sym_hs_start(&i, &be2, &none, true, SYM_CRED_FRONTEND, 0);
	assert_int_equal(sym_hs_in(&i, m, SYM_HS_H2, &why, text, sizeof(text)), -1);
	assert_string_equal(text, "a handshake message out of order");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
