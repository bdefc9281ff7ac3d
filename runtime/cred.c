/* runtime/cred.c - per-member credentials (see cred.h). */
#include "runtime/cred.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "runtime/auth.h"

#define CRED_MAGIC "SYMC"
#define CRED_BODY 52
#define FILE_MAX (1u << 20)

static const char *const role_names[] = { NULL, "schedd", "frontend", "backend" };

const char *sym_cred_role_name(int role)
{
	return role >= SYM_CRED_SCHEDD && role <= SYM_CRED_BACKEND ? role_names[role] : "?";
}

int sym_cred_role_of(const char *s)
{
	for (int r = SYM_CRED_SCHEDD; r <= SYM_CRED_BACKEND; r++)
		if (s && !strcmp(s, role_names[r]))
			return r;
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The credential's body (bytes 0..52) signed by the CA into wire. */
static void cred_sign(uint8_t wire[SYM_CRED_WIRE], int role, uint32_t id, uint64_t serial,
		      const uint8_t pk[SYM_CRED_PK], const uint8_t ca_sk[SYM_CRED_SK])
{
	memcpy(wire, CRED_MAGIC, 4);
	wire[4] = 1;
	wire[5] = (uint8_t)role;
	wire[6] = wire[7] = 0;
	put32(wire + 8, id);
	put64(wire + 12, serial);
	memcpy(wire + 20, pk, SYM_CRED_PK);
	crypto_sign_detached(wire + CRED_BODY, NULL, wire, CRED_BODY, ca_sk);
}

int sym_cred_check(const uint8_t wire[SYM_CRED_WIRE], const uint8_t ca_pk[SYM_CRED_PK], uint8_t *role,
		   uint32_t *id, uint64_t *serial, uint8_t pk[SYM_CRED_PK], char *err, size_t errlen)
{
	if (memcmp(wire, CRED_MAGIC, 4) || wire[4] != 1 || wire[6] || wire[7])
		return snprintf(err, errlen, "not a symphony credential (version 1)"), -EINVAL;
	if (wire[5] < SYM_CRED_SCHEDD || wire[5] > SYM_CRED_BACKEND)
		return snprintf(err, errlen, "a credential for an unknown role %u", wire[5]), -EINVAL;
	if (crypto_sign_verify_detached(wire + CRED_BODY, wire, CRED_BODY, ca_pk))
		return snprintf(err, errlen, "a credential this cluster's CA did not sign"), -EPERM;
	*role = wire[5];
	*id = get32(wire + 8);
	*serial = get64(wire + 12);
	if (pk)
		memcpy(pk, wire + 20, SYM_CRED_PK);
	return 0;
}

bool sym_revoked_has(const struct sym_revoked *r, uint64_t serial)
{
	if (!r)
		return false;
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->serials[mid] == serial)
			return true;
		if (r->serials[mid] < serial)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void sym_revoked_free(struct sym_revoked *r)
{
	if (!r)
		return;
	free(r->serials);
	r->serials = NULL;
	r->n = 0;
}

/* ---- files ---- */

static cJSON *read_json(const char *path, bool private, const char *what, char *err, size_t errlen)
{
	char *text = NULL;
	char e[600];
	long n = sym_file_read(path, FILE_MAX, private, &text, e, sizeof(e));
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", what, e);
		return NULL;
	}
	cJSON *j = cJSON_ParseWithLength(text, (size_t)n);
	if (private)
		sodium_memzero(text, (size_t)n);
	free(text);
	if (!j || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
		snprintf(err, errlen, "%s: %s is not a JSON object", what, path);
	}
	return j;
}

/* The hex string at key into out (exactly len bytes). */
static int hex_field(const cJSON *j, const char *key, uint8_t *out, size_t len, const char *path, char *err,
		     size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	size_t got = 0;
	if (!cJSON_IsString(v) || strlen(v->valuestring) != 2 * len ||
	    sodium_hex2bin(out, len, v->valuestring, 2 * len, NULL, &got, NULL) || got != len)
		return snprintf(err, errlen, "%s: \"%s\" must be %zu hexadecimal digits", path, key, 2 * len),
		       -EINVAL;
	return 0;
}

static char *hex_of(const uint8_t *b, size_t len)
{
	char *s = malloc(2 * len + 1);
	if (s)
		sodium_bin2hex(s, 2 * len + 1, b, len);
	return s;
}

int sym_ca_load(const char *path, uint8_t pk[SYM_CRED_PK], char *err, size_t errlen)
{
	if (sodium_init() < 0)
		return snprintf(err, errlen, "cannot initialise libsodium"), -EIO;
	cJSON *j = read_json(path, false, "the cluster's CA public key", err, errlen);
	if (!j)
		return -EINVAL;
	int rc = hex_field(j, "public_key", pk, SYM_CRED_PK, path, err, errlen);
	cJSON_Delete(j);
	return rc;
}

int sym_cred_load(const char *path, const uint8_t ca_pk[SYM_CRED_PK], struct sym_cred *out, char *err,
		  size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (sodium_init() < 0)
		return snprintf(err, errlen, "cannot initialise libsodium"), -EIO;
	cJSON *j = read_json(path, true, "the member's credential", err, errlen);
	if (!j)
		return -EINVAL;
	uint8_t pk[SYM_CRED_PK], derived[SYM_CRED_PK];
	char why[200];
	int rc = hex_field(j, "credential", out->wire, SYM_CRED_WIRE, path, err, errlen);
	if (!rc)
		rc = hex_field(j, "secret_key", out->sk, SYM_CRED_SK, path, err, errlen);
	if (!rc && sym_cred_check(out->wire, ca_pk, &out->role, &out->id, &out->serial, pk, why, sizeof(why)))
		rc = -EPERM, snprintf(err, errlen, "%s: %s (issued by another cluster's CA?)", path, why);
	if (!rc && (crypto_sign_ed25519_sk_to_pk(derived, out->sk) || sodium_memcmp(derived, pk, SYM_CRED_PK)))
		rc = -EINVAL, snprintf(err, errlen, "%s: its secret key is not the one its credential names", path);
	cJSON_Delete(j);
	if (rc)
		sodium_memzero(out, sizeof(*out));
	else
		memcpy(out->ca_pk, ca_pk, SYM_CRED_PK);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int sym_revoked_load(const char *path, bool missing_ok, struct sym_revoked *out, char *err, size_t errlen)
{
	out->serials = NULL;
	out->n = 0;
	if (missing_ok && access(path, F_OK) && errno == ENOENT)
		return 0;
	cJSON *j = read_json(path, false, "the revoked credentials", err, errlen);
	if (!j)
		return -EINVAL;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "revoked");
	int rc = 0;
	if (!cJSON_IsArray(a)) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s: \"revoked\" must be an array of serial numbers", path);
	}
	size_t n = rc ? 0 : (size_t)cJSON_GetArraySize(a);
	if (!rc && n && !(out->serials = calloc(n, sizeof(*out->serials))))
		rc = -ENOMEM, snprintf(err, errlen, "%s: out of memory", path);
	const cJSON *v;
	size_t i = 0;
	if (!rc)
		cJSON_ArrayForEach(v, a)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9007199254740992.0 ||
			    v->valuedouble != (double)(uint64_t)v->valuedouble) {
				rc = -EINVAL;
				snprintf(err, errlen, "%s: \"revoked\"[%zu] is not a serial number", path, i);
				break;
			}
			out->serials[i++] = (uint64_t)v->valuedouble;
		}
	cJSON_Delete(j);
	if (rc) {
		sym_revoked_free(out);
		return rc;
	}
	out->n = i;
	qsort(out->serials, out->n, sizeof(*out->serials), cmp_u64);
	return 0;
}

/* ---- writing ---- */

/* Writes text to path: a new file (O_EXCL, mode 0600) when exclusive, else
 * atomically replacing it (a temporary file renamed over it). */
static int write_file(const char *path, const char *text, bool exclusive, mode_t mode, char *err, size_t errlen)
{
	char tmp[1100];
	const char *target = path;
	if (!exclusive) {
		snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
		target = tmp;
	}
	int fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		int e = errno;
		if (e == EEXIST && exclusive)
			return snprintf(err, errlen, "%s exists already; it is left as it is", path), -EEXIST;
		return snprintf(err, errlen, "%s: %s", target, strerror(e)), -e;
	}
	size_t len = strlen(text), done = 0;
	int e = 0;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			break;
		}
		done += (size_t)n;
	}
	if (!e && fsync(fd))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && !exclusive && rename(tmp, path))
		e = errno;
	if (e) {
		unlink(target);
		return snprintf(err, errlen, "%s: writing: %s", path, strerror(e)), -e;
	}
	return 0;
}

/* Writes j (then frees it); secret: wipes the text after. */
static int write_json(const char *path, cJSON *j, bool exclusive, mode_t mode, bool secret, char *err,
		      size_t errlen)
{
	char *text = j ? cJSON_Print(j) : NULL;
	cJSON_Delete(j);
	if (!text)
		return snprintf(err, errlen, "%s: out of memory", path), -ENOMEM;
	size_t len = strlen(text);
	char *full = malloc(len + 2);
	int rc;
	if (!full) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
	} else {
		memcpy(full, text, len);
		full[len] = '\n';
		full[len + 1] = '\0';
		rc = write_file(path, full, exclusive, mode, err, errlen);
		if (secret)
			sodium_memzero(full, len + 1);
		free(full);
	}
	if (secret)
		sodium_memzero(text, len);
	free(text);
	return rc;
}

static void join(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

void sym_cred_path(const char *dir, int role, uint32_t id, char *out, size_t len)
{
	snprintf(out, len, "%s/%s-%" PRIu32 ".cred", dir, sym_cred_role_name(role), id);
}

static int add_hex(cJSON *o, const char *key, const uint8_t *b, size_t len)
{
	char *h = hex_of(b, len);
	if (!h)
		return -ENOMEM;
	cJSON *s = cJSON_AddStringToObject(o, key, h);
	sodium_memzero(h, 2 * len);
	free(h);
	return s ? 0 : -ENOMEM;
}

int sym_ca_create(const char *dir, char *err, size_t errlen)
{
	if (sodium_init() < 0)
		return snprintf(err, errlen, "cannot initialise libsodium"), -EIO;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return snprintf(err, errlen, "%s: %s", dir, strerror(errno)), -errno;
	char path[1100];
	uint8_t pk[SYM_CRED_PK], sk[SYM_CRED_SK];
	crypto_sign_keypair(pk, sk);
	cJSON *key = cJSON_CreateObject();
	if (key && (!cJSON_AddNumberToObject(key, "symphony_ca", 1) || add_hex(key, "public_key", pk, SYM_CRED_PK) ||
		    add_hex(key, "secret_key", sk, SYM_CRED_SK))) {
		cJSON_Delete(key);
		key = NULL;
	}
	sodium_memzero(sk, sizeof(sk));
	join(path, sizeof(path), dir, "ca.key");
	int rc = write_json(path, key, true, 0600, true, err, errlen);
	if (rc)
		return rc;
	cJSON *pub = cJSON_CreateObject();
	if (pub && (!cJSON_AddNumberToObject(pub, "symphony_ca", 1) || add_hex(pub, "public_key", pk, SYM_CRED_PK))) {
		cJSON_Delete(pub);
		pub = NULL;
	}
	join(path, sizeof(path), dir, "ca.pub");
	if ((rc = write_json(path, pub, false, 0644, false, err, errlen)))
		return rc;
	cJSON *iss = cJSON_CreateObject();
	if (iss && (!cJSON_AddNumberToObject(iss, "next_serial", 1) || !cJSON_AddArrayToObject(iss, "issued"))) {
		cJSON_Delete(iss);
		iss = NULL;
	}
	join(path, sizeof(path), dir, "issued.json");
	return write_json(path, iss, false, 0644, false, err, errlen);
}

/* The CA's key pair from DIR/ca.key. */
static int ca_secret(const char *dir, uint8_t pk[SYM_CRED_PK], uint8_t sk[SYM_CRED_SK], char *err, size_t errlen)
{
	char path[1100];
	join(path, sizeof(path), dir, "ca.key");
	cJSON *j = read_json(path, true, "the cluster's CA (symphony keygen ca DIR)", err, errlen);
	if (!j)
		return -EINVAL;
	int rc = hex_field(j, "public_key", pk, SYM_CRED_PK, path, err, errlen);
	if (!rc)
		rc = hex_field(j, "secret_key", sk, SYM_CRED_SK, path, err, errlen);
	uint8_t derived[SYM_CRED_PK];
	if (!rc && (crypto_sign_ed25519_sk_to_pk(derived, sk) || sodium_memcmp(derived, pk, SYM_CRED_PK)))
		rc = -EINVAL, snprintf(err, errlen, "%s: its secret key does not match its public key", path);
	cJSON_Delete(j);
	if (rc)
		sodium_memzero(sk, SYM_CRED_SK);
	return rc;
}

static cJSON *issued_load(const char *dir, char *err, size_t errlen)
{
	char path[1100];
	join(path, sizeof(path), dir, "issued.json");
	cJSON *j = read_json(path, false, "the CA's register", err, errlen);
	if (!j)
		return NULL;
	const cJSON *next = cJSON_GetObjectItemCaseSensitive(j, "next_serial");
	if (!cJSON_IsNumber(next) || next->valuedouble < 1 || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "issued"))) {
		snprintf(err, errlen, "%s: expected {\"next_serial\": N, \"issued\": [...]}", path);
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

int sym_ca_issue(const char *dir, int role, uint32_t id, bool replace, uint64_t *serial_out, char *path_out,
		 size_t path_len, char *err, size_t errlen)
{
	if (sodium_init() < 0)
		return snprintf(err, errlen, "cannot initialise libsodium"), -EIO;
	if (role < SYM_CRED_SCHEDD || role > SYM_CRED_BACKEND)
		return snprintf(err, errlen, "unknown role %d", role), -EINVAL;
	uint8_t ca_pk[SYM_CRED_PK], ca_sk[SYM_CRED_SK];
	int rc = ca_secret(dir, ca_pk, ca_sk, err, errlen);
	if (rc)
		return rc;
	cJSON *iss = issued_load(dir, err, errlen);
	if (!iss) {
		sodium_memzero(ca_sk, sizeof(ca_sk));
		return -EINVAL;
	}
	char path[1100];
	sym_cred_path(dir, role, id, path, sizeof(path));
	/* the serials of this role and id issued before: revoked when replaced */
	uint64_t old[64];
	size_t nold = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(iss, "issued"))
	{
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "role"), *i = cJSON_GetObjectItemCaseSensitive(e, "id"),
			    *s = cJSON_GetObjectItemCaseSensitive(e, "serial");
		if (cJSON_IsString(r) && sym_cred_role_of(r->valuestring) == role && cJSON_IsNumber(i) &&
		    i->valuedouble == (double)id && cJSON_IsNumber(s) && nold < sizeof(old) / sizeof(old[0]))
			old[nold++] = (uint64_t)s->valuedouble;
	}
	if (!replace && access(path, F_OK) == 0) {
		sodium_memzero(ca_sk, sizeof(ca_sk));
		cJSON_Delete(iss);
		return snprintf(err, errlen, "%s exists already (symphony keygen issue --replace: a new key, the old "
				"one revoked)", path), -EEXIST;
	}
	cJSON *next = cJSON_GetObjectItemCaseSensitive(iss, "next_serial");
	uint64_t serial = (uint64_t)next->valuedouble;
	cJSON_SetNumberValue(next, (double)(serial + 1));
	uint8_t pk[SYM_CRED_PK], sk[SYM_CRED_SK];
	struct sym_cred c;
	crypto_sign_keypair(pk, sk);
	cred_sign(c.wire, role, id, serial, pk, ca_sk);
	sodium_memzero(ca_sk, sizeof(ca_sk));
	cJSON *cf = cJSON_CreateObject();
	if (cf && (!cJSON_AddNumberToObject(cf, "symphony_credential", 1) ||
		   !cJSON_AddStringToObject(cf, "role", sym_cred_role_name(role)) ||
		   !cJSON_AddNumberToObject(cf, "id", id) || !cJSON_AddNumberToObject(cf, "serial", (double)serial) ||
		   add_hex(cf, "credential", c.wire, SYM_CRED_WIRE) || add_hex(cf, "secret_key", sk, SYM_CRED_SK))) {
		cJSON_Delete(cf);
		cf = NULL;
	}
	sodium_memzero(sk, sizeof(sk));
	char tmp[1200];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	rc = write_json(tmp, cf, true, 0600, true, err, errlen);
	if (!rc && rename(tmp, path))
		rc = -errno, snprintf(err, errlen, "%s: %s", path, strerror(errno)), unlink(tmp);
	cJSON *rec = rc ? NULL : cJSON_CreateObject();
	time_t now = time(NULL);
	char when[40] = "";
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (rec && (!cJSON_AddNumberToObject(rec, "serial", (double)serial) ||
		    !cJSON_AddStringToObject(rec, "role", sym_cred_role_name(role)) || !cJSON_AddNumberToObject(rec, "id", id) ||
		    add_hex(rec, "public_key", pk, SYM_CRED_PK) || !cJSON_AddStringToObject(rec, "issued", when))) {
		cJSON_Delete(rec);
		rec = NULL;
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
	}
	if (rec)
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(iss, "issued"), rec);
	char ipath[1100];
	join(ipath, sizeof(ipath), dir, "issued.json");
	if (!rc)
		rc = write_json(ipath, iss, false, 0644, false, err, errlen);
	else
		cJSON_Delete(iss);
	for (size_t i = 0; !rc && replace && i < nold; i++)
		rc = sym_ca_revoke(dir, old[i], err, errlen);
	if (!rc) {
		if (serial_out)
			*serial_out = serial;
		if (path_out)
			snprintf(path_out, path_len, "%s", path);
	}
	return rc;
}

int sym_ca_revoke(const char *dir, uint64_t serial, char *err, size_t errlen)
{
	cJSON *iss = issued_load(dir, err, errlen);
	if (!iss)
		return -EINVAL;
	bool known = false;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(iss, "issued"))
	{
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "serial");
		known |= cJSON_IsNumber(s) && (uint64_t)s->valuedouble == serial;
	}
	cJSON_Delete(iss);
	if (!known)
		return snprintf(err, errlen, "serial %" PRIu64 " was not issued by the CA in %s (symphony keygen list %s)",
				serial, dir, dir), -ENOENT;
	char path[1100];
	join(path, sizeof(path), dir, "revoked.json");
	struct sym_revoked r;
	int rc = sym_revoked_load(path, true, &r, err, errlen);
	if (rc)
		return rc;
	bool had = sym_revoked_has(&r, serial);
	cJSON *j = had ? NULL : cJSON_CreateObject();
	cJSON *a = j ? cJSON_AddArrayToObject(j, "revoked") : NULL;
	for (size_t i = 0; a && i < r.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)r.serials[i]));
	if (a)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)serial));
	sym_revoked_free(&r);
	if (had)
		return 0;
	if (!a) {
		cJSON_Delete(j);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	return write_json(path, j, false, 0644, false, err, errlen);
}

int sym_ca_serials_of(const char *dir, int role, uint32_t id, uint64_t *out, size_t max, size_t *n, char *err,
		      size_t errlen)
{
	*n = 0;
	cJSON *iss = issued_load(dir, err, errlen);
	if (!iss)
		return -EINVAL;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(iss, "issued"))
	{
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "role"), *i = cJSON_GetObjectItemCaseSensitive(e, "id"),
			    *s = cJSON_GetObjectItemCaseSensitive(e, "serial");
		if (cJSON_IsString(r) && sym_cred_role_of(r->valuestring) == role && cJSON_IsNumber(i) &&
		    i->valuedouble == (double)id && cJSON_IsNumber(s) && *n < max)
			out[(*n)++] = (uint64_t)s->valuedouble;
	}
	cJSON_Delete(iss);
	return 0;
}

int sym_ca_list(const char *dir, char *err, size_t errlen)
{
	cJSON *iss = issued_load(dir, err, errlen);
	if (!iss)
		return -EINVAL;
	char path[1100];
	join(path, sizeof(path), dir, "revoked.json");
	struct sym_revoked r;
	int rc = sym_revoked_load(path, true, &r, err, errlen);
	if (rc) {
		cJSON_Delete(iss);
		return rc;
	}
	printf("%-8s %-9s %6s  %-20s  %-7s  %s\n", "serial", "role", "id", "issued", "state", "public key");
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(iss, "issued"))
	{
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "serial"), *ro = cJSON_GetObjectItemCaseSensitive(e, "role"),
			    *id = cJSON_GetObjectItemCaseSensitive(e, "id"), *w = cJSON_GetObjectItemCaseSensitive(e, "issued"),
			    *pk = cJSON_GetObjectItemCaseSensitive(e, "public_key");
		uint64_t serial = cJSON_IsNumber(s) ? (uint64_t)s->valuedouble : 0;
		printf("%-8" PRIu64 " %-9s %6.0f  %-20s  %-7s  %.16s...\n", serial, cJSON_IsString(ro) ? ro->valuestring : "?",
		       cJSON_IsNumber(id) ? id->valuedouble : -1.0, cJSON_IsString(w) ? w->valuestring : "?",
		       sym_revoked_has(&r, serial) ? "revoked" : "valid", cJSON_IsString(pk) ? pk->valuestring : "?");
	}
	sym_revoked_free(&r);
	cJSON_Delete(iss);
	return 0;
}

/* ---- in memory ---- */

void sym_ca_mem(uint8_t pk[SYM_CRED_PK], uint8_t sk[SYM_CRED_SK])
{
	if (sodium_init() < 0)
		abort();
	crypto_sign_keypair(pk, sk);
}

void sym_cred_mem(const uint8_t ca_pk[SYM_CRED_PK], const uint8_t ca_sk[SYM_CRED_SK], int role, uint32_t id,
		  uint64_t serial, struct sym_cred *out)
{
	if (sodium_init() < 0)
		abort();
	uint8_t pk[SYM_CRED_PK];
	memset(out, 0, sizeof(*out));
	crypto_sign_keypair(pk, out->sk);
	cred_sign(out->wire, role, id, serial, pk, ca_sk);
	out->role = (uint8_t)role;
	out->id = id;
	out->serial = serial;
	memcpy(out->ca_pk, ca_pk, SYM_CRED_PK);
}
