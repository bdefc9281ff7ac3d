/* runtime/handshake.h - the fabric's authentication handshake, as a pure state
 * machine: bytes in, bytes out, no I/O, no clock (runtime/fabric.c drives it
 * and applies the deadline; tests/fuzz/fuzz_handshake.c feeds it any bytes).
 *
 * The signed Diffie-Hellman of SIGMA and TLS 1.3 (ISO/IEC 9798-3 with
 * ephemeral keys), from libsodium's primitives; see runtime/fabric.h,
 * "Authentication", for what it guarantees. Three messages:
 *
 *   H1 initiator -> responder: "SYMH" 1 2 0 0, e_I (32), credential_I (116),
 *      wanted role u8, 0 0 0, wanted id u32 (little-endian)            164 bytes
 *   H2 responder -> initiator: "SYMH" 2 2 0 0, e_R (32), credential_R (116),
 *      Ed25519 signature by R of BLAKE2b("...responder", H1, H2 so far) 220 bytes
 *   H3 initiator -> responder: "SYMH" 3 2 0 0, Ed25519 signature by I of
 *      BLAKE2b("...initiator", H1, H2)                                    72 bytes
 *
 * e_I and e_R are fresh X25519 keys (crypto_kx); the session keys are
 * crypto_kx's, each then keyed-BLAKE2b of the hash of H1 H2, so they are
 * bound to the transcript. A credential must carry the CA's signature and a
 * serial not revoked; the responder refuses an H1 that wants another member
 * than itself, the initiator an H2 from another member than the one it
 * wanted, and each checks the other's signature of the whole transcript.
 */
#ifndef SYM_HANDSHAKE_H
#define SYM_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cred.h"

#define SYM_HS_KX 32
#define SYM_HS_H1 (8 + SYM_HS_KX + SYM_CRED_WIRE + 8)
#define SYM_HS_H2 (8 + SYM_HS_KX + SYM_CRED_WIRE + SYM_CRED_SIG)
#define SYM_HS_H3 (8 + SYM_CRED_SIG)
#define SYM_HS_MAX SYM_HS_H2 /* the largest message */
#define SYM_HS_ANY_ID UINT32_MAX

/* Why a handshake failed (the same classes as enum sym_fab_refusal). */
enum { SYM_HS_PROTOCOL = 0, SYM_HS_CREDENTIAL = 1, SYM_HS_IDENTITY = 2, SYM_HS_REVOKED = 3 };

struct sym_hs {
	bool initiator;
	int step; /* initiator: 0 H1 due, 1 H2 awaited, 2 H3 due, 3 done;
		   * responder: 0 H1 awaited, 1 H2 due, 2 H3 awaited, 3 done */
	const struct sym_cred *me;
	const struct sym_revoked *revoked; /* read at each check (it may change) */
	int want_role;			   /* initiator: whom it means to reach */
	uint32_t want_id;		   /* or SYM_HS_ANY_ID */
	uint8_t eph_pk[SYM_HS_KX], eph_sk[SYM_HS_KX];
	uint8_t h1[SYM_HS_H1], h2[SYM_HS_H2]; /* the transcript */
	uint8_t peer_pk[SYM_CRED_PK];
	int peer_role; /* what the peer's credential says (0: not yet) */
	uint32_t peer_id;
	uint64_t peer_serial;
	uint8_t tx_key[SYM_HS_KX], rx_key[SYM_HS_KX]; /* once done */
};

/* Starts a handshake: a fresh ephemeral key. The initiator names whom it
 * wants (role SYM_CRED_*, id or SYM_HS_ANY_ID); me and revoked must outlive
 * hs. */
void sym_hs_start(struct sym_hs *hs, const struct sym_cred *me, const struct sym_revoked *revoked, bool initiator,
		  int want_role, uint32_t want_id);

/* The message due now, into out (SYM_HS_MAX bytes): its length; 0 when
 * none is due; -1 when the handshake failed (*refusal and why set). */
long sym_hs_out(struct sym_hs *hs, uint8_t *out, int *refusal, char *why, size_t whylen);

/* A message from the peer: 0 when it was the one due and every check holds
 * (a message of ours may be due next: sym_hs_out); -1 when it fails
 * (*refusal: SYM_HS_*, and why, naming who wanted whom). */
int sym_hs_in(struct sym_hs *hs, const uint8_t *msg, size_t len, int *refusal, char *why, size_t whylen);

/* Whether both sides have all they need: the session keys and the peer's
 * identity are valid (for the initiator, once it has produced H3). */
bool sym_hs_done(const struct sym_hs *hs);

/* Wipes the secrets (ephemeral and session keys). */
void sym_hs_wipe(struct sym_hs *hs);

#endif
