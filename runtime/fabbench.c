/* runtime/fabbench.c - `symphony fabbench` (see fabbench.h).
 *
 * The echo side runs on its own thread with its own sym_fab, as a frontend
 * would; the measuring side polls on the calling thread. Both spin on
 * sym_fab_poll: the numbers are the transport's, not a wake-up's.
 * Messages: the first byte says what it is.
 *   'H' echo -> measurer: the region's address, key and size (3 x 8 bytes)
 *   'P' measurer -> echo: a ping, echoed back as is
 *   'S' measurer -> echo: one of a stream of STREAM_BYTES-byte messages sent back to back
 *       (byte 1: 1 on the last, which the echo answers with 'C')
 *   'B' measurer -> echo: done
 */
#include "runtime/fabbench.h"
#include "runtime/cred.h"
#include "runtime/fabric.h"
#include "runtime/inputseal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "experiment/output.h"
#include "experiment/result.h"

#define PING_BYTES 64
#define WARMUP 1000
#define STUCK_NS (10 * 1000000000LL) /* no progress for this long: give up */
#define STREAM_BYTES 100 /* about a META or a small PLAN */
#define SEAL_ID 7     /* with auth: the request id the region is sealed for, as a frontend's input */
#define SEAL_ITERS 200 /* with auth: times each seal and open is timed on its own (CPU only) */

struct bench {
	const char *provider;
	long iters, reads;
	size_t size;
	bool auth;		/* both sides authenticate; messages sealed; the region is a sealed input */
	uint8_t seal_key[SYM_INPUT_KEY];
	struct sym_fab *echo_f; /* owned by the echo thread once it starts */
	atomic_bool stop;	/* the measurer gave up */
	char echo_err[256];
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

/* ---- the echo side ---- */

static void *echo_main(void *arg)
{
	struct bench *b = arg;
	struct sym_fab *f = b->echo_f;
	char err[256];
	size_t bytes = b->size + (b->auth ? SYM_INPUT_TRAILER : 0);
	uint8_t *region = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	struct sym_fab_mr *mr = NULL;
	if (!region) {
		snprintf(b->echo_err, sizeof(b->echo_err), "out of memory for a %zu-byte region", b->size);
		return NULL;
	}
	for (size_t i = 0; i < b->size; i++)
		region[i] = pattern(i);
	if (b->auth) /* as a frontend seals an input in its pool (encrypted, the default) */
		sym_input_seal(b->seal_key, SEAL_ID, region, b->size, true);
	if (sym_fab_mr_reg(f, region, bytes, SYM_FAB_REMOTE_READ, &mr, err, sizeof(err))) {
		snprintf(b->echo_err, sizeof(b->echo_err), "%s", err);
		free(region);
		return NULL;
	}
	struct sym_fab_event ev[16];
	int64_t last = mono_ns();
	bool done = false;
	while (!done && !atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		int n = sym_fab_poll(f, ev, 16);
		if (n < 0) {
			snprintf(b->echo_err, sizeof(b->echo_err), "%s", sym_fab_last_error(f));
			break;
		}
		if (!n && mono_ns() - last > STUCK_NS) {
			snprintf(b->echo_err, sizeof(b->echo_err), "echo: no message for %lld s",
				 STUCK_NS / 1000000000LL);
			break;
		}
		if (n)
			last = mono_ns();
		for (int i = 0; i < n && !done; i++) {
			int rc = 0;
			if (ev[i].type == SYM_FAB_ACCEPTED) {
				uint8_t h[25] = { 'H' };
				put64(h + 1, sym_fab_mr_addr(mr, region));
				put64(h + 9, sym_fab_mr_key(mr));
				put64(h + 17, b->size);
				rc = sym_fab_send(ev[i].conn, h, sizeof(h));
			} else if (ev[i].type == SYM_FAB_MSG && ev[i].len && ev[i].data[0] == 'P') {
				rc = sym_fab_send(ev[i].conn, ev[i].data, ev[i].len);
			} else if (ev[i].type == SYM_FAB_MSG && ev[i].len == STREAM_BYTES && ev[i].data[0] == 'S') {
				if (ev[i].data[1])
					rc = sym_fab_send(ev[i].conn, "C", 1);
			} else if (ev[i].type == SYM_FAB_MSG || ev[i].type == SYM_FAB_CLOSED) {
				if (ev[i].type == SYM_FAB_CLOSED)
					snprintf(b->echo_err, sizeof(b->echo_err), "echo: %s", ev[i].reason);
				sym_fab_close(ev[i].conn);
				done = true;
			}
			if (rc) {
				snprintf(b->echo_err, sizeof(b->echo_err), "echo: %s", sym_fab_last_error(f));
				done = true;
			}
		}
	}
	sym_fab_mr_close(mr);
	free(region);
	return NULL;
}

/* ---- the measuring side ---- */

struct side {
	struct sym_fab *f;
	struct sym_fab_conn *c;
	struct sym_fab_event ev;
};

/* Spins until the next event; -1 with a message after STUCK_NS without one. */
static int next_event(struct side *s, const char *waiting)
{
	int64_t end = mono_ns() + STUCK_NS;
	for (;;) {
		int n = sym_fab_poll(s->f, &s->ev, 1);
		if (n < 0) {
			fprintf(stderr, "fabbench: %s\n", sym_fab_last_error(s->f));
			return -1;
		}
		if (n) {
			if (s->ev.type != SYM_FAB_CLOSED)
				return 0;
			fprintf(stderr, "fabbench: waiting for %s: %s\n", waiting, s->ev.reason);
			return -1;
		}
		if (mono_ns() > end) {
			fprintf(stderr, "fabbench: waiting for %s: nothing within %lld s\n", waiting, STUCK_NS / 1000000000LL);
			return -1;
		}
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct stats {
	double p50, p99, max;
};

static struct stats summarize(int64_t *ns, long n)
{
	qsort(ns, (size_t)n, sizeof(*ns), cmp_i64);
	long i99 = (n * 99 + 99) / 100 - 1; /* the smallest value with at least 99% at or below it */
	return (struct stats){ ns[n / 2] / 1e3, ns[i99 < 0 ? 0 : i99] / 1e3, ns[n - 1] / 1e3 };
}

static int ping_pong(struct side *s, long iters, int64_t *ns)
{
	uint8_t ping[PING_BYTES];
	memset(ping, 0, sizeof(ping));
	ping[0] = 'P';
	for (long i = -WARMUP; i < iters; i++) {
		put64(ping + 1, (uint64_t)i);
		int64_t t0 = mono_ns();
		if (sym_fab_send(s->c, ping, sizeof(ping))) {
			fprintf(stderr, "fabbench: %s\n", sym_fab_last_error(s->f));
			return -1;
		}
		if (next_event(s, "an echo"))
			return -1;
		int64_t t1 = mono_ns();
		if (s->ev.type != SYM_FAB_MSG || s->ev.len != sizeof(ping) || get64(s->ev.data + 1) != (uint64_t)i) {
			fprintf(stderr, "fabbench: round trip %ld: wrong echo\n", i);
			return -1;
		}
		if (i >= 0)
			ns[i] = t1 - t0;
	}
	return 0;
}

/* n messages of STREAM_BYTES sent back to back (each send waits while the
 * connection's sends are all in flight), until the echo has taken the last:
 * messages per second one way, what a scheduler's connection carries. */
static int stream(struct side *s, long n, double *per_s)
{
	uint8_t m[STREAM_BYTES];
	memset(m, 0, sizeof(m));
	m[0] = 'S';
	int64_t t0 = mono_ns();
	for (long i = 0; i < n; i++) {
		m[1] = i == n - 1;
		put64(m + 2, (uint64_t)i);
		if (sym_fab_send(s->c, m, sizeof(m))) {
			fprintf(stderr, "fabbench: stream message %ld: %s\n", i, sym_fab_last_error(s->f));
			return -1;
		}
	}
	if (next_event(s, "the end of the stream"))
		return -1;
	if (s->ev.type != SYM_FAB_MSG || s->ev.len != 1 || s->ev.data[0] != 'C') {
		fprintf(stderr, "fabbench: the stream's end: an unexpected event\n");
		return -1;
	}
	*per_s = (double)n / ((double)(mono_ns() - t0) / 1e9);
	return 0;
}

/* n reads of the region; with a seal key (auth), each is opened as a backend
 * opens an input it read, and its time includes that. */
static int reads(struct side *s, long n, uint64_t raddr, uint64_t rkey, size_t size, const uint8_t *seal_key,
		 int64_t *ns)
{
	char err[256];
	size_t bytes = size + (seal_key ? SYM_INPUT_TRAILER : 0);
	uint8_t *buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	struct sym_fab_mr *mr;
	if (!buf) {
		fprintf(stderr, "fabbench: out of memory for a %zu-byte buffer\n", size);
		return -1;
	}
	if (sym_fab_mr_reg(s->f, buf, bytes, SYM_FAB_LOCAL_READ_TARGET, &mr, err, sizeof(err))) {
		fprintf(stderr, "fabbench: %s\n", err);
		free(buf);
		return -1;
	}
	int rc = 0;
	long warm = n < WARMUP / 4 ? n : WARMUP / 4;
	for (long i = -warm; i < n && !rc; i++) {
		if (i == -warm || i == n - 1)
			memset(buf, 0, bytes);
		int64_t t0 = mono_ns();
		if (sym_fab_read(s->c, buf, bytes, mr, raddr, rkey, buf)) {
			fprintf(stderr, "fabbench: %s\n", sym_fab_last_error(s->f));
			rc = -1;
			break;
		}
		if (next_event(s, "a read's completion")) {
			rc = -1;
			break;
		}
		if (s->ev.type != SYM_FAB_READ || s->ev.status) {
			fprintf(stderr, "fabbench: read %ld failed: %s\n", i,
				s->ev.type == SYM_FAB_READ ? strerror(-s->ev.status) : "an unexpected event");
			rc = -1;
			break;
		}
		if (seal_key && sym_input_open(seal_key, SEAL_ID, buf, size, true)) {
			fprintf(stderr, "fabbench: read %ld: the input read fails its seal\n", i);
			rc = -1;
			break;
		}
		int64_t t1 = mono_ns();
		if (i >= 0)
			ns[i] = t1 - t0;
		if (i == -warm || i == n - 1)
			for (size_t k = 0; k < size; k++)
				if (buf[k] != pattern(k)) {
					fprintf(stderr, "fabbench: read %ld: byte %zu differs\n", i, k);
					rc = -1;
					break;
				}
	}
	sym_fab_mr_close(mr);
	free(buf);
	return rc;
}

/* With auth: what sealing and opening a size-byte input costs a frontend's
 * and a backend's CPU, each way (encrypted, authenticated only), p50 of
 * SEAL_ITERS timings each: seal[0..1] encrypt, authenticate; open[0..1]. */
static int seal_costs(const uint8_t *key, size_t size, double seal_us[2], double open_us[2])
{
	uint8_t *buf = malloc(size + SYM_INPUT_TRAILER);
	int64_t *ns = malloc(SEAL_ITERS * sizeof(*ns)), *ons = malloc(SEAL_ITERS * sizeof(*ons));
	int rc = 0;
	if (!buf || !ns || !ons) {
		fprintf(stderr, "fabbench: out of memory\n");
		rc = -1;
	}
	for (int enc = 1; enc >= 0 && !rc; enc--) {
		for (long i = 0; i < SEAL_ITERS && !rc; i++) {
			for (size_t k = 0; k < size; k += 64)
				buf[k] = pattern(k + (size_t)i);
			int64_t t0 = mono_ns();
			sym_input_seal(key, (uint64_t)i, buf, size, enc);
			int64_t t1 = mono_ns();
			if (sym_input_open(key, (uint64_t)i, buf, size, enc)) {
				fprintf(stderr, "fabbench: an input sealed here fails its seal\n");
				rc = -1;
			}
			ns[i] = t1 - t0;
			ons[i] = mono_ns() - t1;
		}
		if (!rc) {
			seal_us[1 - enc] = summarize(ns, SEAL_ITERS).p50;
			open_us[1 - enc] = summarize(ons, SEAL_ITERS).p50;
		}
	}
	free(buf);
	free(ns);
	free(ons);
	return rc;
}

/* ---- options and output ---- */

static cJSON *stats_json(struct stats st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "p50", st.p50);
	cJSON_AddNumberToObject(o, "p99", st.p99);
	cJSON_AddNumberToObject(o, "max", st.max);
	return o;
}

static int write_json(const char *path, const struct bench *b, const char *descr, struct stats rtt, struct stats rd,
		      double msgs_per_s, const double seal_us[2], const double open_us[2])
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "provider", b->provider);
	cJSON_AddStringToObject(o, "transport", descr);
	cJSON_AddBoolToObject(o, "authenticated", b->auth);
	cJSON_AddItemToObject(o, "rtt_us", stats_json(rtt));
	cJSON_AddItemToObject(o, "read150k_us", stats_json(rd));
	cJSON_AddNumberToObject(o, "iterations", (double)b->iters);
	cJSON_AddNumberToObject(o, "reads", (double)b->reads);
	cJSON_AddNumberToObject(o, "read_bytes", (double)b->size);
	cJSON_AddNumberToObject(o, "ping_bytes", PING_BYTES);
	cJSON_AddNumberToObject(o, "stream_messages", (double)b->iters * 10);
	cJSON_AddNumberToObject(o, "stream_message_bytes", STREAM_BYTES);
	cJSON_AddNumberToObject(o, "stream_messages_per_s", msgs_per_s);
	if (b->auth) {
		cJSON *c = cJSON_AddObjectToObject(o, "input_seal_p50_us");
		cJSON_AddNumberToObject(c, "seal_encrypted", seal_us[0]);
		cJSON_AddNumberToObject(c, "seal_authenticated", seal_us[1]);
		cJSON_AddNumberToObject(c, "open_encrypted", open_us[0]);
		cJSON_AddNumberToObject(c, "open_authenticated", open_us[1]);
	}
	cJSON_AddItemToObject(o, "provenance", sym_provenance_json(true));
	char err[1200];
	int rc = sym_write_json(path, o, err, sizeof(err));
	if (rc)
		fprintf(stderr, "fabbench: %s\n", err);
	cJSON_Delete(o);
	return rc ? -1 : 0;
}

int sym_fabbench_run(const char *provider, long iters, size_t size, bool auth, const char *json)
{
	struct bench b = { .provider = provider, .iters = iters, .size = size, .auth = auth };
	atomic_init(&b.stop, false);
	int rc;
	double seal_us[2] = { 0, 0 }, open_us[2] = { 0, 0 }, msgs_per_s = 0;
	sym_input_keygen(b.seal_key);
	b.reads = b.iters / 4 ? b.iters / 4 : 1;

	char err[256], port[16];
	/* with auth, as in a cluster: a CA in memory, the echo side frontend 0
	 * (whose memory is read), this side backend 0 */
	struct sym_cred echo_cred, my_cred;
	uint8_t ca_pk[SYM_CRED_PK], ca_sk[SYM_CRED_SK];
	sym_ca_mem(ca_pk, ca_sk);
	sym_cred_mem(ca_pk, ca_sk, SYM_CRED_FRONTEND, 0, 1, &echo_cred);
	sym_cred_mem(ca_pk, ca_sk, SYM_CRED_BACKEND, 0, 2, &my_cred);
	sodium_memzero(ca_sk, sizeof(ca_sk));
	struct sym_fab_cfg ecfg = { .provider = b.provider, .cred = auth ? &echo_cred : NULL };
	struct sym_fab_cfg cfg = { .provider = b.provider, .cred = auth ? &my_cred : NULL };
	const struct sym_fab_peer want = { SYM_CRED_FRONTEND, 0 };
	struct side s = { 0 };
	if (sym_fab_open(&b.echo_f, &ecfg, err, sizeof(err)) ||
	    sym_fab_listen(b.echo_f, "127.0.0.1", "0", err, sizeof(err)) ||
	    sym_fab_open(&s.f, &cfg, err, sizeof(err))) {
		fprintf(stderr, "fabbench: %s\n", err);
		sym_fab_destroy(b.echo_f);
		return 1;
	}
	snprintf(port, sizeof(port), "%d", sym_fab_listen_port(b.echo_f));
	pthread_t t;
	if ((rc = pthread_create(&t, NULL, echo_main, &b))) {
		fprintf(stderr, "fabbench: starting the echo thread: %s\n", strerror(rc));
		sym_fab_destroy(b.echo_f);
		sym_fab_destroy(s.f);
		return 1;
	}
	int64_t *rtt = malloc((size_t)b.iters * sizeof(*rtt)), *rd = malloc((size_t)b.reads * sizeof(*rd));
	rc = 1;
	if (!rtt || !rd) {
		fprintf(stderr, "fabbench: out of memory\n");
		goto out;
	}
	sodium_memzero(&echo_cred, sizeof(echo_cred));
	sodium_memzero(&my_cred, sizeof(my_cred));
	if (sym_fab_connect(s.f, "127.0.0.1", port, &want, &s.c, err, sizeof(err))) {
		fprintf(stderr, "fabbench: %s\n", err);
		goto out;
	}
	if (next_event(&s, "the connection") || s.ev.type != SYM_FAB_CONNECTED || next_event(&s, "the region")) {
		if (s.ev.type != SYM_FAB_CLOSED)
			fprintf(stderr, "fabbench: the connection did not start as expected\n");
		goto out;
	}
	if (s.ev.type != SYM_FAB_MSG || s.ev.len != 25 || s.ev.data[0] != 'H' || get64(s.ev.data + 17) != b.size) {
		fprintf(stderr, "fabbench: no region announcement from the echo side\n");
		goto out;
	}
	uint64_t raddr = get64(s.ev.data + 1), rkey = get64(s.ev.data + 9);
	if (ping_pong(&s, b.iters, rtt) || reads(&s, b.reads, raddr, rkey, b.size, b.auth ? b.seal_key : NULL, rd) ||
	    stream(&s, b.iters * 10, &msgs_per_s))
		goto out;
	sym_fab_send(s.c, "B", 1);
	/* let the goodbye leave before the connection closes */
	for (int i = 0; i < 1000 && sym_fab_conn_up(s.c); i++)
		sym_fab_poll(s.f, &s.ev, 1);
	rc = b.auth ? seal_costs(b.seal_key, b.size, seal_us, open_us) : 0;
out:
	if (rc)
		atomic_store(&b.stop, true);
	pthread_join(t, NULL);
	if (s.c)
		sym_fab_close(s.c);
	if (!rc && b.echo_err[0]) {
		fprintf(stderr, "fabbench: %s\n", b.echo_err);
		rc = 1;
	}
	if (!rc) {
		struct stats st_rtt = summarize(rtt, b.iters), st_rd = summarize(rd, b.reads);
		if (!json || strcmp(json, "-")) {
			printf("fabbench: %s, 127.0.0.1, polling, %s\n", sym_fab_describe(s.f),
			       b.auth ? "authenticated, messages sealed" : "no authentication");
			printf("  round trip, %d-byte message, %ld times (us): p50 %.2f  p99 %.2f  max %.2f\n",
			       PING_BYTES, b.iters, st_rtt.p50, st_rtt.p99, st_rtt.max);
			printf("  RMA read of %zu bytes%s, %ld times (us):   p50 %.2f  p99 %.2f  max %.2f\n", b.size,
			       b.auth ? " (a sealed input, opened)" : "", b.reads, st_rd.p50, st_rd.p99, st_rd.max);
			printf("  %d-byte messages one way, %ld back to back: %.0f per second\n", STREAM_BYTES, b.iters * 10,
			       msgs_per_s);
			if (b.auth)
				printf("  sealing / opening a %zu-byte input, CPU only (us, p50): encrypted %.2f / %.2f, "
				       "authenticated only %.2f / %.2f\n",
				       b.size, seal_us[0], open_us[0], seal_us[1], open_us[1]);
		}
		if (json && write_json(json, &b, sym_fab_describe(s.f), st_rtt, st_rd, msgs_per_s, seal_us, open_us))
			rc = 1;
	}
	sym_fab_destroy(s.f);
	sym_fab_destroy(b.echo_f);
	free(rtt);
	free(rd);
	return rc;
}
