#include "runtime/wire.h"

#include "experiment/repository.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define HOUR_NS 3600000000000LL

/* ---- little-endian cursors ---- */

struct wr {
	uint8_t *p;
};

static void put8(struct wr *w, uint8_t v) { *w->p++ = v; }
static void put16(struct wr *w, uint16_t v)
{
	for (int i = 0; i < 2; i++)
		*w->p++ = (uint8_t)(v >> (8 * i));
}
static void put32(struct wr *w, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*w->p++ = (uint8_t)(v >> (8 * i));
}
static void put64(struct wr *w, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*w->p++ = (uint8_t)(v >> (8 * i));
}
static void putbytes(struct wr *w, const void *src, size_t n)
{
	if (n)
		memcpy(w->p, src, n);
	w->p += n;
}

/* A reader never runs past its end: the payload size is checked before any field is read. */
struct rd {
	const uint8_t *p;
};

static uint8_t get8(struct rd *r) { return *r->p++; }
static uint16_t get16(struct rd *r)
{
	uint16_t v = (uint16_t)(r->p[0] | (r->p[1] << 8));
	r->p += 2;
	return v;
}
static uint32_t get32(struct rd *r)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)r->p[i] << (8 * i);
	r->p += 4;
	return v;
}
static uint64_t get64(struct rd *r)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	return v;
}

/* ---- sizes: the exact payload of each type ---- */

#define HELLO_FIXED 10 /* role 1, id 4, kind length 1, nmodels 2, part 1, token length 1 */
#define HEARTBEAT_SIZE 12
#define REQUEST_FIXED 22
#define META_SIZE 42
#define PLAN_FIXED 32
#define DONE_SIZE 29
#define DATA_FIXED 15 /* answer: id 8, status 1, batch 2, length 4 */
#define RESULT_FIXED 23 /* result: the same, then the batch's id 8 (since version 7) */
#define DROP_SIZE 9
#define BYE_SIZE 5
#define STATUS_FIXED 11 /* gpus_online, gpus_max, draining, noff; then noff u16 model ids */
#define GRANT_SIZE 45 /* frontend, key, seal key (32), encrypted */
#define LOAD_SIZE 3
#define MODEL_FIXED 3 /* model, name_len; then name_len bytes of name */
#define LOADED_FIXED 13 /* model, op, status, took, why_len; then why_len bytes of why */

static bool drop_reason_ok(int r)
{
	return r == SYM_WIRE_DROPPED_EXPIRED || r == SYM_WIRE_DROPPED_EARLY || r == SYM_WIRE_BACKEND_FAILED ||
	       r == SYM_WIRE_FRONTEND_GONE || r == SYM_WIRE_UNAVAILABLE || r == SYM_WIRE_NOT_LOADED;
}

static bool done_status_ok(int st)
{
	return st == SYM_WIRE_OK || st == SYM_WIRE_BACKEND_FAILED || st == SYM_WIRE_REJECTED;
}

static bool load_op_ok(int op)
{
	return op == SYM_WIRE_LOAD || op == SYM_WIRE_UNLOAD;
}

static bool latest_ok(int64_t latest, int64_t start)
{
	return latest == -1 || (latest >= start && latest <= HOUR_NS);
}

/* The messages no scheduler sends or reads: their term is 0. */
static bool termless(int type)
{
	return type == SYM_MSG_REQUEST || type == SYM_MSG_ANSWER || type == SYM_MSG_RESULT || type == SYM_MSG_GRANT;
}

static size_t payload_size(const struct sym_msg *m)
{
	if (m->term && termless(m->type))
		return 0;
	switch (m->type) {
	case SYM_MSG_HELLO: {
		size_t kl = strnlen(m->u.hello.kind, sizeof(m->u.hello.kind));
		if (kl > SYM_WIRE_MAX_NAME || m->u.hello.nmodels > SYM_WIRE_MAX_MODELS || !m->u.hello.role ||
		    m->u.hello.role >= SYM_ROLE_NROLES || (m->u.hello.token_len && !m->u.hello.token) ||
		    m->u.hello.part > SYM_WIRE_MAX_PARTS)
			return 0;
		for (uint8_t i = 0; i < m->u.hello.token_len; i++)
			if (m->u.hello.token[i] < 0x21 || m->u.hello.token[i] > 0x7e)
				return 0;
		return HELLO_FIXED + kl + 2 * (size_t)m->u.hello.nmodels + m->u.hello.token_len;
	}
	case SYM_MSG_HEARTBEAT:
		return HEARTBEAT_SIZE;
	case SYM_MSG_REQUEST:
		if (m->u.request.budget_ns < 0 || m->u.request.budget_ns > HOUR_NS ||
		    m->u.request.len > SYM_WIRE_MAX_PAYLOAD - REQUEST_FIXED)
			return 0;
		return REQUEST_FIXED + (size_t)m->u.request.len;
	case SYM_MSG_META:
		if (m->u.meta.budget_ns <= 0 || m->u.meta.budget_ns > HOUR_NS || m->u.meta.len > SYM_WIRE_MAX_PAYLOAD)
			return 0;
		return META_SIZE;
	case SYM_MSG_PLAN:
		if (m->u.plan.n < 1 || m->u.plan.n > SYM_WIRE_MAX_BATCH || m->u.plan.start_in_ns < 0 ||
		    m->u.plan.start_in_ns > HOUR_NS || !latest_ok(m->u.plan.latest_in_ns, m->u.plan.start_in_ns))
			return 0;
		return PLAN_FIXED + (size_t)m->u.plan.n * SYM_WIRE_INPUT_SIZE;
	case SYM_MSG_DONE:
		if (!done_status_ok(m->u.done.status) || m->u.done.ran_ns < 0 || m->u.done.ran_ns > HOUR_NS ||
		    m->u.done.ago_ns < 0 || m->u.done.ago_ns > HOUR_NS)
			return 0;
		return DONE_SIZE;
	case SYM_MSG_RESULT:
	case SYM_MSG_ANSWER: {
		uint8_t st = m->type == SYM_MSG_RESULT ? m->u.result.status : m->u.answer.status;
		uint32_t len = m->type == SYM_MSG_RESULT ? m->u.result.len : m->u.answer.len;
		uint16_t b = m->type == SYM_MSG_RESULT ? m->u.result.batch : m->u.answer.batch;
		size_t fixed = m->type == SYM_MSG_RESULT ? RESULT_FIXED : DATA_FIXED;
		if (st >= SYM_WIRE_NSTATUS || (st != SYM_WIRE_OK && len) || len > SYM_WIRE_MAX_PAYLOAD - fixed ||
		    b > SYM_WIRE_MAX_BATCH)
			return 0;
		return fixed + (size_t)len;
	}
	case SYM_MSG_DROP:
		return drop_reason_ok(m->u.drop.reason) ? DROP_SIZE : 0;
	case SYM_MSG_BYE:
		return m->u.bye.role && m->u.bye.role < SYM_ROLE_NROLES ? BYE_SIZE : 0;
	case SYM_MSG_STATUS:
		return m->u.status.draining <= 1 && m->u.status.gpus_online <= m->u.status.gpus_max &&
			       m->u.status.noff <= SYM_WIRE_MAX_MODELS
			       ? STATUS_FIXED + 2 * (size_t)m->u.status.noff
			       : 0;
	case SYM_MSG_GRANT:
		return m->u.grant.encrypted <= 1 ? GRANT_SIZE : 0;
	case SYM_MSG_LOAD:
		return load_op_ok(m->u.load.op) ? LOAD_SIZE : 0;
	case SYM_MSG_LOADED:
		return load_op_ok(m->u.loaded.op) &&
				       (m->u.loaded.status == SYM_WIRE_OK || m->u.loaded.status == SYM_WIRE_BACKEND_FAILED) &&
				       m->u.loaded.took_ns >= 0 && m->u.loaded.took_ns <= HOUR_NS &&
				       (!m->u.loaded.why_len || m->u.loaded.why)
			       ? LOADED_FIXED + (size_t)m->u.loaded.why_len
			       : 0;
	case SYM_MSG_MODEL:
		return sym_repo_name_ok(m->u.model.name, m->u.model.name_len) ? MODEL_FIXED + (size_t)m->u.model.name_len : 0;
	default:
		return 0;
	}
}

size_t sym_wire_size(const struct sym_msg *m)
{
	size_t p = payload_size(m);
	return p ? SYM_WIRE_HEADER + p : 0;
}

size_t sym_wire_encode(const struct sym_msg *m, const struct sym_wire_input *inputs, const uint16_t *models,
		       uint8_t *buf, size_t cap)
{
	size_t p = payload_size(m);
	if (!p || SYM_WIRE_HEADER + p > cap)
		return 0;
	if (m->type == SYM_MSG_PLAN) {
		if (!inputs)
			return 0;
		for (uint16_t i = 0; i < m->u.plan.n; i++)
			if (inputs[i].len > SYM_WIRE_MAX_PAYLOAD)
				return 0;
	}
	if (m->type == SYM_MSG_HELLO && m->u.hello.nmodels && !models)
		return 0;
	struct wr w = { buf };
	put32(&w, SYM_WIRE_MAGIC);
	put16(&w, SYM_WIRE_VERSION);
	put16(&w, (uint16_t)m->type);
	put32(&w, (uint32_t)p);
	put32(&w, m->term);
	switch (m->type) {
	case SYM_MSG_HELLO: {
		size_t kl = strnlen(m->u.hello.kind, sizeof(m->u.hello.kind));
		put8(&w, m->u.hello.role);
		put32(&w, m->u.hello.id);
		put8(&w, (uint8_t)kl);
		putbytes(&w, m->u.hello.kind, kl);
		put16(&w, m->u.hello.nmodels);
		for (uint16_t i = 0; i < m->u.hello.nmodels; i++)
			put16(&w, models[i]);
		put8(&w, m->u.hello.part);
		put8(&w, m->u.hello.token_len);
		putbytes(&w, m->u.hello.token, m->u.hello.token_len);
		break;
	}
	case SYM_MSG_HEARTBEAT:
		put32(&w, m->u.heartbeat.id);
		put64(&w, m->u.heartbeat.seq);
		break;
	case SYM_MSG_REQUEST:
		put64(&w, m->u.request.req_id);
		put16(&w, m->u.request.model);
		put64(&w, (uint64_t)m->u.request.budget_ns);
		put32(&w, m->u.request.len);
		putbytes(&w, m->u.request.data, m->u.request.len);
		break;
	case SYM_MSG_META:
		put64(&w, m->u.meta.req_id);
		put16(&w, m->u.meta.model);
		put32(&w, m->u.meta.frontend);
		put64(&w, (uint64_t)m->u.meta.budget_ns);
		put64(&w, m->u.meta.addr);
		put32(&w, m->u.meta.len);
		put64(&w, m->u.meta.key);
		break;
	case SYM_MSG_PLAN:
		put64(&w, m->u.plan.batch_id);
		put32(&w, m->u.plan.gpu);
		put16(&w, m->u.plan.model);
		put64(&w, (uint64_t)m->u.plan.start_in_ns);
		put64(&w, (uint64_t)m->u.plan.latest_in_ns);
		put16(&w, m->u.plan.n);
		for (uint16_t i = 0; i < m->u.plan.n; i++) {
			put32(&w, inputs[i].frontend);
			put64(&w, inputs[i].req_id);
			put64(&w, inputs[i].addr);
			put32(&w, inputs[i].len);
			put64(&w, inputs[i].key);
		}
		break;
	case SYM_MSG_DONE:
		put64(&w, m->u.done.batch_id);
		put32(&w, m->u.done.gpu);
		put8(&w, m->u.done.status);
		put64(&w, (uint64_t)m->u.done.ran_ns);
		put64(&w, (uint64_t)m->u.done.ago_ns);
		break;
	case SYM_MSG_RESULT:
		put64(&w, m->u.result.req_id);
		put8(&w, m->u.result.status);
		put16(&w, m->u.result.batch);
		put32(&w, m->u.result.len);
		put64(&w, m->u.result.batch_id);
		putbytes(&w, m->u.result.data, m->u.result.len);
		break;
	case SYM_MSG_ANSWER:
		put64(&w, m->u.answer.req_id);
		put8(&w, m->u.answer.status);
		put16(&w, m->u.answer.batch);
		put32(&w, m->u.answer.len);
		putbytes(&w, m->u.answer.data, m->u.answer.len);
		break;
	case SYM_MSG_DROP:
		put64(&w, m->u.drop.req_id);
		put8(&w, m->u.drop.reason);
		break;
	case SYM_MSG_BYE:
		put8(&w, m->u.bye.role);
		put32(&w, m->u.bye.id);
		break;
	case SYM_MSG_STATUS:
		put32(&w, m->u.status.gpus_online);
		put32(&w, m->u.status.gpus_max);
		put8(&w, m->u.status.draining);
		put16(&w, m->u.status.noff);
		for (uint16_t i = 0; i < m->u.status.noff; i++)
			put16(&w, models[i]);
		break;
	case SYM_MSG_GRANT:
		put32(&w, m->u.grant.frontend);
		put64(&w, m->u.grant.key);
		for (int i = 0; i < 32; i++)
			put8(&w, m->u.grant.seal_key[i]);
		put8(&w, m->u.grant.encrypted);
		break;
	case SYM_MSG_LOAD:
		put16(&w, m->u.load.model);
		put8(&w, m->u.load.op);
		break;
	case SYM_MSG_LOADED:
		put16(&w, m->u.loaded.model);
		put8(&w, m->u.loaded.op);
		put8(&w, m->u.loaded.status);
		put64(&w, (uint64_t)m->u.loaded.took_ns);
		put8(&w, m->u.loaded.why_len);
		putbytes(&w, m->u.loaded.why, m->u.loaded.why_len);
		break;
	case SYM_MSG_MODEL:
		put16(&w, m->u.model.model);
		put8(&w, m->u.model.name_len);
		putbytes(&w, m->u.model.name, m->u.model.name_len);
		break;
	default:
		return 0;
	}
	return (size_t)(w.p - buf);
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EPROTO)

long sym_wire_decode(const uint8_t *buf, size_t len, struct sym_msg *m, char *err, size_t errlen)
{
	/* the header first: a wrong magic or version is refused as soon as its bytes are there */
	struct rd r = { buf };
	if (len >= 4 && get32(&r) != SYM_WIRE_MAGIC)
		return BAD("bad magic (not a symphony peer, or a lost frame boundary)");
	if (len >= 6) {
		uint16_t v = get16(&r);
		if (v != SYM_WIRE_VERSION)
			return BAD("wire version %u, this symphony speaks %u", v, SYM_WIRE_VERSION);
	}
	if (len < SYM_WIRE_HEADER)
		return 0;
	uint16_t type = get16(&r);
	uint32_t plen = get32(&r);
	uint32_t term = get32(&r);
	if (type < SYM_MSG_HELLO || type >= SYM_MSG_NTYPES)
		return BAD("unknown message type %u", type);
	if (plen > SYM_WIRE_MAX_PAYLOAD)
		return BAD("%s: payload of %u bytes, at most %u", sym_wire_type_name(type), plen, SYM_WIRE_MAX_PAYLOAD);
	if (term && termless(type))
		return BAD("%s: scheduler term %u on a message no scheduler sends or reads (want 0)",
			   sym_wire_type_name(type), term);
	if (len < SYM_WIRE_HEADER + (size_t)plen)
		return 0;
	memset(m, 0, sizeof(*m));
	m->type = (enum sym_msg_type)type;
	m->term = term;
	const char *tn = sym_wire_type_name(type);
	size_t want; /* the exact payload size implied by the fixed fields */
	switch (type) {
	case SYM_MSG_HELLO: {
		if (plen < HELLO_FIXED)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, HELLO_FIXED);
		m->u.hello.role = get8(&r);
		m->u.hello.id = get32(&r);
		uint8_t kl = get8(&r);
		if (!m->u.hello.role || m->u.hello.role >= SYM_ROLE_NROLES)
			return BAD("%s: unknown role %u", tn, m->u.hello.role);
		if (kl > SYM_WIRE_MAX_NAME || plen < HELLO_FIXED + (size_t)kl)
			return BAD("%s: kind name of %u bytes does not fit", tn, kl);
		for (uint8_t i = 0; i < kl; i++) {
			uint8_t c = r.p[i];
			if (c < 0x21 || c > 0x7e)
				return BAD("%s: kind name byte %u is not printable", tn, i);
			m->u.hello.kind[i] = (char)c;
		}
		r.p += kl;
		m->u.hello.nmodels = get16(&r);
		if (m->u.hello.nmodels > SYM_WIRE_MAX_MODELS)
			return BAD("%s: %u models, at most %d", tn, m->u.hello.nmodels, SYM_WIRE_MAX_MODELS);
		m->u.hello.models = r.p;
		if (plen < HELLO_FIXED + kl + 2 * (size_t)m->u.hello.nmodels)
			return BAD("%s: payload of %u bytes, %u models do not fit", tn, plen, m->u.hello.nmodels);
		r.p += 2 * (size_t)m->u.hello.nmodels;
		m->u.hello.part = get8(&r);
		if (m->u.hello.part > SYM_WIRE_MAX_PARTS)
			return BAD("%s: sub-cluster %u, at most %d", tn, m->u.hello.part - 1, SYM_WIRE_MAX_PARTS - 1);
		uint8_t tl = get8(&r);
		if (plen < HELLO_FIXED + kl + 2 * (size_t)m->u.hello.nmodels + tl)
			return BAD("%s: token of %u bytes does not fit", tn, tl);
		for (uint8_t i = 0; i < tl; i++)
			if (r.p[i] < 0x21 || r.p[i] > 0x7e)
				return BAD("%s: token byte %u is not printable", tn, i);
		m->u.hello.token_len = tl;
		m->u.hello.token = tl ? (const char *)r.p : NULL;
		want = HELLO_FIXED + kl + 2 * (size_t)m->u.hello.nmodels + tl;
		break;
	}
	case SYM_MSG_HEARTBEAT:
		if (plen != HEARTBEAT_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, HEARTBEAT_SIZE);
		m->u.heartbeat.id = get32(&r);
		m->u.heartbeat.seq = get64(&r);
		want = HEARTBEAT_SIZE;
		break;
	case SYM_MSG_REQUEST:
		if (plen < REQUEST_FIXED)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, REQUEST_FIXED);
		m->u.request.req_id = get64(&r);
		m->u.request.model = get16(&r);
		m->u.request.budget_ns = (int64_t)get64(&r);
		m->u.request.len = get32(&r);
		m->u.request.data = r.p;
		if (m->u.request.budget_ns < 0 || m->u.request.budget_ns > HOUR_NS)
			return BAD("%s: deadline budget %lld ns is not within [0, 1 h]", tn,
				   (long long)m->u.request.budget_ns);
		want = REQUEST_FIXED + (size_t)m->u.request.len;
		break;
	case SYM_MSG_META:
		if (plen != META_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, META_SIZE);
		m->u.meta.req_id = get64(&r);
		m->u.meta.model = get16(&r);
		m->u.meta.frontend = get32(&r);
		m->u.meta.budget_ns = (int64_t)get64(&r);
		m->u.meta.addr = get64(&r);
		m->u.meta.len = get32(&r);
		m->u.meta.key = get64(&r);
		if (m->u.meta.budget_ns <= 0 || m->u.meta.budget_ns > HOUR_NS)
			return BAD("%s: deadline budget %lld ns is not within (0, 1 h]", tn, (long long)m->u.meta.budget_ns);
		if (m->u.meta.len > SYM_WIRE_MAX_PAYLOAD)
			return BAD("%s: input of %u bytes, at most %u", tn, m->u.meta.len, SYM_WIRE_MAX_PAYLOAD);
		want = META_SIZE;
		break;
	case SYM_MSG_PLAN:
		if (plen < PLAN_FIXED)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, PLAN_FIXED);
		m->u.plan.batch_id = get64(&r);
		m->u.plan.gpu = get32(&r);
		m->u.plan.model = get16(&r);
		m->u.plan.start_in_ns = (int64_t)get64(&r);
		m->u.plan.latest_in_ns = (int64_t)get64(&r);
		m->u.plan.n = get16(&r);
		m->u.plan.inputs = r.p;
		if (m->u.plan.n < 1 || m->u.plan.n > SYM_WIRE_MAX_BATCH)
			return BAD("%s: %u inputs, want 1 to %d", tn, m->u.plan.n, SYM_WIRE_MAX_BATCH);
		if (m->u.plan.start_in_ns < 0 || m->u.plan.start_in_ns > HOUR_NS)
			return BAD("%s: start delay %lld ns is not within [0, 1 h]", tn, (long long)m->u.plan.start_in_ns);
		if (!latest_ok(m->u.plan.latest_in_ns, m->u.plan.start_in_ns))
			return BAD("%s: latest start %lld ns is neither -1 nor within [start delay, 1 h]", tn,
				   (long long)m->u.plan.latest_in_ns);
		want = PLAN_FIXED + (size_t)m->u.plan.n * SYM_WIRE_INPUT_SIZE;
		if (want == plen) {
			for (uint16_t i = 0; i < m->u.plan.n; i++) {
				struct sym_wire_input in;
				sym_wire_plan_input(m, i, &in);
				if (in.len > SYM_WIRE_MAX_PAYLOAD)
					return BAD("%s: input %u of %u bytes, at most %u", tn, i, in.len, SYM_WIRE_MAX_PAYLOAD);
			}
		}
		break;
	case SYM_MSG_DONE:
		if (plen != DONE_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, DONE_SIZE);
		m->u.done.batch_id = get64(&r);
		m->u.done.gpu = get32(&r);
		m->u.done.status = get8(&r);
		m->u.done.ran_ns = (int64_t)get64(&r);
		m->u.done.ago_ns = (int64_t)get64(&r);
		if (!done_status_ok(m->u.done.status))
			return BAD("%s: status %u is not ok, failed or rejected", tn, m->u.done.status);
		if (m->u.done.ran_ns < 0 || m->u.done.ran_ns > HOUR_NS)
			return BAD("%s: run time %lld ns is not within [0, 1 h]", tn, (long long)m->u.done.ran_ns);
		if (m->u.done.ago_ns < 0 || m->u.done.ago_ns > HOUR_NS)
			return BAD("%s: end age %lld ns is not within [0, 1 h]", tn, (long long)m->u.done.ago_ns);
		want = DONE_SIZE;
		break;
	case SYM_MSG_RESULT:
	case SYM_MSG_ANSWER: {
		int fixed = type == SYM_MSG_RESULT ? RESULT_FIXED : DATA_FIXED;
		if (plen < (uint32_t)fixed)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, fixed);
		uint64_t id = get64(&r);
		uint8_t st = get8(&r);
		uint16_t b = get16(&r);
		uint32_t dl = get32(&r);
		uint64_t bid = type == SYM_MSG_RESULT ? get64(&r) : 0;
		if (st >= SYM_WIRE_NSTATUS)
			return BAD("%s: unknown status %u", tn, st);
		if (b > SYM_WIRE_MAX_BATCH)
			return BAD("%s: batch of %u, at most %d", tn, b, SYM_WIRE_MAX_BATCH);
		if (st != SYM_WIRE_OK && dl)
			return BAD("%s: %u data bytes with status %s", tn, dl, sym_wire_status_name(st));
		if (type == SYM_MSG_RESULT)
			m->u.result.req_id = id, m->u.result.status = st, m->u.result.batch = b, m->u.result.len = dl,
			m->u.result.batch_id = bid, m->u.result.data = r.p;
		else
			m->u.answer.req_id = id, m->u.answer.status = st, m->u.answer.batch = b, m->u.answer.len = dl,
			m->u.answer.data = r.p;
		want = (size_t)fixed + dl;
		break;
	}
	case SYM_MSG_DROP:
		if (plen != DROP_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, DROP_SIZE);
		m->u.drop.req_id = get64(&r);
		m->u.drop.reason = get8(&r);
		if (!drop_reason_ok(m->u.drop.reason))
			return BAD("%s: reason %u is not a drop reason", tn, m->u.drop.reason);
		want = DROP_SIZE;
		break;
	case SYM_MSG_BYE:
		if (plen != BYE_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, BYE_SIZE);
		m->u.bye.role = get8(&r);
		m->u.bye.id = get32(&r);
		if (!m->u.bye.role || m->u.bye.role >= SYM_ROLE_NROLES)
			return BAD("%s: unknown role %u", tn, m->u.bye.role);
		want = BYE_SIZE;
		break;
	case SYM_MSG_STATUS:
		if (plen < STATUS_FIXED)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, STATUS_FIXED);
		m->u.status.gpus_online = get32(&r);
		m->u.status.gpus_max = get32(&r);
		m->u.status.draining = get8(&r);
		m->u.status.noff = get16(&r);
		m->u.status.off = r.p;
		if (m->u.status.draining > 1)
			return BAD("%s: draining flag %u is not 0 or 1", tn, m->u.status.draining);
		if (m->u.status.gpus_online > m->u.status.gpus_max)
			return BAD("%s: %u GPUs online of at most %u", tn, m->u.status.gpus_online, m->u.status.gpus_max);
		if (m->u.status.noff > SYM_WIRE_MAX_MODELS)
			return BAD("%s: %u models off, at most %d", tn, m->u.status.noff, SYM_WIRE_MAX_MODELS);
		want = STATUS_FIXED + 2 * (size_t)m->u.status.noff;
		break;
	case SYM_MSG_GRANT:
		if (plen != GRANT_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, GRANT_SIZE);
		m->u.grant.frontend = get32(&r);
		m->u.grant.key = get64(&r);
		for (int i = 0; i < 32; i++)
			m->u.grant.seal_key[i] = get8(&r);
		m->u.grant.encrypted = get8(&r);
		if (m->u.grant.encrypted > 1)
			return BAD("%s: encrypted flag %u is not 0 or 1", tn, m->u.grant.encrypted);
		want = GRANT_SIZE;
		break;
	case SYM_MSG_LOAD:
		if (plen != LOAD_SIZE)
			return BAD("%s: payload of %u bytes, want %d", tn, plen, LOAD_SIZE);
		m->u.load.model = get16(&r);
		m->u.load.op = get8(&r);
		if (!load_op_ok(m->u.load.op))
			return BAD("%s: unknown operation %u (1 load, 2 unload)", tn, m->u.load.op);
		want = LOAD_SIZE;
		break;
	case SYM_MSG_LOADED:
		if (plen < LOADED_FIXED)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, LOADED_FIXED);
		m->u.loaded.model = get16(&r);
		m->u.loaded.op = get8(&r);
		m->u.loaded.status = get8(&r);
		m->u.loaded.took_ns = (int64_t)get64(&r);
		m->u.loaded.why_len = get8(&r);
		m->u.loaded.why = (const char *)r.p;
		if (plen != LOADED_FIXED + (size_t)m->u.loaded.why_len)
			return BAD("%s: payload of %u bytes, want %zu", tn, plen, LOADED_FIXED + (size_t)m->u.loaded.why_len);
		for (uint8_t i = 0; i < m->u.loaded.why_len; i++)
			if (r.p[i] < 0x20 || r.p[i] > 0x7e)
				return BAD("%s: byte %u of its reason is not printable ASCII", tn, i);
		if (!load_op_ok(m->u.loaded.op))
			return BAD("%s: unknown operation %u (1 load, 2 unload)", tn, m->u.loaded.op);
		if (m->u.loaded.status != SYM_WIRE_OK && m->u.loaded.status != SYM_WIRE_BACKEND_FAILED)
			return BAD("%s: status %u is not ok or failed", tn, m->u.loaded.status);
		if (m->u.loaded.took_ns < 0 || m->u.loaded.took_ns > HOUR_NS)
			return BAD("%s: took %" PRId64 " ns, outside 0..1 h", tn, m->u.loaded.took_ns);
		want = LOADED_FIXED + (size_t)m->u.loaded.why_len;
		break;
	case SYM_MSG_MODEL:
		if (plen < MODEL_FIXED)
			return BAD("%s: payload of %u bytes, at least %d", tn, plen, MODEL_FIXED);
		m->u.model.model = get16(&r);
		m->u.model.name_len = get8(&r);
		m->u.model.name = (const char *)r.p;
		if (plen != MODEL_FIXED + (size_t)m->u.model.name_len)
			return BAD("%s: payload of %u bytes, want %zu", tn, plen, MODEL_FIXED + (size_t)m->u.model.name_len);
		if (!sym_repo_name_ok(m->u.model.name, m->u.model.name_len))
			return BAD("%s: not a model name (1 to 40 of A-Z a-z 0-9 _ . -, not starting with a dot)", tn);
		want = MODEL_FIXED + (size_t)m->u.model.name_len;
		break;
	default:
		return BAD("unknown message type %u", type);
	}
	if (want != plen)
		return BAD("%s: payload of %u bytes, but its fields make %zu", tn, plen, want);
	return (long)(SYM_WIRE_HEADER + plen);
}

void sym_wire_plan_input(const struct sym_msg *m, uint16_t i, struct sym_wire_input *out)
{
	struct rd r = { m->u.plan.inputs + (size_t)i * SYM_WIRE_INPUT_SIZE };
	out->frontend = get32(&r);
	out->req_id = get64(&r);
	out->addr = get64(&r);
	out->len = get32(&r);
	out->key = get64(&r);
}

uint16_t sym_wire_status_model(const struct sym_msg *m, uint16_t i)
{
	struct rd r = { m->u.status.off + 2 * (size_t)i };
	return get16(&r);
}

uint16_t sym_wire_hello_model(const struct sym_msg *m, uint16_t i)
{
	struct rd r = { m->u.hello.models + 2 * (size_t)i };
	return get16(&r);
}

const char *sym_wire_type_name(int type)
{
	static const char *const names[] = { "?", "hello", "heartbeat", "request", "meta", "plan",
					     "done", "result", "drop", "answer", "bye", "status", "grant",
					     "load", "loaded", "model" };
	return type > 0 && type < SYM_MSG_NTYPES ? names[type] : "?";
}

const char *sym_wire_status_name(int status)
{
	static const char *const names[] = { "ok", "dropped (deadline)", "dropped (early)", "backend failed",
					     "frontend gone", "bad request", "overloaded",
					     "scheduler unreachable", "rejected (late start)", "unauthorized",
					     "model not loaded" };
	return status >= 0 && status < SYM_WIRE_NSTATUS ? names[status] : "?";
}
