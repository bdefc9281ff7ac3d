/* runtime/handshake.c - the fabric's authentication handshake (see handshake.h). */
#include "runtime/handshake.h"

#include <stdio.h>
#include <string.h>

#include <sodium.h>

#define MAGIC "SYMH"
#define VERSION 2
#define H2_SIGNED (SYM_HS_H2 - SYM_CRED_SIG)
#define WANT_AT (8 + SYM_HS_KX + SYM_CRED_WIRE) /* H1's wanted role and id */

static void header(uint8_t *b, int type)
{
	memcpy(b, MAGIC, 4);
	b[4] = (uint8_t)type;
	b[5] = VERSION;
	b[6] = b[7] = 0;
}

static bool is(const uint8_t *b, size_t len, int type, size_t want)
{
	return len == want && !memcmp(b, MAGIC, 4) && b[4] == type && b[5] == VERSION && !b[6] && !b[7];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* BLAKE2b-256 of label, H1 and the first n2 bytes of H2. */
static void transcript(const struct sym_hs *hs, const char *label, size_t n2, uint8_t out[32])
{
	crypto_generichash_state st;
	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, (const uint8_t *)label, strlen(label) + 1);
	crypto_generichash_update(&st, hs->h1, SYM_HS_H1);
	crypto_generichash_update(&st, hs->h2, n2);
	crypto_generichash_final(&st, out, 32);
}

static const char *who(int role, uint32_t id, char *buf, size_t len)
{
	if (id == SYM_HS_ANY_ID)
		snprintf(buf, len, "any %s", sym_cred_role_name(role));
	else
		snprintf(buf, len, "%s %u", sym_cred_role_name(role), id);
	return buf;
}

static int fail(int *refusal, int klass, char *why, size_t whylen, const char *text)
{
	*refusal = klass;
	snprintf(why, whylen, "%s", text);
	return -1;
}

/* The peer's credential: signed by our CA, not revoked; its role, id and key kept. */
static int peer_cred(struct sym_hs *hs, const uint8_t *wire, int *refusal, char *why, size_t whylen)
{
	uint8_t role;
	char e[160];
	if (sym_cred_check(wire, hs->me->ca_pk, &role, &hs->peer_id, &hs->peer_serial, hs->peer_pk, e, sizeof(e)))
		return fail(refusal, SYM_HS_CREDENTIAL, why, whylen, e);
	if (sym_revoked_has(hs->revoked, hs->peer_serial)) {
		*refusal = SYM_HS_REVOKED;
		snprintf(why, whylen, "%s %u's credential (serial %llu) is revoked", sym_cred_role_name(role), hs->peer_id,
			 (unsigned long long)hs->peer_serial);
		return -1;
	}
	hs->peer_role = role;
	return 0;
}

/* The session keys, bound to the transcript H1 H2. */
static int session_keys(struct sym_hs *hs, const uint8_t *peer_eph)
{
	uint8_t rx[SYM_HS_KX], tx[SYM_HS_KX], th[32];
	int rc = hs->initiator ? crypto_kx_client_session_keys(rx, tx, hs->eph_pk, hs->eph_sk, peer_eph)
			       : crypto_kx_server_session_keys(rx, tx, hs->eph_pk, hs->eph_sk, peer_eph);
	sodium_memzero(hs->eph_sk, sizeof(hs->eph_sk));
	if (rc)
		return -1;
	transcript(hs, "symphony fabric v2 keys", SYM_HS_H2, th);
	crypto_generichash(hs->rx_key, SYM_HS_KX, th, sizeof(th), rx, SYM_HS_KX);
	crypto_generichash(hs->tx_key, SYM_HS_KX, th, sizeof(th), tx, SYM_HS_KX);
	sodium_memzero(rx, sizeof(rx));
	sodium_memzero(tx, sizeof(tx));
	return 0;
}

void sym_hs_start(struct sym_hs *hs, const struct sym_cred *me, const struct sym_revoked *revoked, bool initiator,
		  int want_role, uint32_t want_id)
{
	memset(hs, 0, sizeof(*hs));
	hs->me = me;
	hs->revoked = revoked;
	hs->initiator = initiator;
	hs->want_role = want_role;
	hs->want_id = want_id;
	crypto_kx_keypair(hs->eph_pk, hs->eph_sk);
}

long sym_hs_out(struct sym_hs *hs, uint8_t *out, int *refusal, char *why, size_t whylen)
{
	uint8_t th[32];
	if (hs->initiator && hs->step == 0) {
		header(out, 1);
		memcpy(out + 8, hs->eph_pk, SYM_HS_KX);
		memcpy(out + 8 + SYM_HS_KX, hs->me->wire, SYM_CRED_WIRE);
		uint8_t *w = out + WANT_AT;
		w[0] = (uint8_t)hs->want_role;
		w[1] = w[2] = w[3] = 0;
		for (int i = 0; i < 4; i++)
			w[4 + i] = (uint8_t)(hs->want_id >> (8 * i));
		memcpy(hs->h1, out, SYM_HS_H1);
		hs->step = 1;
		return SYM_HS_H1;
	}
	if (!hs->initiator && hs->step == 1) {
		header(hs->h2, 2);
		memcpy(hs->h2 + 8, hs->eph_pk, SYM_HS_KX);
		memcpy(hs->h2 + 8 + SYM_HS_KX, hs->me->wire, SYM_CRED_WIRE);
		transcript(hs, "symphony fabric v2 responder", H2_SIGNED, th);
		crypto_sign_detached(hs->h2 + H2_SIGNED, NULL, th, sizeof(th), hs->me->sk);
		if (session_keys(hs, hs->h1 + 8))
			return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "an invalid key exchange value");
		memcpy(out, hs->h2, SYM_HS_H2);
		hs->step = 2;
		return SYM_HS_H2;
	}
	if (hs->initiator && hs->step == 2) {
		header(out, 3);
		transcript(hs, "symphony fabric v2 initiator", SYM_HS_H2, th);
		crypto_sign_detached(out + 8, NULL, th, sizeof(th), hs->me->sk);
		hs->step = 3;
		return SYM_HS_H3;
	}
	return 0;
}

int sym_hs_in(struct sym_hs *hs, const uint8_t *b, size_t len, int *refusal, char *why, size_t whylen)
{
	char w1[48], w2[48];
	uint8_t th[32];
	if (!hs->initiator && hs->step == 0) {
		if (!is(b, len, 1, SYM_HS_H1))
			return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "it sent something else than the handshake");
		memcpy(hs->h1, b, SYM_HS_H1);
		if (peer_cred(hs, b + 8 + SYM_HS_KX, refusal, why, whylen))
			return -1;
		int role = b[WANT_AT];
		uint32_t id = get32(b + WANT_AT + 4);
		if (b[WANT_AT + 1] || b[WANT_AT + 2] || b[WANT_AT + 3])
			return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "it sent something else than the handshake");
		if (role != hs->me->role || (id != SYM_HS_ANY_ID && id != hs->me->id)) {
			*refusal = SYM_HS_IDENTITY;
			snprintf(why, whylen, "%s %u wanted %s, and this is %s (a relay?)", sym_cred_role_name(hs->peer_role),
				 hs->peer_id, who(role, id, w1, sizeof(w1)), who(hs->me->role, hs->me->id, w2, sizeof(w2)));
			return -1;
		}
		hs->step = 1;
		return 0;
	}
	if (hs->initiator && hs->step == 1) {
		if (!is(b, len, 2, SYM_HS_H2))
			return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "it answered something else than the handshake");
		memcpy(hs->h2, b, SYM_HS_H2);
		if (peer_cred(hs, b + 8 + SYM_HS_KX, refusal, why, whylen))
			return -1;
		if (hs->peer_role != hs->want_role || (hs->want_id != SYM_HS_ANY_ID && hs->peer_id != hs->want_id)) {
			*refusal = SYM_HS_IDENTITY;
			snprintf(why, whylen, "it is %s, and %s was wanted there (a relay?)",
				 who(hs->peer_role, hs->peer_id, w1, sizeof(w1)), who(hs->want_role, hs->want_id, w2, sizeof(w2)));
			return -1;
		}
		transcript(hs, "symphony fabric v2 responder", H2_SIGNED, th);
		if (crypto_sign_verify_detached(b + H2_SIGNED, th, sizeof(th), hs->peer_pk)) {
			*refusal = SYM_HS_CREDENTIAL;
			snprintf(why, whylen, "%s's signature of the handshake is wrong",
				 who(hs->peer_role, hs->peer_id, w1, sizeof(w1)));
			return -1;
		}
		if (session_keys(hs, b + 8))
			return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "an invalid key exchange value");
		hs->step = 2;
		return 0;
	}
	if (!hs->initiator && hs->step == 2) {
		if (!is(b, len, 3, SYM_HS_H3))
			return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "it sent something else than the handshake's end");
		transcript(hs, "symphony fabric v2 initiator", SYM_HS_H2, th);
		if (crypto_sign_verify_detached(b + 8, th, sizeof(th), hs->peer_pk)) {
			*refusal = SYM_HS_CREDENTIAL;
			snprintf(why, whylen, "%s's signature of the handshake is wrong",
				 who(hs->peer_role, hs->peer_id, w1, sizeof(w1)));
			return -1;
		}
		hs->step = 3;
		return 0;
	}
	return fail(refusal, SYM_HS_PROTOCOL, why, whylen, "a handshake message out of order");
}

bool sym_hs_done(const struct sym_hs *hs)
{
	return hs->step == 3;
}

void sym_hs_wipe(struct sym_hs *hs)
{
	sodium_memzero(hs->eph_sk, sizeof(hs->eph_sk));
	sodium_memzero(hs->tx_key, sizeof(hs->tx_key));
	sodium_memzero(hs->rx_key, sizeof(hs->rx_key));
}
