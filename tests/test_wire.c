/* tests/test_wire.c - the runtime's wire format (runtime/wire.h).
 *
 *   - every message type round-trips field for field, and its encoded size is sym_wire_size;
 *   - every strict prefix of every message decodes as "incomplete" (0), never as a message or an
 *     error, except that a wrong magic or version is refused as soon as its bytes arrive;
 *   - the scheduler term round-trips in every message that carries one, and is refused where none may be;
 *   - every bound is enforced on decode (magic, version, type, payload size, term, role, name,
 *     counts, budgets, statuses, inconsistent lengths, trailing bytes) with a reason naming it;
 *   - encode refuses out-of-bounds messages and short buffers;
 *   - two messages back to back decode one after the other;
 *   - a deterministic fuzz of random byte flips never crashes and never reads out of bounds
 *     (run under ASan in CI).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/wire.h"
#include "testutil.h"

static uint8_t buf[1 << 16];

static const struct sym_wire_input INPUTS[3] = {
	{ 1, 100, 0x1000, 150000, 0xabcdef0123456789ull },
	{ 2, 101, 0x2000, 1, 7 },
	{ 1, 102, 0xffffffffffffffffull, 0, 0 },
};
static const uint16_t MODELS[3] = { 0, 5, 65535 };
static const uint8_t DATA[5] = { 1, 2, 3, 0, 255 };
static const char TOKEN[] = "first-token-0123456789";

/* One of each type, with values that exercise every byte of every field. */
static struct sym_msg sample(int type)
{
	struct sym_msg m;
	memset(&m, 0, sizeof(m));
	m.type = (enum sym_msg_type)type;
	/* a scheduler term in every byte, except where no scheduler is involved */
	if (type != SYM_MSG_REQUEST && type != SYM_MSG_ANSWER && type != SYM_MSG_RESULT && type != SYM_MSG_GRANT)
		m.term = 0x8a000000u + (uint32_t)type * 0x10101u;
	switch (type) {
	case SYM_MSG_HELLO:
		m.u.hello.role = SYM_ROLE_BACKEND;
		m.u.hello.id = 0xdeadbeef;
		strcpy(m.u.hello.kind, "a100");
		m.u.hello.nmodels = 3;
		m.u.hello.part = SYM_WIRE_MAX_PARTS; /* sub-cluster 31 */
		m.u.hello.token = TOKEN;
		m.u.hello.token_len = (uint8_t)strlen(TOKEN);
		break;
	case SYM_MSG_HEARTBEAT:
		m.u.heartbeat.id = 7;
		m.u.heartbeat.seq = 0x0102030405060708ull;
		break;
	case SYM_MSG_REQUEST:
		m.u.request.req_id = 42;
		m.u.request.model = 3;
		m.u.request.budget_ns = 25000000;
		m.u.request.len = sizeof(DATA);
		m.u.request.data = DATA;
		break;
	case SYM_MSG_META:
		m.u.meta.req_id = 0x8000000000000001ull;
		m.u.meta.model = 65535;
		m.u.meta.frontend = 2;
		m.u.meta.budget_ns = 24999999;
		m.u.meta.addr = 0x7fff00001234ull;
		m.u.meta.len = 150000;
		m.u.meta.key = 99;
		break;
	case SYM_MSG_PLAN:
		m.u.plan.batch_id = 5;
		m.u.plan.gpu = 3;
		m.u.plan.model = 1;
		m.u.plan.start_in_ns = 1500000;
		m.u.plan.latest_in_ns = 11500000;
		m.u.plan.n = 3;
		break;
	case SYM_MSG_DONE:
		m.u.done.batch_id = 5;
		m.u.done.gpu = 3;
		m.u.done.status = SYM_WIRE_BACKEND_FAILED;
		m.u.done.ran_ns = 21900000;
		m.u.done.ago_ns = 42000;
		break;
	case SYM_MSG_RESULT:
		m.u.result.req_id = 100;
		m.u.result.status = SYM_WIRE_OK;
		m.u.result.batch = 17;
		m.u.result.batch_id = 0x1122334455667788ull;
		m.u.result.len = sizeof(DATA);
		m.u.result.data = DATA;
		break;
	case SYM_MSG_DROP:
		m.u.drop.req_id = 101;
		m.u.drop.reason = SYM_WIRE_DROPPED_EARLY;
		break;
	case SYM_MSG_ANSWER:
		m.u.answer.req_id = 42;
		m.u.answer.status = SYM_WIRE_DROPPED_EXPIRED;
		break;
	case SYM_MSG_BYE:
		m.u.bye.role = SYM_ROLE_BACKEND;
		m.u.bye.id = 12;
		break;
	case SYM_MSG_STATUS:
		m.u.status.gpus_online = 3;
		m.u.status.gpus_max = 8;
		m.u.status.draining = 1;
		m.u.status.noff = 2; /* MODELS[0..2) */
		break;
	case SYM_MSG_GRANT:
		m.u.grant.frontend = 2;
		m.u.grant.key = 0xfedcba9876543210ull;
		for (int i = 0; i < 32; i++)
			m.u.grant.seal_key[i] = (uint8_t)(200 + i);
		m.u.grant.encrypted = 1;
		break;
	case SYM_MSG_LOAD:
		m.u.load.model = 1023;
		m.u.load.op = SYM_WIRE_UNLOAD;
		break;
	case SYM_MSG_LOADED:
		m.u.loaded.model = 7;
		m.u.loaded.op = SYM_WIRE_LOAD;
		m.u.loaded.status = SYM_WIRE_BACKEND_FAILED;
		m.u.loaded.took_ns = 1234567890;
		m.u.loaded.why = "does not fit";
		m.u.loaded.why_len = 12;
		break;
	case SYM_MSG_MODEL:
		m.u.model.model = 65534;
		m.u.model.name = "resnet-18_v2.pt";
		m.u.model.name_len = 15;
		break;
	}
	return m;
}

static size_t enc(const struct sym_msg *m)
{
	size_t n = sym_wire_encode(m, INPUTS, MODELS, buf, sizeof(buf));
	assert_true(n >= SYM_WIRE_HEADER);
	assert_int_equal(n, sym_wire_size(m));
	return n;
}

static void test_round_trip(void **state)
{
	(void)state;
	for (int t = SYM_MSG_HELLO; t < SYM_MSG_NTYPES; t++) {
		struct sym_msg m = sample(t), d;
		size_t n = enc(&m);
		char err[256] = "";
		assert_int_equal(sym_wire_decode(buf, n, &d, err, sizeof(err)), (long)n);
		assert_int_equal(d.type, t);
		assert_int_equal(d.term, m.term);
		switch (t) {
		case SYM_MSG_HELLO:
			assert_int_equal(d.u.hello.role, SYM_ROLE_BACKEND);
			assert_int_equal(d.u.hello.id, 0xdeadbeef);
			assert_string_equal(d.u.hello.kind, "a100");
			assert_int_equal(d.u.hello.nmodels, 3);
			for (uint16_t i = 0; i < 3; i++)
				assert_int_equal(sym_wire_hello_model(&d, i), MODELS[i]);
			assert_int_equal(d.u.hello.part, SYM_WIRE_MAX_PARTS);
			assert_int_equal(d.u.hello.token_len, strlen(TOKEN));
			assert_memory_equal(d.u.hello.token, TOKEN, strlen(TOKEN));
			break;
		case SYM_MSG_HEARTBEAT:
			assert_int_equal(d.u.heartbeat.id, 7);
			assert_true(d.u.heartbeat.seq == 0x0102030405060708ull);
			break;
		case SYM_MSG_REQUEST:
			assert_int_equal(d.u.request.req_id, 42);
			assert_int_equal(d.u.request.model, 3);
			assert_true(d.u.request.budget_ns == 25000000);
			assert_int_equal(d.u.request.len, sizeof(DATA));
			assert_memory_equal(d.u.request.data, DATA, sizeof(DATA));
			break;
		case SYM_MSG_META:
			assert_true(d.u.meta.req_id == 0x8000000000000001ull);
			assert_int_equal(d.u.meta.model, 65535);
			assert_int_equal(d.u.meta.frontend, 2);
			assert_true(d.u.meta.budget_ns == 24999999);
			assert_true(d.u.meta.addr == 0x7fff00001234ull);
			assert_int_equal(d.u.meta.len, 150000);
			assert_int_equal(d.u.meta.key, 99);
			break;
		case SYM_MSG_PLAN:
			assert_int_equal(d.u.plan.batch_id, 5);
			assert_int_equal(d.u.plan.gpu, 3);
			assert_int_equal(d.u.plan.model, 1);
			assert_true(d.u.plan.start_in_ns == 1500000);
			assert_true(d.u.plan.latest_in_ns == 11500000);
			assert_int_equal(d.u.plan.n, 3);
			for (uint16_t i = 0; i < 3; i++) {
				struct sym_wire_input in;
				sym_wire_plan_input(&d, i, &in);
				assert_int_equal(in.frontend, INPUTS[i].frontend);
				assert_true(in.req_id == INPUTS[i].req_id);
				assert_true(in.addr == INPUTS[i].addr);
				assert_int_equal(in.len, INPUTS[i].len);
				assert_true(in.key == INPUTS[i].key);
			}
			break;
		case SYM_MSG_DONE:
			assert_int_equal(d.u.done.batch_id, 5);
			assert_int_equal(d.u.done.gpu, 3);
			assert_int_equal(d.u.done.status, SYM_WIRE_BACKEND_FAILED);
			assert_true(d.u.done.ran_ns == 21900000);
			assert_true(d.u.done.ago_ns == 42000);
			break;
		case SYM_MSG_RESULT:
			assert_int_equal(d.u.result.req_id, 100);
			assert_int_equal(d.u.result.status, SYM_WIRE_OK);
			assert_int_equal(d.u.result.batch, 17);
			assert_true(d.u.result.batch_id == 0x1122334455667788ull);
			assert_int_equal(d.u.result.len, sizeof(DATA));
			assert_memory_equal(d.u.result.data, DATA, sizeof(DATA));
			break;
		case SYM_MSG_DROP:
			assert_int_equal(d.u.drop.req_id, 101);
			assert_int_equal(d.u.drop.reason, SYM_WIRE_DROPPED_EARLY);
			break;
		case SYM_MSG_ANSWER:
			assert_int_equal(d.u.answer.req_id, 42);
			assert_int_equal(d.u.answer.status, SYM_WIRE_DROPPED_EXPIRED);
			assert_int_equal(d.u.answer.len, 0);
			break;
		case SYM_MSG_BYE:
			assert_int_equal(d.u.bye.role, SYM_ROLE_BACKEND);
			assert_int_equal(d.u.bye.id, 12);
			break;
		case SYM_MSG_STATUS:
			assert_int_equal(d.u.status.gpus_online, 3);
			assert_int_equal(d.u.status.gpus_max, 8);
			assert_int_equal(d.u.status.draining, 1);
			assert_int_equal(d.u.status.noff, 2);
			assert_int_equal(sym_wire_status_model(&d, 0), MODELS[0]);
			assert_int_equal(sym_wire_status_model(&d, 1), MODELS[1]);
			break;
		case SYM_MSG_GRANT:
			assert_int_equal(d.u.grant.frontend, 2);
			assert_true(d.u.grant.key == 0xfedcba9876543210ull);
			for (int i = 0; i < 32; i++)
				assert_int_equal(d.u.grant.seal_key[i], 200 + i);
			assert_int_equal(d.u.grant.encrypted, 1);
			break;
		case SYM_MSG_LOAD:
			assert_int_equal(d.u.load.model, 1023);
			assert_int_equal(d.u.load.op, SYM_WIRE_UNLOAD);
			break;
		case SYM_MSG_LOADED:
			assert_int_equal(d.u.loaded.model, 7);
			assert_int_equal(d.u.loaded.op, SYM_WIRE_LOAD);
			assert_int_equal(d.u.loaded.status, SYM_WIRE_BACKEND_FAILED);
			assert_true(d.u.loaded.took_ns == 1234567890);
			assert_int_equal(d.u.loaded.why_len, 12);
			assert_memory_equal(d.u.loaded.why, "does not fit", 12);
			break;
		case SYM_MSG_MODEL:
			assert_int_equal(d.u.model.model, 65534);
			assert_int_equal(d.u.model.name_len, 15);
			assert_memory_equal(d.u.model.name, "resnet-18_v2.pt", 15);
			break;
		}
	}
	/* the header bytes are exactly as documented */
	struct sym_msg m = sample(SYM_MSG_DROP);
	enc(&m);
	const uint8_t head[16] = { 'S', 'Y', 'M', '1', 8, 0, SYM_MSG_DROP, 0, 9, 0, 0, 0,
				   0x08, 0x08, 0x08, 0x8a }; /* the term: 0x8a080808, little-endian */
	assert_memory_equal(buf, head, 16);
	/* a RESULT (version 7): id 8, status 1, batch size 2, length 4, the batch's id 8, then the data */
	m = sample(SYM_MSG_RESULT);
	assert_int_equal(enc(&m), 16 + 23 + sizeof(DATA));
	const uint8_t bid[8] = { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
	assert_memory_equal(buf + 16 + 15, bid, 8);
	assert_memory_equal(buf + 16 + 23, DATA, sizeof(DATA));
	/* a HELLO (version 8): role, id, the kind's length and bytes, 3 models, then the sub-cluster it
	 * joins plus one, then the token's length and bytes */
	m = sample(SYM_MSG_HELLO);
	assert_int_equal(enc(&m), 16 + 10 + 4 + 6 + strlen(TOKEN));
	assert_int_equal(buf[16 + 18], SYM_WIRE_MAX_PARTS);
	assert_int_equal(buf[16 + 19], strlen(TOKEN));
}

/* The scheduler term (wire version 5): it round-trips at its extremes in every message a
 * scheduler sends or reads, with the standby's role in a scheduler's hello; a term on a
 * message no scheduler sends or reads (request, answer, result, grant) is neither encoded nor
 * decoded, and the decoder's reason names it. */
static void poke(size_t off, uint64_t v, int bytes);
static void expect_bad(size_t n, const char *msg);

static void test_term(void **state)
{
	(void)state;
	const uint32_t terms[] = { 0, 1, 2, 0x7fffffffu, UINT32_MAX };
	for (int t = SYM_MSG_HELLO; t < SYM_MSG_NTYPES; t++) {
		bool termless = t == SYM_MSG_REQUEST || t == SYM_MSG_ANSWER || t == SYM_MSG_RESULT || t == SYM_MSG_GRANT;
		for (size_t k = 0; k < sizeof(terms) / sizeof(terms[0]); k++) {
			struct sym_msg m = sample(t), d;
			m.term = terms[k];
			if (termless && m.term) {
				assert_int_equal(sym_wire_size(&m), 0);
				assert_int_equal(sym_wire_encode(&m, INPUTS, MODELS, buf, sizeof(buf)), 0);
				m.term = 0;
				size_t n = enc(&m);
				poke(12, terms[k], 4);
				char want[160];
				snprintf(want, sizeof(want), "%s: scheduler term %u on a message no scheduler sends or reads",
					 sym_wire_type_name(t), terms[k]);
				expect_bad(n, want);
				continue;
			}
			size_t n = enc(&m);
			assert_int_equal(buf[12] | buf[13] << 8 | buf[14] << 16 | (uint32_t)buf[15] << 24, terms[k]);
			assert_int_equal(sym_wire_decode(buf, n, &d, NULL, 0), (long)n);
			assert_int_equal(d.term, terms[k]);
		}
	}
	/* the two schedulers' hellos: the active one's and the standby's */
	int roles[] = { SYM_ROLE_SCHEDD, SYM_ROLE_STANDBY };
	for (int i = 0; i < 2; i++) {
		struct sym_msg m = { .type = SYM_MSG_HELLO, .term = 41u + (uint32_t)i }, d;
		m.u.hello.role = (uint8_t)roles[i];
		m.u.hello.id = (uint32_t)i;
		size_t n = enc(&m);
		assert_int_equal(sym_wire_decode(buf, n, &d, NULL, 0), (long)n);
		assert_int_equal(d.u.hello.role, roles[i]);
		assert_int_equal(d.u.hello.id, i);
		assert_int_equal(d.term, 41 + i);
	}
	/* the active scheduler's heartbeat to the standby: its clock in seq, sent back as it came */
	struct sym_msg h = { .type = SYM_MSG_HEARTBEAT, .term = 3 }, d;
	h.u.heartbeat.id = 1;
	h.u.heartbeat.seq = (uint64_t)INT64_MAX;
	size_t n = enc(&h);
	assert_int_equal(sym_wire_decode(buf, n, &d, NULL, 0), (long)n);
	assert_true(d.u.heartbeat.seq == (uint64_t)INT64_MAX);
	assert_int_equal(d.term, 3);
}

static void test_truncation(void **state)
{
	(void)state;
	for (int t = SYM_MSG_HELLO; t < SYM_MSG_NTYPES; t++) {
		struct sym_msg m = sample(t), d;
		size_t n = enc(&m);
		for (size_t k = 0; k < n; k++) {
			char err[256] = "";
			long rc = sym_wire_decode(buf, k, &d, err, sizeof(err));
			if (rc != 0) {
				print_error("%s cut to %zu of %zu bytes: got %ld (%s), want 0 (incomplete)\n",
					    sym_wire_type_name(t), k, n, rc, err);
				fail();
			}
		}
	}
}

/* Sets the little-endian field at off of the encoded message. */
static void poke(size_t off, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		buf[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void expect_bad(size_t n, const char *msg)
{
	struct sym_msg d;
	char err[256] = "";
	long rc = sym_wire_decode(buf, n, &d, err, sizeof(err));
	if (rc != -EPROTO) {
		print_error("want -EPROTO ('%s'), got %ld\n", msg, rc);
		fail();
	}
	assert_contains(err, msg);
}

static void test_bounds(void **state)
{
	(void)state;
	struct sym_msg m;
	size_t n;
#define FRESH(t) (m = sample(t), n = enc(&m))
	FRESH(SYM_MSG_DROP);
	buf[0] = 'X';
	expect_bad(n, "bad magic");
	expect_bad(4, "bad magic"); /* refused as soon as the magic is there */
	FRESH(SYM_MSG_DROP);
	poke(4, 2, 2);
	expect_bad(6, "wire version 2");
	poke(4, 1, 2);
	expect_bad(6, "wire version 1");
	FRESH(SYM_MSG_DROP);
	poke(6, 0, 2);
	expect_bad(n, "unknown message type 0");
	poke(6, SYM_MSG_NTYPES, 2);
	expect_bad(n, "unknown message type");
	FRESH(SYM_MSG_DROP);
	poke(8, SYM_WIRE_MAX_PAYLOAD + 1, 4);
	expect_bad(16, "at most");
	FRESH(SYM_MSG_GRANT);
	poke(12, 1, 4);
	expect_bad(n, "grant: scheduler term 1 on a message no scheduler sends or reads (want 0)");
	/* grant: an encrypted flag not 0/1 (after frontend, key and the seal key: byte 16 + 44) */
	FRESH(SYM_MSG_GRANT);
	poke(16 + 44, 2, 1);
	expect_bad(n, "encrypted flag 2");
	/* bye: a role that does not exist; status: more GPUs online than the most, a flag not 0/1 */
	FRESH(SYM_MSG_BYE);
	poke(16, 0, 1);
	expect_bad(n, "unknown role 0");
	poke(16, SYM_ROLE_NROLES, 1);
	expect_bad(n, "unknown role");
	FRESH(SYM_MSG_STATUS);
	poke(16, 9, 4);
	expect_bad(n, "9 GPUs online of at most 8");
	FRESH(SYM_MSG_STATUS);
	poke(24, 2, 1);
	expect_bad(n, "draining flag 2");
	/* load: an operation that is neither load nor unload; loaded: a status other than ok/failed, a negative time */
	FRESH(SYM_MSG_LOAD);
	poke(18, 0, 1);
	expect_bad(n, "unknown operation 0");
	poke(18, 3, 1);
	expect_bad(n, "unknown operation 3");
	FRESH(SYM_MSG_LOADED);
	poke(19, SYM_WIRE_DROPPED_EXPIRED, 1);
	expect_bad(n, "is not ok or failed");
	FRESH(SYM_MSG_LOADED);
	poke(20, (uint64_t)-5, 8);
	expect_bad(n, "outside 0..1 h");
	m.type = SYM_MSG_LOAD;
	m.u.load.op = 0;
	assert_int_equal(sym_wire_size(&m), 0); /* nor encoded */
	FRESH(SYM_MSG_DROP);
	poke(24, SYM_WIRE_UNAVAILABLE, 1);
	char e2[64];
	assert_int_equal(sym_wire_decode(buf, n, &m, e2, sizeof(e2)), (long)n); /* schedd shutting down drops with it */
	/* fixed-size payloads: one byte more or less */
	int fixed[] = { SYM_MSG_HEARTBEAT, SYM_MSG_META, SYM_MSG_DONE, SYM_MSG_DROP, SYM_MSG_LOAD };
	for (size_t i = 0; i < 5; i++) {
		FRESH(fixed[i]);
		uint32_t plen = (uint32_t)(n - 16);
		poke(8, plen + 1, 4);
		buf[n] = 0;
		expect_bad(n + 1, "want");
		poke(8, plen - 1, 4);
		expect_bad(n - 1, "want");
	}
	/* loaded: its reason's length must be the rest of the payload, printable */
	FRESH(SYM_MSG_LOADED);
	poke(8, n - 16 + 1, 4);
	buf[n] = 'x';
	expect_bad(n + 1, "payload of 26 bytes, want 25");
	FRESH(SYM_MSG_LOADED);
	poke(8, 12, 4);
	expect_bad(28, "payload of 12 bytes, at least 13");
	FRESH(SYM_MSG_LOADED);
	buf[n - 1] = '\n';
	expect_bad(n, "byte 11 of its reason is not printable");
	/* model: a name a repository's directory could not carry (a dot first, a slash, empty,
	 * 41 bytes), or a length the payload does not hold; nor encoded */
	const char *bad_names[] = { ".hidden", "a/b", "", "abcdefghijklmnopqrstuvwxyzabcdefghijklmno" };
	for (size_t i = 0; i < 4; i++) {
		FRESH(SYM_MSG_MODEL);
		size_t nl = strlen(bad_names[i]);
		memcpy(buf + 19, bad_names[i], nl);
		poke(18, nl, 1);
		poke(8, 3 + nl, 4);
		expect_bad(16 + 3 + nl, "not a model name");
		struct sym_msg x = sample(SYM_MSG_MODEL);
		x.u.model.name = bad_names[i];
		x.u.model.name_len = (uint8_t)nl;
		assert_int_equal(sym_wire_size(&x), 0);
	}
	FRESH(SYM_MSG_MODEL);
	poke(18, 16, 1);
	expect_bad(n, "payload of 18 bytes, want 19");
	/* status: more models off than a message may list, and a list the payload does not hold */
	FRESH(SYM_MSG_STATUS);
	poke(25, SYM_WIRE_MAX_MODELS + 1, 2);
	expect_bad(n, "models off, at most");
	FRESH(SYM_MSG_STATUS);
	poke(25, 3, 2);
	expect_bad(n, "payload of 15 bytes, but its fields make 17");
	m = sample(SYM_MSG_STATUS);
	m.u.status.noff = SYM_WIRE_MAX_MODELS + 1;
	assert_int_equal(sym_wire_size(&m), 0); /* nor encoded */
	/* trailing bytes after a variable message's fields */
	int var[] = { SYM_MSG_HELLO, SYM_MSG_REQUEST, SYM_MSG_PLAN, SYM_MSG_RESULT, SYM_MSG_ANSWER, SYM_MSG_STATUS };
	for (size_t i = 0; i < 6; i++) {
		FRESH(var[i]);
		poke(8, n - 16 + 1, 4);
		buf[n] = 0;
		expect_bad(n + 1, "but its fields make");
	}
	/* hello */
	FRESH(SYM_MSG_HELLO);
	buf[16] = 0;
	expect_bad(n, "unknown role 0");
	buf[16] = SYM_ROLE_NROLES;
	expect_bad(n, "unknown role");
	FRESH(SYM_MSG_HELLO);
	buf[21] = 64; /* kind length */
	expect_bad(n, "kind name of 64 bytes");
	FRESH(SYM_MSG_HELLO);
	buf[23] = 0x07; /* a kind byte */
	expect_bad(n, "not printable");
	FRESH(SYM_MSG_HELLO);
	poke(26, SYM_WIRE_MAX_MODELS + 1, 2); /* nmodels after "a100" */
	expect_bad(n, "models, at most");
	poke(26, 30, 2); /* more models than there are bytes */
	expect_bad(n, "models do not fit");
	FRESH(SYM_MSG_HELLO);
	buf[34] = SYM_WIRE_MAX_PARTS + 1; /* the sub-cluster it joins, after the models */
	expect_bad(n, "sub-cluster 32, at most 31");
	FRESH(SYM_MSG_HELLO);
	buf[35] = (uint8_t)(strlen(TOKEN) + 1); /* the token's length, one more than there are bytes */
	expect_bad(n, "token of 23 bytes does not fit");
	buf[35] = (uint8_t)(strlen(TOKEN) - 1); /* one fewer: a byte left over */
	expect_bad(n, "but its fields make");
	FRESH(SYM_MSG_HELLO);
	buf[41] = ' '; /* a blank in the token */
	expect_bad(n, "token byte 5 is not printable");
	m = sample(SYM_MSG_HELLO);
	m.u.hello.token = "two words";
	m.u.hello.token_len = 9;
	assert_int_equal(sym_wire_encode(&m, NULL, MODELS, buf, sizeof(buf)), 0); /* not encoded either */
	m = sample(SYM_MSG_HELLO);
	m.u.hello.part = SYM_WIRE_MAX_PARTS + 1;
	assert_int_equal(sym_wire_encode(&m, NULL, MODELS, buf, sizeof(buf)), 0);
	/* request */
	FRESH(SYM_MSG_REQUEST);
	poke(26, (uint64_t)-1, 8);
	expect_bad(n, "deadline budget");
	FRESH(SYM_MSG_REQUEST);
	poke(34, 1000, 4);
	expect_bad(n, "but its fields make");
	/* meta */
	FRESH(SYM_MSG_META);
	poke(30, 0, 8);
	expect_bad(n, "deadline budget 0");
	poke(30, 3600000000001ull, 8);
	expect_bad(n, "deadline budget");
	FRESH(SYM_MSG_META);
	poke(46, SYM_WIRE_MAX_PAYLOAD + 1, 4);
	expect_bad(n, "input of");
	/* plan */
	FRESH(SYM_MSG_PLAN);
	poke(46, 0, 2);
	expect_bad(n, "0 inputs");
	poke(46, SYM_WIRE_MAX_BATCH + 1, 2);
	expect_bad(n, "inputs, want 1 to");
	poke(46, 4, 2);
	expect_bad(n, "but its fields make");
	FRESH(SYM_MSG_PLAN);
	poke(30, (uint64_t)-5, 8);
	expect_bad(n, "start delay");
	FRESH(SYM_MSG_PLAN);
	poke(38, 1499999, 8); /* a latest start before the start */
	expect_bad(n, "latest start");
	poke(38, (uint64_t)-2, 8);
	expect_bad(n, "latest start");
	poke(38, (uint64_t)-1, 8); /* -1: never rejected */
	assert_true(sym_wire_decode(buf, n, &m, NULL, 0) > 0);
	assert_true(m.u.plan.latest_in_ns == -1);
	FRESH(SYM_MSG_PLAN);
	poke(48 + 32 + 20, SYM_WIRE_MAX_PAYLOAD + 1, 4); /* input 1's length */
	expect_bad(n, "input 1 of");
	/* done, result, drop, answer */
	FRESH(SYM_MSG_DONE);
	buf[28] = SYM_WIRE_DROPPED_EARLY;
	expect_bad(n, "is not ok, failed or rejected");
	buf[28] = SYM_WIRE_REJECTED;
	assert_true(sym_wire_decode(buf, n, &m, NULL, 0) > 0);
	FRESH(SYM_MSG_DONE);
	poke(29, (uint64_t)-1, 8);
	expect_bad(n, "run time");
	FRESH(SYM_MSG_DONE);
	poke(37, 3600000000001ull, 8);
	expect_bad(n, "end age");
	FRESH(SYM_MSG_RESULT);
	buf[24] = SYM_WIRE_NSTATUS;
	expect_bad(n, "unknown status");
	buf[24] = SYM_WIRE_BACKEND_FAILED;
	expect_bad(n, "data bytes with status");
	FRESH(SYM_MSG_RESULT);
	poke(25, SYM_WIRE_MAX_BATCH + 1, 2);
	expect_bad(n, "batch of");
	FRESH(SYM_MSG_DROP);
	buf[24] = SYM_WIRE_OK;
	expect_bad(n, "not a drop reason");
	buf[24] = SYM_WIRE_BAD_REQUEST;
	expect_bad(n, "not a drop reason");
#undef FRESH
}

static void test_encode_refuses(void **state)
{
	(void)state;
	struct sym_msg m = sample(SYM_MSG_PLAN);
	m.u.plan.n = 0;
	assert_int_equal(sym_wire_size(&m), 0);
	assert_int_equal(sym_wire_encode(&m, INPUTS, NULL, buf, sizeof(buf)), 0);
	m.u.plan.n = SYM_WIRE_MAX_BATCH + 1;
	assert_int_equal(sym_wire_encode(&m, INPUTS, NULL, buf, sizeof(buf)), 0);
	m = sample(SYM_MSG_PLAN);
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, sizeof(buf)), 0); /* no inputs */
	m.u.plan.latest_in_ns = 5; /* before its start */
	assert_int_equal(sym_wire_size(&m), 0);
	m = sample(SYM_MSG_DONE);
	m.u.done.ago_ns = -1;
	assert_int_equal(sym_wire_size(&m), 0);
	m = sample(SYM_MSG_META);
	m.u.meta.budget_ns = 0;
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, sizeof(buf)), 0);
	m = sample(SYM_MSG_DROP);
	m.u.drop.reason = SYM_WIRE_OK;
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, sizeof(buf)), 0);
	m = sample(SYM_MSG_ANSWER);
	m.u.answer.len = 3; /* data with a failure status */
	m.u.answer.data = DATA;
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, sizeof(buf)), 0);
	m = sample(SYM_MSG_RESULT);
	m.u.result.batch = SYM_WIRE_MAX_BATCH + 1;
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, sizeof(buf)), 0);
	m = sample(SYM_MSG_HELLO);
	m.u.hello.role = 0;
	assert_int_equal(sym_wire_encode(&m, NULL, MODELS, buf, sizeof(buf)), 0);
	m = sample(SYM_MSG_HELLO);
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, sizeof(buf)), 0); /* no model list */
	m = sample(SYM_MSG_DROP);
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, SYM_WIRE_HEADER + 8), 0); /* one byte short */
	assert_int_equal(sym_wire_encode(&m, NULL, NULL, buf, SYM_WIRE_HEADER + 9), SYM_WIRE_HEADER + 9);
	m.type = SYM_MSG_NTYPES;
	assert_int_equal(sym_wire_size(&m), 0);
}

static void test_stream(void **state)
{
	(void)state;
	/* two messages back to back, then a third cut short */
	struct sym_msg a = sample(SYM_MSG_META), b = sample(SYM_MSG_PLAN), c = sample(SYM_MSG_HEARTBEAT), d;
	size_t na = sym_wire_encode(&a, NULL, NULL, buf, sizeof(buf));
	size_t nb = sym_wire_encode(&b, INPUTS, NULL, buf + na, sizeof(buf) - na);
	size_t nc = sym_wire_encode(&c, NULL, NULL, buf + na + nb, sizeof(buf) - na - nb);
	size_t total = na + nb + nc - 1;
	char err[128];
	assert_int_equal(sym_wire_decode(buf, total, &d, err, sizeof(err)), (long)na);
	assert_int_equal(d.type, SYM_MSG_META);
	assert_int_equal(sym_wire_decode(buf + na, total - na, &d, err, sizeof(err)), (long)nb);
	assert_int_equal(d.type, SYM_MSG_PLAN);
	assert_int_equal(sym_wire_decode(buf + na + nb, total - na - nb, &d, err, sizeof(err)), 0);
}

static void test_fuzz(void **state)
{
	(void)state;
	/* flip random bytes of valid messages: decode must return 0, a size, or -EPROTO, and a
	 * decoded message must lie inside the bytes given (ASan checks the reads) */
	uint64_t x = 88172645463325252ull;
	int accepted = 0, refused = 0;
	for (int iter = 0; iter < 20000; iter++) {
		struct sym_msg m = sample(SYM_MSG_HELLO + iter % (SYM_MSG_NTYPES - 1)), d;
		size_t n = enc(&m);
		uint8_t *copy = malloc(n); /* exactly n bytes: any over-read is caught */
		assert_non_null(copy);
		memcpy(copy, buf, n);
		for (int f = 0; f < 3; f++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			copy[x % n] ^= (uint8_t)(x >> 32);
		}
		char err[256];
		long rc = sym_wire_decode(copy, n, &d, err, sizeof(err));
		assert_true(rc == 0 || rc == -EPROTO || (rc >= SYM_WIRE_HEADER && (size_t)rc <= n));
		if (rc > 0) {
			accepted++;
			/* a message that decodes re-encodes to the same bytes */
			struct sym_wire_input in[SYM_WIRE_MAX_BATCH];
			uint16_t models[SYM_WIRE_MAX_MODELS];
			for (uint16_t i = 0; d.type == SYM_MSG_PLAN && i < d.u.plan.n; i++)
				sym_wire_plan_input(&d, i, &in[i]);
			for (uint16_t i = 0; d.type == SYM_MSG_HELLO && i < d.u.hello.nmodels; i++)
				models[i] = sym_wire_hello_model(&d, i);
			for (uint16_t i = 0; d.type == SYM_MSG_STATUS && i < d.u.status.noff; i++)
				models[i] = sym_wire_status_model(&d, i);
			static uint8_t again[1 << 16];
			assert_int_equal(sym_wire_encode(&d, in, models, again, sizeof(again)), (size_t)rc);
			assert_memory_equal(again, copy, (size_t)rc);
		} else if (rc < 0) {
			refused++;
		}
		free(copy);
	}
	assert_true(accepted > 100 && refused > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_term),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
