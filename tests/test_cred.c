/* tests/test_cred.c - per-member credentials (runtime/cred.h): the CA's files, issuing,
 * replacing and revoking, and every way a credential or its files can be wrong.
 *
 *   - a CA is made once (a second is refused, never overwritten), its secret key 0600;
 *   - an issued credential loads with the CA's public key and names its role, id and
 *     serial; its file is 0600; a second issue is refused, --replace gives a new serial
 *     and revokes the old; serials_of lists both;
 *   - refused on load: another CA's public key, a flipped bit in the credential (its id,
 *     its signature), a secret key that is not the credential's, a file others can read,
 *     hex of the wrong length, not JSON;
 *   - the wire check: bad magic, version, role; in-memory credentials check too;
 *   - revoked.json: a missing file is none (when allowed), serials sorted, bad entries named;
 *     revoking an unknown serial is refused, twice is fine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/cred.h"
#include "tests/testutil.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/symphony-cred-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/keys/%s", dir, name);
}

static int mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return (int)(st.st_mode & 0777);
}

static void write_file(const char *path, const char *text, int mode)
{
	unlink(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, (mode_t)mode), 0);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void load_ca(uint8_t pk[SYM_CRED_PK])
{
	char p[128], err[512];
	path_of(p, sizeof(p), "ca.pub");
	int rc = sym_ca_load(p, pk, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
}

static void test_issue_and_load(void **state)
{
	(void)state;
	char keys[96], p[128], err[512] = "", out[200];
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	assert_int_equal(sym_ca_create(keys, err, sizeof(err)), 0);
	path_of(p, sizeof(p), "ca.key");
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(sym_ca_create(keys, err, sizeof(err)), -EEXIST);
	assert_contains(err, "ca.key");
	uint64_t serial = 0;
	assert_int_equal(sym_ca_issue(keys, SYM_CRED_BACKEND, 3, false, &serial, out, sizeof(out), err, sizeof(err)), 0);
	assert_int_equal(serial, 1);
	path_of(p, sizeof(p), "backend-3.cred");
	assert_string_equal(out, p);
	assert_int_equal(mode_of(p), 0600);
	uint8_t ca[SYM_CRED_PK];
	load_ca(ca);
	struct sym_cred c;
	assert_int_equal(sym_cred_load(p, ca, &c, err, sizeof(err)), 0);
	assert_int_equal(c.role, SYM_CRED_BACKEND);
	assert_int_equal(c.id, 3);
	assert_int_equal(c.serial, 1);
	assert_memory_equal(c.ca_pk, ca, SYM_CRED_PK);
	/* a second: refused; --replace: a new serial, the old one revoked */
	assert_int_equal(sym_ca_issue(keys, SYM_CRED_BACKEND, 3, false, &serial, NULL, 0, err, sizeof(err)), -EEXIST);
	assert_contains(err, "--replace");
	assert_int_equal(sym_ca_issue(keys, SYM_CRED_BACKEND, 3, true, &serial, NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(serial, 2);
	assert_int_equal(sym_ca_issue(keys, SYM_CRED_FRONTEND, 0, false, &serial, NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(serial, 3);
	uint64_t s[4];
	size_t n;
	assert_int_equal(sym_ca_serials_of(keys, SYM_CRED_BACKEND, 3, s, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0], 1);
	assert_int_equal(s[1], 2);
	struct sym_revoked r;
	path_of(p, sizeof(p), "revoked.json");
	assert_int_equal(sym_revoked_load(p, false, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 1);
	assert_true(sym_revoked_has(&r, 1));
	assert_false(sym_revoked_has(&r, 2));
	sym_revoked_free(&r);
	/* revoking: unknown refused, twice fine, sorted */
	assert_int_equal(sym_ca_revoke(keys, 99, err, sizeof(err)), -ENOENT);
	assert_contains(err, "serial 99 was not issued");
	assert_int_equal(sym_ca_revoke(keys, 3, err, sizeof(err)), 0);
	assert_int_equal(sym_ca_revoke(keys, 3, err, sizeof(err)), 0);
	assert_int_equal(sym_revoked_load(p, false, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.serials[0], 1);
	assert_int_equal(r.serials[1], 3);
	sym_revoked_free(&r);
	assert_int_equal(sym_ca_issue(keys, 9, 0, false, &serial, NULL, 0, err, sizeof(err)), -EINVAL);
	assert_contains(err, "unknown role");
}

/* Every way a credential file is wrong: refused, naming the file and what is wrong. */
static void test_bad_credentials(void **state)
{
	(void)state;
	char p[128], q[128], err[512] = "";
	uint8_t ca[SYM_CRED_PK];
	load_ca(ca);
	path_of(p, sizeof(p), "backend-3.cred");
	struct sym_cred c;
	/* another CA */
	uint8_t other_pk[SYM_CRED_PK], other_sk[SYM_CRED_SK];
	sym_ca_mem(other_pk, other_sk);
	assert_int_equal(sym_cred_load(p, other_pk, &c, err, sizeof(err)), -EPERM);
	assert_contains(err, "another cluster's CA");
	/* flipped bits: the id, the signature */
	char good[8192];
	snprintf(good, sizeof(good), "%s", read_text(p));
	char *h = strstr(good, "\"credential\":");
	assert_non_null(h);
	h = strchr(h + 13, '"') + 1;
	path_of(q, sizeof(q), "bad.cred");
	const int offsets[] = { 2 * 8 + 1, 2 * 100 };
	for (int k = 0; k < 2; k++) {
		char t[8192];
		snprintf(t, sizeof(t), "%s", good);
		char *d = t + (h - good) + offsets[k];
		*d = *d == '0' ? '1' : '0';
		write_file(q, t, 0600);
		assert_int_equal(sym_cred_load(q, ca, &c, err, sizeof(err)), -EPERM);
		assert_contains(err, "did not sign");
	}
	/* a secret key that is not the credential's: backend 3's credential, frontend 0's key */
	char fe[8192], t[8192];
	path_of(q, sizeof(q), "frontend-0.cred");
	snprintf(fe, sizeof(fe), "%s", read_text(q));
	char *fsk = strstr(fe, "\"secret_key\":"), *gsk = strstr(good, "\"secret_key\":");
	assert_non_null(fsk);
	assert_non_null(gsk);
	fsk = strchr(fsk + 13, '"') + 1;
	gsk = strchr(gsk + 13, '"') + 1;
	snprintf(t, sizeof(t), "%s", good);
	memcpy(t + (gsk - good), fsk, 2 * SYM_CRED_SK);
	path_of(q, sizeof(q), "bad.cred");
	write_file(q, t, 0600);
	assert_int_equal(sym_cred_load(q, ca, &c, err, sizeof(err)), -EINVAL);
	assert_contains(err, "not the one its credential names");
	/* readable by others */
	write_file(q, good, 0644);
	assert_true(sym_cred_load(q, ca, &c, err, sizeof(err)) < 0);
	assert_contains(err, "bad.cred");
	/* hex of the wrong length; not JSON; missing */
	write_file(q, "{\"credential\": \"abcd\", \"secret_key\": \"00\"}", 0600);
	assert_int_equal(sym_cred_load(q, ca, &c, err, sizeof(err)), -EINVAL);
	assert_contains(err, "\"credential\" must be 232 hexadecimal digits");
	write_file(q, "not json", 0600);
	assert_int_equal(sym_cred_load(q, ca, &c, err, sizeof(err)), -EINVAL);
	assert_contains(err, "not a JSON object");
	path_of(q, sizeof(q), "nobody-1.cred");
	assert_true(sym_cred_load(q, ca, &c, err, sizeof(err)) < 0);
	assert_contains(err, "nobody-1.cred");
	path_of(q, sizeof(q), "bad.pub");
	write_file(q, "{\"public_key\": 5}", 0644);
	assert_int_equal(sym_ca_load(q, ca, err, sizeof(err)), -EINVAL);
	assert_contains(err, "\"public_key\" must be 64 hexadecimal digits");
}

/* The wire form: what a peer sends in the handshake. */
static void test_wire(void **state)
{
	(void)state;
	uint8_t pk[SYM_CRED_PK], sk[SYM_CRED_SK], got_pk[SYM_CRED_PK];
	sym_ca_mem(pk, sk);
	struct sym_cred c;
	sym_cred_mem(pk, sk, SYM_CRED_SCHEDD, 1, 42, &c);
	uint8_t role;
	uint32_t id;
	uint64_t serial;
	char err[200];
	assert_int_equal(sym_cred_check(c.wire, pk, &role, &id, &serial, got_pk, err, sizeof(err)), 0);
	assert_int_equal(role, SYM_CRED_SCHEDD);
	assert_int_equal(id, 1);
	assert_int_equal(serial, 42);
	struct {
		int at;
		uint8_t value;
		int rc;
		const char *why;
	} bad[] = { { 0, 'X', -EINVAL, "not a symphony credential" }, { 4, 2, -EINVAL, "not a symphony credential" },
		    { 5, 4, -EINVAL, "unknown role 4" },	      { 5, 2, -EPERM, "did not sign" },
		    { 8, 2, -EPERM, "did not sign" },		      { 115, 0x55, -EPERM, "did not sign" } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t w[SYM_CRED_WIRE];
		memcpy(w, c.wire, sizeof(w));
		w[bad[i].at] = w[bad[i].at] == bad[i].value ? (uint8_t)(bad[i].value + 1) : bad[i].value;
		assert_int_equal(sym_cred_check(w, pk, &role, &id, &serial, NULL, err, sizeof(err)), bad[i].rc);
		assert_contains(err, bad[i].why);
	}
	assert_string_equal(sym_cred_role_name(SYM_CRED_FRONTEND), "frontend");
	assert_int_equal(sym_cred_role_of("backend"), SYM_CRED_BACKEND);
	assert_int_equal(sym_cred_role_of("gpu"), 0);
}

static void test_revoked_file(void **state)
{
	(void)state;
	char p[128], err[512];
	struct sym_revoked r;
	path_of(p, sizeof(p), "none.json");
	assert_int_equal(sym_revoked_load(p, true, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 0);
	assert_true(sym_revoked_load(p, false, &r, err, sizeof(err)) < 0);
	assert_contains(err, "none.json");
	path_of(p, sizeof(p), "r.json");
	write_file(p, "{\"revoked\": [9, 3, 5]}", 0644);
	assert_int_equal(sym_revoked_load(p, false, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.serials[0], 3);
	assert_int_equal(r.serials[2], 9);
	assert_true(sym_revoked_has(&r, 5));
	assert_false(sym_revoked_has(&r, 4));
	sym_revoked_free(&r);
	const char *bad[] = { "{\"revoked\": 3}", "{\"revoked\": [0]}", "{\"revoked\": [1.5]}", "{\"revoked\": [\"7\"]}",
			      "[]" };
	const char *why[] = { "must be an array", "[0] is not a serial", "[0] is not a serial", "[0] is not a serial",
			      "not a JSON object" };
	for (int i = 0; i < 5; i++) {
		write_file(p, bad[i], 0644);
		assert_int_equal(sym_revoked_load(p, false, &r, err, sizeof(err)), -EINVAL);
		assert_contains(err, why[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_and_load),
		cmocka_unit_test(test_bad_credentials),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_revoked_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
