/* tests/fuzz/fuzz_handshake.c - libFuzzer: the fabric's handshake decoder
 * (runtime/handshake.h) on any bytes, in either role, and on honest handshakes
 * whose messages the input alters in flight.
 *
 * The first byte picks the case:
 *   0: a responder (frontend 0) takes the input as H1, then (if it answers)
 *      the rest as H3;
 *   1: an initiator (backend 2, wanting frontend 0) sends H1, takes the input
 *      as H2, and (if it accepts) sends H3;
 *   2: an honest handshake where the input is XORed into H1, H2 and H3 on the
 *      way (in turn): whenever any byte was changed, the two sides must never
 *      both finish (the transcripts differ, so a signature fails); when none
 *      was, both must finish with matching keys.
 * Any crash, sanitizer report or broken property aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "runtime/handshake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sym_cred fe, be;
static struct sym_revoked none;
static bool ready;

static void init(void)
{
	uint8_t pk[SYM_CRED_PK], sk[SYM_CRED_SK];
	sym_ca_mem(pk, sk);
	sym_cred_mem(pk, sk, SYM_CRED_FRONTEND, 0, 1, &fe);
	sym_cred_mem(pk, sk, SYM_CRED_BACKEND, 2, 2, &be);
	ready = true;
}

/* XORs up to len bytes of the input into msg; whether any bit changed. */
static bool alter(uint8_t *msg, size_t len, const uint8_t **data, size_t *size)
{
	bool changed = false;
	size_t n = len < *size ? len : *size;
	for (size_t i = 0; i < n; i++) {
		changed |= (*data)[i] != 0;
		msg[i] ^= (*data)[i];
	}
	*data += n;
	*size -= n;
	return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready)
		init();
	if (size < 1)
		return 0;
	int mode = data[0] % 3;
	data++, size--;
	struct sym_hs r, i;
	uint8_t out[SYM_HS_MAX];
	int why;
	char text[200];
	if (mode == 0) {
		sym_hs_start(&r, &fe, &none, false, 0, 0);
		size_t n = size < SYM_HS_H1 ? size : SYM_HS_H1;
		if (!sym_hs_in(&r, data, n, &why, text, sizeof(text)) &&
		    sym_hs_out(&r, out, &why, text, sizeof(text)) == SYM_HS_H2)
			(void)sym_hs_in(&r, data + n, size - n, &why, text, sizeof(text));
		if (sym_hs_done(&r)) /* it finished without anyone holding the initiator's key */
			abort();
		return 0;
	}
	if (mode == 1) {
		sym_hs_start(&i, &be, &none, true, SYM_CRED_FRONTEND, 0);
		if (sym_hs_out(&i, out, &why, text, sizeof(text)) != SYM_HS_H1)
			abort();
		if (!sym_hs_in(&i, data, size, &why, text, sizeof(text)) &&
		    sym_hs_out(&i, out, &why, text, sizeof(text)) == SYM_HS_H3 && sym_hs_done(&i))
			abort(); /* it accepted an H2 no responder signed */
		return 0;
	}
	sym_hs_start(&i, &be, &none, true, SYM_CRED_FRONTEND, 0);
	sym_hs_start(&r, &fe, &none, false, 0, 0);
	bool changed = false, failed = false;
	long n = sym_hs_out(&i, out, &why, text, sizeof(text));
	changed |= alter(out, (size_t)n, &data, &size);
	failed = sym_hs_in(&r, out, (size_t)n, &why, text, sizeof(text)) != 0;
	if (!failed) {
		n = sym_hs_out(&r, out, &why, text, sizeof(text));
		failed = n <= 0;
		if (!failed) {
			changed |= alter(out, (size_t)n, &data, &size);
			failed = sym_hs_in(&i, out, (size_t)n, &why, text, sizeof(text)) != 0;
		}
	}
	if (!failed) {
		n = sym_hs_out(&i, out, &why, text, sizeof(text));
		changed |= alter(out, (size_t)n, &data, &size);
		failed = sym_hs_in(&r, out, (size_t)n, &why, text, sizeof(text)) != 0;
	}
	bool both = sym_hs_done(&i) && sym_hs_done(&r);
	if (changed && both)
		abort();
	if (!changed && (!both || sodium_memcmp(i.tx_key, r.rx_key, SYM_HS_KX) ||
			 sodium_memcmp(i.rx_key, r.tx_key, SYM_HS_KX) || i.peer_id != 0 || r.peer_id != 2))
		abort();
	return 0;
}
