/* runtime/cred.h - per-member credentials: who a fabric peer is.
 *
 * A cluster has one signing key, its certificate authority (CA): an Ed25519
 * key pair (libsodium's crypto_sign) that `symphony keygen ca DIR` writes.
 * Every member (each schedd, frontend and backend) has a key pair of its own
 * and a credential the CA signed: its role, its id, a serial number and its
 * public key. In the fabric handshake (runtime/fabric.h, "Authentication")
 * a member shows its credential and signs the handshake's transcript with
 * its own key, so a peer learns the role and id of whoever it talks to, and
 * no member can pass for another: a backend's key cannot sign as frontend 0.
 *
 * Files (JSON, read with cJSON; the secret ones mode 0600, of this user):
 *   DIR/ca.key            the CA's secret key: only `symphony keygen` needs it
 *   DIR/ca.pub            the CA's public key: every member needs it
 *   DIR/ROLE-ID.cred      a member's credential and secret key (schedd-0,
 *                         schedd-1 for a standby, frontend-N, backend-N)
 *   DIR/issued.json       what the CA issued (serials, roles, ids, keys)
 *   DIR/revoked.json      the serials no member accepts any more; read at
 *                         start and again on SIGHUP
 *
 * The credential on the wire is SYM_CRED_WIRE bytes, little-endian:
 *   0 "SYMC", 4 u8 version 1, 5 u8 role, 6 u16 0, 8 u32 id, 12 u64 serial,
 *   20 public key (32), 52 the CA's Ed25519 signature of bytes 0..52 (64).
 */
#ifndef SYM_CRED_H
#define SYM_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define SYM_CRED_WIRE 116
#define SYM_CRED_PK 32  /* crypto_sign_PUBLICKEYBYTES */
#define SYM_CRED_SK 64  /* crypto_sign_SECRETKEYBYTES */
#define SYM_CRED_SIG 64 /* crypto_sign_BYTES */
#define SYM_CRED_ANY_ID UINT32_MAX

/* The roles (the same numbers as enum sym_role in runtime/wire.h). */
enum { SYM_CRED_SCHEDD = 1, SYM_CRED_FRONTEND = 2, SYM_CRED_BACKEND = 3 };

/* A member's identity: what it shows and what it signs with. */
struct sym_cred {
	uint8_t role;
	uint32_t id;
	uint64_t serial;
	uint8_t wire[SYM_CRED_WIRE]; /* the signed credential */
	uint8_t sk[SYM_CRED_SK];     /* the member's secret signing key */
	uint8_t ca_pk[SYM_CRED_PK];  /* the cluster's CA: whom it believes */
};

/* The serials no longer accepted, sorted. */
struct sym_revoked {
	uint64_t *serials;
	size_t n;
};

/* "schedd", "frontend", "backend"; "?" for others. */
const char *sym_cred_role_name(int role);
/* The role named by s (as above), or 0. */
int sym_cred_role_of(const char *s);

/* A credential received from a peer: its fields when the CA's signature
 * holds and it is well-formed (0), else -EPERM/-EINVAL with why in err.
 * Revocation is checked by the caller (sym_revoked_has). */
int sym_cred_check(const uint8_t wire[SYM_CRED_WIRE], const uint8_t ca_pk[SYM_CRED_PK], uint8_t *role,
		   uint32_t *id, uint64_t *serial, uint8_t pk[SYM_CRED_PK], char *err, size_t errlen);

bool sym_revoked_has(const struct sym_revoked *r, uint64_t serial);
void sym_revoked_free(struct sym_revoked *r);

/* ---- files ---- */

/* The CA's public key from DIR/ca.pub (or a file path). */
int sym_ca_load(const char *path, uint8_t pk[SYM_CRED_PK], char *err, size_t errlen);

/* A member's credential file, checked against the CA's public key (its
 * signature, and that the secret key is the one the credential names). */
int sym_cred_load(const char *path, const uint8_t ca_pk[SYM_CRED_PK], struct sym_cred *out, char *err,
		  size_t errlen);

/* The revoked serials (a missing file: none, when missing_ok). */
int sym_revoked_load(const char *path, bool missing_ok, struct sym_revoked *out, char *err, size_t errlen);

/* ---- the CA (symphony keygen) ---- */

/* Creates DIR (mode 0700 when new) with ca.key, ca.pub and an empty
 * issued.json; refuses (-EEXIST) when DIR/ca.key exists. */
int sym_ca_create(const char *dir, char *err, size_t errlen);

/* Issues a credential for role/id: a new key pair, the next serial, written
 * to DIR/ROLE-ID.cred (mode 0600; an existing one is refused unless
 * replace, which writes a new key under a new serial and revokes the old
 * one's), recorded in DIR/issued.json. *serial_out gets the serial. */
int sym_ca_issue(const char *dir, int role, uint32_t id, bool replace, uint64_t *serial_out, char *path_out,
		 size_t path_len, char *err, size_t errlen);

/* Adds serial to DIR/revoked.json (known to issued.json; revoking twice is
 * fine). */
int sym_ca_revoke(const char *dir, uint64_t serial, char *err, size_t errlen);

/* The serials DIR's CA issued to role/id (at most max into out, *n). */
int sym_ca_serials_of(const char *dir, int role, uint32_t id, uint64_t *out, size_t max, size_t *n, char *err,
		      size_t errlen);

/* Prints what DIR's CA issued, and which are revoked, to stdout. */
int sym_ca_list(const char *dir, char *err, size_t errlen);

/* The path of a member's credential in DIR: DIR/ROLE-ID.cred. */
void sym_cred_path(const char *dir, int role, uint32_t id, char *out, size_t len);

/* ---- in memory (tests, benchmarks) ---- */

/* A CA key pair in memory. */
void sym_ca_mem(uint8_t pk[SYM_CRED_PK], uint8_t sk[SYM_CRED_SK]);
/* A credential issued in memory by the CA (pk, sk). */
void sym_cred_mem(const uint8_t ca_pk[SYM_CRED_PK], const uint8_t ca_sk[SYM_CRED_SK], int role, uint32_t id,
		  uint64_t serial, struct sym_cred *out);

#endif
