/* runtime/loadgen.c - an open-loop client.
 *
 * It draws the arrival times `symphony sim` would draw for the same
 * configuration and seed (sym_experiment_arrivals), sends each request at
 * its time whatever the answers do (open loop), to the frontends in turn,
 * and measures at the client: a request is good when its output came back
 * correct within its SLO of being sent. Each model gets inputs of its own
 * signature (runtime.models.NAME.input; random finite values for floating
 * point). Every answer is checked: an output must have the size of the
 * model's output and, when the cluster's executor is the emulated one, be the
 * digest of the input the request carried; no request may be answered twice,
 * and every request must be answered. Any breach makes the exit status 1.
 *
 * The result has the schema of `symphony sim` (command "loadgen"), with the
 * batch sizes reported by the answers (each answer carries the size of the
 * batch that ran it: b answers of size b make one batch). The queueing delay
 * is not observed at the client and reads 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/grow.h"
#include "core/iheap.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "runtime/auth.h"
#include "runtime/executor.h"
#include "runtime/loop.h"
#include "runtime/net.h"
#include "runtime/run.h"

#define WHO "loadgen"
#define NBUF 16                /* inputs per model, at most */
#define BUF_BYTES (64u << 20) /* all models' inputs, at most (but one per model) */
#define MAX_QUEUED (256u << 20)

struct lreq {
	sym_time sent;
	sym_time arrival;  /* planned, relative to the start */
	uint16_t model;
	uint16_t fe;       /* the frontend it went to */
	uint8_t buf;
	bool answered;
};

struct loadgen;

struct conn {
	struct loadgen *g;
	int idx;
	struct sym_stream st;
	struct sym_loop_io *io;
	bool open;
	bool bye; /* the frontend is leaving: nothing more is sent to it */
	sym_time last_sent; /* its last message from us (a HELLO keeps an idle connection open) */
};

struct loadgen {
	struct sym_cluster *c;
	const struct sym_rt_opts *o;
	struct sym_experiment *e;
	struct conn *fe;
	struct sym_loop *loop;
	struct sym_loop_timer *send_t, *give_up_t, *progress_t, *keep_t;
	char token[SYM_WIRE_MAX_TOKEN + 1]; /* the first bearer token of http_token_file, or "" */
	struct sym_arrivals *arr;
	struct sym_iheap next; /* each model's next arrival, relative to t0 */
	bool all_sent;
	sym_time max_slo;
	int rc;
	struct lreq *reqs;
	size_t nreqs, capreqs;
	size_t answered;
	int nbuf;           /* inputs per model */
	uint8_t **bufs;     /* [m * nbuf + i]: input i of model m */
	uint64_t *digest;   /* of each input: the emulated executor's output */
	bool check_content; /* the executor is the emulated one: outputs are known */
	uint8_t *expect;    /* room for the largest output: what an answer should hold */
	sym_time t0, warmup, end, interval;
	sym_time *slo;
	struct sym_run_result r;
	uint64_t *req_batch; /* answers by batch size, per model: [m * (maxb + 1) + b] */
	int maxb;
	uint64_t lost, duplicates, wrong, unknown, failed_by[SYM_WIRE_NSTATUS];
	uint64_t frontends_lost; /* frontends that closed their connection during the run */
	struct sym_hist lag; /* sending late against the planned time */
};

static void watch_out(struct loadgen *g, int i, bool on)
{
	sym_loop_io_modify(g->fe[i].io, EPOLLIN | (on ? EPOLLOUT : 0));
}

static int send_one(struct loadgen *g, int m, sym_time planned, sym_time now)
{
	if (sym_grow(&g->reqs, &g->capreqs, g->nreqs + 1, sizeof(*g->reqs), 65536))
		return -ENOMEM;
	size_t id = g->nreqs++;
	struct lreq *q = &g->reqs[id];
	q->model = (uint16_t)m;
	q->buf = (uint8_t)(id % (size_t)g->nbuf);
	q->arrival = planned;
	q->answered = false;
	/* round robin over the frontends still connected */
	int nf = g->c->nfrontends, fi = (int)(id % (size_t)nf);
	for (int k = 0; k < nf && (!g->fe[fi].open || g->fe[fi].bye); k++)
		fi = (fi + 1) % nf;
	struct conn *c = &g->fe[fi];
	q->fe = (uint16_t)fi;
	struct sym_msg msg = { .type = SYM_MSG_REQUEST };
	msg.u.request.req_id = id;
	msg.u.request.model = (uint16_t)m;
	/* The deadline is the planned arrival plus the SLO (latency counts from
	 * there, as in the simulator): a request sent late has that much less. */
	sym_time late = now - (g->t0 + planned);
	msg.u.request.budget_ns = late < g->slo[m] ? g->slo[m] - late : 1;
	msg.u.request.len = (uint32_t)sym_cluster_input_bytes(g->c, (size_t)m);
	msg.u.request.data = g->bufs[(size_t)m * (size_t)g->nbuf + q->buf];
	q->sent = sym_monotonic_ns();
	sym_hist_record(&g->lag, late);
	if (planned >= g->warmup) {
		size_t iv = (size_t)(planned / g->interval);
		if (iv < g->r.nintervals)
			g->r.timeline[iv].offered++;
		g->r.models[m].offered++;
	}
	if (!c->open || c->bye)
		return -ENOTCONN;
	int rc = sym_stream_send(&c->st, &msg, MAX_QUEUED);
	if (rc)
		return rc;
	c->last_sent = now;
	watch_out(g, fi, sym_stream_queued(&c->st) > 0);
	return 0;
}

/* Our HELLO to frontend i: the native protocol's first message (wire version 5),
 * with the cluster's bearer token when it has one; again, it keeps an idle
 * connection open (a frontend closes a client silent for clients_timeout_s). */
static int send_hello(struct loadgen *g, int i)
{
	struct conn *c = &g->fe[i];
	struct sym_msg h = { .type = SYM_MSG_HELLO };
	h.u.hello.role = SYM_ROLE_CLIENT;
	h.u.hello.token = g->token;
	h.u.hello.token_len = (uint8_t)strlen(g->token);
	int rc = sym_stream_send(&c->st, &h, MAX_QUEUED);
	if (rc)
		return rc;
	c->last_sent = sym_monotonic_ns();
	watch_out(g, i, sym_stream_queued(&c->st) > 0);
	return 0;
}

/* The first token of the cluster's http_token_file (its rules: runtime/frontend.c). */
static int read_token(struct loadgen *g, char *err, size_t errlen)
{
	char *text;
	long n = sym_file_read(g->c->http_token_file, 1 << 20, true, &text, err, errlen);
	if (n < 0)
		return (int)n;
	int rc = -EINVAL;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(l);
		while (len && (l[len - 1] == '\r' || l[len - 1] == ' ' || l[len - 1] == '\t'))
			len--;
		if (!len || l[0] == '#')
			continue;
		if (len > SYM_WIRE_MAX_TOKEN || strcspn(l, " \t") < len) {
			snprintf(err, errlen, "%s: its first token is over %d characters or holds a blank: the native "
				 "protocol's HELLO cannot carry it", g->c->http_token_file, SYM_WIRE_MAX_TOKEN);
			break;
		}
		memcpy(g->token, l, len);
		g->token[len] = '\0';
		rc = 0;
		break;
	}
	if (rc && !err[0])
		snprintf(err, errlen, "%s holds no token", g->c->http_token_file);
	sodium_memzero(text, (size_t)n);
	free(text);
	return rc;
}

/* The output has the model's size and, from the emulated executor, its bytes: the input's digest, repeated. */
static bool output_ok(struct loadgen *g, const struct lreq *q, const struct sym_msg *m)
{
	size_t ob = sym_tensor_bytes(&g->c->models[q->model].output);
	if (m->u.answer.len != ob)
		return false;
	if (!g->check_content)
		return true;
	sym_exec_fill_output(g->digest[(size_t)q->model * (size_t)g->nbuf + q->buf], g->expect, ob);
	return !memcmp(m->u.answer.data, g->expect, ob);
}

static void on_answer(struct loadgen *g, const struct sym_msg *m, sym_time now)
{
	uint64_t id = m->u.answer.req_id;
	if (id >= g->nreqs) {
		g->unknown++;
		return;
	}
	struct lreq *q = &g->reqs[id];
	if (q->answered) {
		g->duplicates++;
		return;
	}
	q->answered = true;
	g->answered++;
	uint8_t st = m->u.answer.status;
	if (st == SYM_WIRE_OK && !output_ok(g, q, m))
		g->wrong++;
	if (q->arrival < g->warmup)
		return;
	struct sym_model_result *mr = &g->r.models[q->model];
	size_t iv = (size_t)(q->arrival / g->interval);
	sym_time lat = now - q->sent;
	bool good = false;
	if (st == SYM_WIRE_OK) {
		sym_hist_record(&mr->latency, lat);
		if (lat <= g->slo[q->model]) {
			mr->served++;
			good = true;
		} else {
			mr->late++;
		}
		int b = m->u.answer.batch;
		if (b >= 1 && b <= g->maxb)
			g->req_batch[(size_t)q->model * (size_t)(g->maxb + 1) + (size_t)b]++;
	} else {
		mr->dropped++;
		if (st == SYM_WIRE_DROPPED_EXPIRED)
			mr->dropped_by[SYM_DROP_EXPIRED]++;
		else if (st == SYM_WIRE_DROPPED_EARLY)
			mr->dropped_by[SYM_DROP_EARLY]++;
		else if (st == SYM_WIRE_REJECTED)
			mr->dropped_by[SYM_DROP_REJECTED]++;
		else
			g->failed_by[st]++;
	}
	if (iv < g->r.nintervals) {
		if (good)
			g->r.timeline[iv].good++;
		else
			g->r.timeline[iv].bad++;
	}
}

static int conn_events(struct loadgen *g, int i, uint32_t events)
{
	struct conn *c = &g->fe[i];
	if (events & EPOLLOUT) {
		int rc = sym_stream_flush(&c->st);
		if (rc < 0)
			return rc;
		watch_out(g, i, rc > 0);
	}
	for (int round = 0; round < 16; round++) {
		long n = sym_stream_read(&c->st);
		if (n == -EAGAIN)
			return 0;
		if (n <= 0)
			return n ? (int)n : -ECONNRESET;
		struct sym_msg m;
		char why[200];
		long k;
		sym_time now = sym_monotonic_ns();
		while ((k = sym_stream_next(&c->st, &m, why, sizeof(why))) > 0) {
			if (m.type == SYM_MSG_BYE && m.u.bye.role == SYM_ROLE_FRONTEND && !c->bye) {
				/* it is leaving: we send it nothing more, and say so; it answers what it holds */
				c->bye = true;
				struct sym_msg b = { .type = SYM_MSG_BYE };
				b.u.bye.role = SYM_ROLE_CLIENT;
				int rc = sym_stream_send(&c->st, &b, MAX_QUEUED);
				if (rc)
					return rc;
				watch_out(g, i, sym_stream_queued(&c->st) > 0);
				sym_rt_log(WHO, "frontend %d is leaving; sending to the others", i);
				continue;
			}
			if (m.type != SYM_MSG_ANSWER) {
				sym_rt_log(WHO, "frontend %d sent a %s message", i, sym_wire_type_name(m.type));
				return -EPROTO;
			}
			if (m.u.answer.status == SYM_WIRE_UNAUTHORIZED) {
				sym_rt_warn(WHO, "frontend %d refused this client (unauthorized): %s", i,
					    g->token[0] ? "the bearer token of http_token_file is not one it takes"
						        : "it asks for a bearer token (set runtime.http_token_file)");
				return -EACCES;
			}
			on_answer(g, &m, now);
		}
		if (k < 0) {
			sym_rt_warn(WHO, "frontend %d: malformed message: %s", i, why);
			return -EPROTO;
		}
	}
	return 0;
}

static void fail_stop(struct loadgen *g)
{
	g->rc = 1;
	sym_loop_stop(g->loop);
}

/* Stops once everything is sent and answered. */
static void maybe_done(struct loadgen *g)
{
	if (g->all_sent && g->answered == g->nreqs)
		sym_loop_stop(g->loop);
}

/* A frontend closed its connection (it left, or died): the requests it still
 * held are failed "frontend gone" (a client sees its connection reset), and
 * the run goes on with the others; with none left, it ends in failure. */
static void frontend_gone(struct loadgen *g, struct conn *c)
{
	uint64_t held = 0;
	for (size_t i = 0; i < g->nreqs; i++) {
		struct lreq *q = &g->reqs[i];
		if (q->answered || q->fe != c->idx)
			continue;
		struct sym_msg m = { .type = SYM_MSG_ANSWER };
		m.u.answer.req_id = i;
		m.u.answer.status = SYM_WIRE_FRONTEND_GONE;
		on_answer(g, &m, sym_monotonic_ns());
		held++;
	}
	sym_rt_warn(WHO, "frontend %d closed the connection (%" PRIu64 " requests it held failed); going on with the "
		    "others", c->idx, held);
	c->open = false;
	sym_loop_io_close(c->io, NULL, NULL); /* unwatched at once; the socket is ours to close */
	sym_stream_close(&c->st);
	g->frontends_lost++;
	bool any = false;
	for (int i = 0; i < g->c->nfrontends; i++)
		any |= g->fe[i].open && !g->fe[i].bye;
	if (!any) {
		sym_rt_error(WHO, "no frontend left");
		fail_stop(g);
	}
}

static void on_conn(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)io;
	struct conn *c = ctx;
	struct loadgen *g = c->g;
	int s = conn_events(g, c->idx, events);
	if (s == -ECONNRESET || s == -EPIPE) {
		frontend_gone(g, c);
	} else if (s) {
		sym_rt_warn(WHO, "frontend %d: %s", c->idx, strerror(-s));
		fail_stop(g);
		return;
	}
	maybe_done(g);
}

/* Sends every request due by now; then waits for the next, or, once all
 * are sent, for the answers (at most the longest SLO and 2 s more). */
static void on_send(struct sym_loop_timer *t, void *ctx)
{
	struct loadgen *g = ctx;
	sym_time now = sym_monotonic_ns();
	while (!sym_iheap_empty(&g->next) && g->t0 + sym_iheap_top_key(&g->next) <= now) {
		int m = sym_iheap_top(&g->next);
		int s = send_one(g, m, sym_iheap_top_key(&g->next), now);
		if (s) {
			sym_rt_error(WHO, "sending failed: %s", strerror(-s));
			fail_stop(g);
			return;
		}
		sym_time next = sym_arrivals_next(&g->arr[m]);
		if (next < g->end)
			sym_iheap_set(&g->next, m, next);
		else
			sym_iheap_remove(&g->next, m);
	}
	if (!sym_iheap_empty(&g->next)) {
		sym_loop_timer_set(t, g->t0 + sym_iheap_top_key(&g->next), 0);
		return;
	}
	g->all_sent = true;
	sym_loop_timer_set(g->give_up_t, now + g->max_slo + 2 * SYM_S, 0);
	maybe_done(g);
}

static void on_give_up(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	sym_loop_stop(((struct loadgen *)ctx)->loop);
}

static void progress(struct loadgen *g, sym_time now);

/* A HELLO to each frontend nothing was sent to for a while (a third of clients_timeout_s). */
static void on_keep(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct loadgen *g = ctx;
	sym_time now = sym_monotonic_ns(), every = sym_s(g->c->clients_timeout_s) / 3;
	for (int i = 0; i < g->c->nfrontends; i++)
		if (g->fe[i].open && !g->fe[i].bye && now - g->fe[i].last_sent >= every && send_hello(g, i)) {
			sym_rt_error(WHO, "frontend %d: sending a HELLO failed", i);
			fail_stop(g);
			return;
		}
}

static void on_progress(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	progress(ctx, sym_monotonic_ns());
}

/* Fills the result's totals and batch counts from what was counted. */
static void finish_result(struct loadgen *g)
{
	struct sym_run_result *r = &g->r;
	struct sym_model_result *t = &r->total;
	for (size_t m = 0; m < r->nmodels; m++) {
		struct sym_model_result *mr = &r->models[m];
		for (int b = 1; b <= g->maxb && b <= mr->max_batch; b++) {
			uint64_t reqs = g->req_batch[m * (size_t)(g->maxb + 1) + (size_t)b];
			uint64_t nb = (reqs + (uint64_t)b - 1) / (uint64_t)b;
			mr->batch_counts[b] += nb;
			mr->batches += nb;
			mr->batched += reqs;
			t->batch_counts[b] += nb;
		}
		t->offered += mr->offered;
		t->served += mr->served;
		t->late += mr->late;
		t->dropped += mr->dropped;
		for (int k = 0; k < SYM_DROP_NREASONS; k++)
			t->dropped_by[k] += mr->dropped_by[k];
		t->batches += mr->batches;
		t->batched += mr->batched;
		sym_hist_merge(&t->latency, &mr->latency);
	}
	r->simulated_requests = g->nreqs;
	r->wall_seconds = sym_to_s(sym_monotonic_ns() - g->t0);
}

static int setup(struct loadgen *g, char *err, size_t errlen)
{
	struct sym_experiment *e = g->e;
	g->warmup = sym_s(e->warmup_s);
	g->end = sym_s(sym_experiment_duration(e));
	g->interval = sym_s(e->interval_s) > 0 ? sym_s(e->interval_s) : SYM_S;
	double rate = sym_experiment_scale(e);
	g->r.rate = rate;
	g->r.window_s = sym_to_s(g->end - g->warmup);
	if (sym_run_result_alloc(&g->r, e, g->end, g->interval))
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	g->maxb = g->r.total.max_batch;
	g->req_batch = calloc(e->nmodels * (size_t)(g->maxb + 1), sizeof(uint64_t));
	g->slo = calloc(e->nmodels, sizeof(*g->slo));
	g->fe = calloc((size_t)g->c->nfrontends, sizeof(*g->fe));
	if (!g->req_batch || !g->slo || !g->fe)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (size_t m = 0; m < e->nmodels; m++)
		g->slo[m] = sym_ms(e->model_slo_ms[m]);
	sym_hist_init(&g->lag);
	uint64_t x = e->seed * 0x9e3779b97f4a7c15ull + 1;
	x = x ? x : 1; /* xorshift64 needs a nonzero state */
	size_t per_model = BUF_BYTES / e->nmodels / (g->c->input_bytes_max ? g->c->input_bytes_max : 1);
	g->nbuf = per_model < 1 ? 1 : per_model > NBUF ? NBUF : (int)per_model;
	g->check_content = !strcmp(g->c->executor, "emulated");
	g->bufs = calloc(e->nmodels * (size_t)g->nbuf, sizeof(*g->bufs));
	g->digest = calloc(e->nmodels * (size_t)g->nbuf, sizeof(*g->digest));
	g->expect = malloc(g->c->output_bytes_max ? g->c->output_bytes_max : 1);
	if (!g->bufs || !g->digest || !g->expect)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (size_t m = 0; m < e->nmodels; m++)
		for (int i = 0; i < g->nbuf; i++) {
			size_t k = m * (size_t)g->nbuf + (size_t)i, len = sym_cluster_input_bytes(g->c, m);
			if (!(g->bufs[k] = malloc(len)))
				return snprintf(err, errlen, "out of memory"), -ENOMEM;
			sym_tensor_fill_random(&g->c->models[m].input, g->bufs[k], &x);
			g->digest[k] = sym_exec_digest(g->bufs[k], len);
		}
	return 0;
}

/* Connects to every frontend (retrying while the cluster starts) and watches the connections. */
static int connect_frontends(struct loadgen *g, char *err, size_t errlen)
{
	for (int i = 0; i < g->c->nfrontends; i++) {
		const struct sym_hostport *hp = &g->c->frontends[i].clients;
		int fd = -1;
		/* The cluster may still be starting: retry for a few seconds. */
		for (int tries = 0; tries < 50 && !sym_rt_stop; tries++) {
			fd = sym_tcp_connect(hp->host, hp->port, 1000, err, errlen);
			if (fd >= 0)
				break;
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		if (fd < 0)
			return snprintf(err + strlen(err), errlen - strlen(err), " (frontend %d)", i), -ECONNREFUSED;
		struct conn *c = &g->fe[i];
		sym_stream_init(&c->st, fd);
		c->g = g;
		c->idx = i;
		c->open = true;
		int rc = sym_loop_io_start(g->loop, fd, EPOLLIN, on_conn, c, &c->io);
		if (rc)
			return snprintf(err, errlen, "event loop: %s", strerror(-rc)), rc;
		if ((rc = send_hello(g, i)))
			return snprintf(err, errlen, "frontend %d: sending the HELLO: %s", i, strerror(-rc)), rc;
	}
	return 0;
}

static void progress(struct loadgen *g, sym_time now)
{
	const struct sym_run_result *r = &g->r;
	uint64_t good = 0, bad = 0;
	for (size_t i = 0; i < r->nintervals; i++)
		good += r->timeline[i].good, bad += r->timeline[i].bad;
	double t = sym_to_s(now - g->t0);
	fprintf(stderr, "\rloadgen: %6.1f/%.0f s  sent %zu  answered %zu  bad %.2f%%   ", t < 0 ? 0 : t,
		sym_to_s(g->end), g->nreqs, g->answered, good + bad ? 100.0 * (double)bad / (double)(good + bad) : 0);
}

/* Counts what was never answered, prints and writes the result. Returns 1 on a breach of the checks. */
static int report(struct loadgen *g)
{
	const struct sym_experiment *e = g->e;
	const struct sym_rt_opts *o = g->o;
	char err[1024];
	int rc = 0;
	for (size_t i = 0; i < g->nreqs; i++)
		if (!g->reqs[i].answered)
			g->lost++;
	if (sym_rt_stop)
		sym_rt_log(WHO, "interrupted: the counts cover what was sent so far");
	finish_result(g);
	cJSON *doc = sym_result_json("loadgen", e, &g->r);
	cJSON *cfg = cJSON_GetObjectItemCaseSensitive(doc, "config");
	if (cfg)
		cJSON_AddItemToObject(cfg, "runtime", sym_cluster_runtime_json(g->c));
	cJSON *chk = cJSON_AddObjectToObject(doc, "checks");
	cJSON_AddNumberToObject(chk, "requests", (double)g->nreqs);
	cJSON_AddNumberToObject(chk, "answered", (double)g->answered);
	cJSON_AddNumberToObject(chk, "unanswered", (double)g->lost);
	cJSON_AddNumberToObject(chk, "frontends_lost", (double)g->frontends_lost);
	cJSON_AddNumberToObject(chk, "duplicate_answers", (double)g->duplicates);
	cJSON_AddNumberToObject(chk, "wrong_outputs", (double)g->wrong);
	cJSON_AddNumberToObject(chk, "unknown_answers", (double)g->unknown);
	cJSON *fb = cJSON_AddObjectToObject(chk, "failed_by_status");
	for (int s = SYM_WIRE_BACKEND_FAILED; s < SYM_WIRE_NSTATUS; s++)
		cJSON_AddNumberToObject(fb, sym_wire_status_name(s), (double)g->failed_by[s]);
	cJSON_AddNumberToObject(chk, "send_lag_p99_ms", (double)sym_hist_quantile(&g->lag, 0.99) / 1e6);
	cJSON_AddNumberToObject(chk, "send_lag_max_ms", (double)g->lag.max / 1e6);
	cJSON_AddNumberToObject(chk, "t0_monotonic_ns", (double)g->t0); /* (time 0 of the load, on the host's clock) */
	if (!o->quiet || !o->json)
		sym_result_print(stdout, "loadgen", e, &g->r);
	if (g->lost || g->duplicates || g->wrong || g->unknown) {
		sym_rt_error(WHO, "%" PRIu64 " unanswered, %" PRIu64 " answered twice, %" PRIu64 " wrong outputs, %" PRIu64
			     " unknown answers",
			     g->lost, g->duplicates, g->wrong, g->unknown);
		rc = 1;
	}
	uint64_t failed = 0;
	char why[512] = "";
	for (int s = 0; s < SYM_WIRE_NSTATUS; s++) {
		failed += g->failed_by[s];
		size_t l = strlen(why);
		if (g->failed_by[s])
			snprintf(why + l, sizeof(why) - l, "%s%" PRIu64 " %s", l ? ", " : "", g->failed_by[s],
				 sym_wire_status_name(s));
	}
	if (failed && !o->quiet)
		sym_rt_error(WHO, "%" PRIu64 " requests failed: %s", failed, why);
	if (o->json && sym_write_json(o->json, doc, err, sizeof(err))) {
		sym_rt_error(WHO, "%s", err);
		rc = 1;
	}
	cJSON_Delete(doc);
	return rc;
}

/* The arrivals, the loop, its timers, the connections. */
static int start(struct loadgen *g)
{
	struct sym_experiment *e = g->e;
	char err[1024] = "";
	int rc;
	if (!(g->arr = calloc(e->nmodels, sizeof(*g->arr))) || sym_iheap_init(&g->next, (int)e->nmodels))
		return sym_rt_error(WHO, "out of memory"), -ENOMEM;
	if ((rc = setup(g, err, sizeof(err))))
		return sym_rt_error(WHO, "%s", err), rc;
	if ((rc = sym_experiment_arrivals(e, g->r.rate, g->arr)))
		return sym_rt_error(WHO, "cannot set up the arrivals: %s", strerror(-rc)), rc;
	for (size_t m = 0; m < e->nmodels; m++) {
		sym_time t = sym_arrivals_next(&g->arr[m]);
		if (t < g->end)
			sym_iheap_set(&g->next, (int)m, t);
		if (g->slo[m] > g->max_slo)
			g->max_slo = g->slo[m];
	}
	if ((rc = sym_rt_loop(&g->loop, WHO, NULL, NULL, NULL, g)))
		return rc;
	if ((rc = sym_loop_timer_new(g->loop, on_send, g, &g->send_t)) ||
	    (rc = sym_loop_timer_new(g->loop, on_give_up, g, &g->give_up_t)) ||
	    (rc = sym_loop_timer_new(g->loop, on_progress, g, &g->progress_t)) ||
	    (rc = sym_loop_timer_new(g->loop, on_keep, g, &g->keep_t)))
		return sym_rt_error(WHO, "event loop: %s", strerror(-rc)), rc;
	if (g->c->http_token_file[0] && (rc = read_token(g, err, sizeof(err))))
		return sym_rt_error(WHO, "bearer token: %s", err), rc;
	if ((rc = connect_frontends(g, err, sizeof(err))))
		return sym_rt_error(WHO, "%s", err), rc;
	sym_time every = sym_s(g->c->clients_timeout_s) / 3;
	sym_loop_timer_set(g->keep_t, sym_monotonic_ns() + every, every);
	return 0;
}

int sym_loadgen_run(struct sym_cluster *c, const struct sym_rt_opts *o)
{
	struct loadgen g = { .c = c, .o = o, .e = &c->exp };
	struct sym_experiment *e = &c->exp;
	int rc = 1;
	if (start(&g))
		goto out;
	bool tty = isatty(2) && !o->quiet;
	if (!o->quiet) {
		double rps = 0; /* the mean offered: a schedule's at its scale */
		for (size_t m = 0; m < e->nmodels; m++)
			rps += sym_experiment_model_rps(e, m);
		sym_rt_log(WHO, "%.0f s at %g req/s%s over %zu models to %d frontends (inputs of up to %zu bytes)",
			   sym_to_s(g.end), rps, sym_experiment_has_schedule(e) ? " on average" : "", e->nmodels,
			   c->nfrontends, c->input_bytes_max);
	}
	g.t0 = sym_monotonic_ns() + 50 * SYM_MS;
	sym_loop_timer_set(g.send_t, g.t0 + (sym_iheap_empty(&g.next) ? 0 : sym_iheap_top_key(&g.next)), 0);
	if (tty)
		sym_loop_timer_set(g.progress_t, g.t0 + SYM_S, SYM_S);
	if (sym_loop_run(g.loop)) {
		sym_rt_error(WHO, "%s", sym_loop_error(g.loop));
		g.rc = 1;
	}
	rc = g.rc;
	if (tty)
		fprintf(stderr, "\n");
	if (report(&g))
		rc = 1;
out:
	sym_loop_destroy(g.loop);
	for (int i = 0; g.fe && i < c->nfrontends; i++)
		if (g.fe[i].open)
			sym_stream_close(&g.fe[i].st);
	for (size_t m = 0; g.arr && m < e->nmodels; m++)
		sym_arrivals_finish(&g.arr[m]);
	free(g.arr);
	sym_iheap_finish(&g.next);
	for (size_t k = 0; g.bufs && k < e->nmodels * (size_t)g.nbuf; k++)
		free(g.bufs[k]);
	free(g.bufs);
	free(g.digest);
	free(g.expect);
	free(g.reqs);
	free(g.req_batch);
	free(g.slo);
	free(g.fe);
	sym_hist_finish(&g.lag);
	sym_run_result_finish(&g.r);
	return rc;
}
