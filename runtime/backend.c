/* runtime/backend.c - a backend: one GPU (emulated by default).
 *
 * The main thread owns the fabric: the connection to schedd and one to each
 * frontend. For a plan it posts one RMA read per input, from the input's
 * frontend into a registered staging area; when every read has finished and
 * the batch before it is done, it hands the batch to the executor thread,
 * which runs it no earlier than the planned start and hands it back; the
 * main thread then sends the completion to schedd and each output to its
 * frontend. Schedd plans at most one batch ahead of the running one (its
 * send-ahead: the plan arrives, and its inputs are read, while the batch
 * before it runs), so there are at most two batches in hand, run in the
 * order they came. A batch that could only start after its latest start
 * (the plan's latest_in_ns) is rejected instead: schedd hears it as a
 * rejected completion, each frontend as a rejected result.
 *
 * An input whose read failed (its frontend went away) gets no output; the
 * rest of the batch runs. The handoff to and from the executor thread is an
 * atomic flag (release/acquire) plus an eventfd to wake the other side.
 * Everything else runs on the main thread's event loop (runtime/loop.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <sodium.h>

#include "core/hist.h"
#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/http.h"
#include "runtime/inputseal.h"
#include "runtime/loop.h"
#include "runtime/prom.h"
#include "runtime/run.h"

#define EXEC_SPIN (50 * SYM_US) /* the emulated executor's spin before a start and an end */
#define RECONNECT (100 * SYM_MS) /* between attempts to reach schedd and the frontends */
#define SWITCH (2 * SYM_MS)      /* from a failed attempt at the active scheduler to its standby */
#define FRONTEND_GRACE (2 * SYM_S) /* schedd reached, how long to wait for every frontend before registering */
#define LEAVE_MAX (10 * SYM_S)   /* SIGTERM: the most a backend takes to finish and leave */

struct input {
	struct sym_wire_input w;
	int status; /* 1 pending, 0 read, < 0 failed */
};

#define SLOTS 2 /* the running batch and the one planned after it */

struct batch {
	uint64_t id;
	int model;
	int n;      /* inputs planned */
	int nrun;   /* inputs read, which the executor runs */
	sym_time start;
	sym_time latest; /* reject it if it cannot start by then (SYM_TIME_NEVER: never) */
	int pending;
	uint8_t *staging; /* its inputs: maxb * stride bytes of the registered area */
	uint8_t *outbuf;  /* its outputs: maxb * out_cap bytes */
	struct input *in;
	/* executor io */
	const void **inputs;
	uint32_t *lens;
	void **outputs;
	uint32_t *out_lens;
	sym_time began, ended;
	int rc;
	char err[256];
};

struct backend {
	struct sym_cluster *c;
	const struct sym_rt_opts *o;
	int id, kind;
	char who[32];
	struct sym_fab *fab;
	struct sym_loop *loop;
	struct sym_loop_timer *connect_t, *beat_t;
	struct sym_fab_mr *mr;
	uint8_t *staging;
	uint8_t *outbuf;
	int maxb;
	struct sym_fab_conn *schedd;
	bool schedd_up, hello_sent;
	bool registered; /* schedd sent it a plan or a load: it took its HELLO (once is enough) */
	/* fencing (wire.h): the highest scheduler term seen, and the messages refused for a lower one */
	uint32_t term;
	uint64_t stale_msgs;
	struct sym_rt_ratelog term_log;
	struct sym_fab_conn **fe;
	bool *fe_up;
	uint64_t *fe_key; /* per frontend: the key it granted this connection (0: none yet) */
	struct fe_seal {  /* per frontend: what its inputs are sealed with (its GRANT) */
		uint8_t key[SYM_INPUT_KEY];
		bool encrypted;
	} *fe_seal;
	size_t stride;    /* an input in staging: input_max bytes, then its seal's trailer */
	uint64_t seq;
	struct sym_executor *x;
	struct sym_model_desc *descs; /* per model, with this backend's kind's profile */
	uint32_t out_cap;             /* output bytes per input: the largest model output */
	/* the batches in hand, in order: b[head] is the running one (or the next) */
	struct batch b[SLOTS];
	int head, nb;
	bool running; /* b[head] is with the executor */
	/* executor thread */
	pthread_t thr;
	bool thr_started;
	int to_exec, from_exec; /* eventfds */
	atomic_int exec_state;  /* 0 idle, 1 batch given, 2 batch done, 3 stop */
	/* counters */
	uint64_t batches, reqs, read_failures, rejected, inputs_refused;
	struct sym_rt_ratelog seal_log;
	struct sym_hist late; /* how far batches began after their planned start */
	struct sym_hist run;  /* how long batches ran */
	struct sym_http *http;
	/* SIGTERM: leaving (bye sent), and schedd's bye back (no plan will follow) */
	bool leaving, bye_acked, left; /* left: maybe_leave stopped the loop (once) */
	sym_time schedd_heard;  /* the last message from schedd */
	sym_time schedd_since;  /* when the connection to schedd came up */
	sym_time schedd_tried;  /* when the last attempt to reach it began */
	unsigned schedd_try;    /* connection attempts: even the active scheduler, odd its standby */
	struct sym_loop_timer *leave_t;
	/* models on the GPU (symphony-centralized-orchestration.md Section 4.7):
	 * schedd's LOADs and UNLOADs, run in order by the loader thread while the
	 * executor thread runs batches of the other models */
	bool *held;      /* loaded, and no unload asked: plans for it are taken */
	bool *unloading; /* an unload is queued or running */
	struct lop {
		uint16_t model;
		uint8_t op; /* enum sym_wire_load_op */
		bool own;   /* the backend's own unload of a spare slot's model: schedd hears nothing */
	} *lq;           /* queued operations, a ring of lq_cap */
	char (*slot_next)[64]; /* per model: the repository model schedd put in that spare slot (MODEL),
				* waiting for the slot's operations in hand; "" none */
	int lq_head, lq_n, lq_cap;
	bool lbusy;      /* lq[lq_head] is with the loader thread */
	int lrc;         /* its result, and */
	sym_time ltook;  /* how long it took, written by the loader thread */
	char lerr[512];
	pthread_t lthr;
	bool lthr_started;
	int to_load, from_load; /* eventfds */
	atomic_int load_state;  /* 0 idle, 1 given, 2 done, 3 stop */
	uint64_t loads, unloads, load_failures;
	double load_s;
};

/* A message to schedd, carrying the highest term we have seen. */
static int to_schedd(struct backend *be, struct sym_msg *m, const uint16_t *models)
{
	m->term = be->term;
	return sym_rt_send(be->who, be->schedd, m, NULL, models);
}

static void *exec_thread(void *arg)
{
	struct backend *be = arg;
	for (;;) {
		uint64_t v;
		if (read(be->to_exec, &v, sizeof(v)) < 0 && errno != EINTR && errno != EAGAIN)
			break;
		int st = atomic_load_explicit(&be->exec_state, memory_order_acquire);
		if (st == 3)
			break;
		if (st != 1)
			continue;
		struct batch *b = &be->b[be->head];
		struct sym_batch_io io = { .n = b->nrun, .inputs = (const void *const *)b->inputs, .lens = b->lens,
					   .outputs = (void *const *)b->outputs, .out_cap = be->out_cap,
					   .out_lens = b->out_lens };
		b->rc = be->x->ops->run(be->x, b->model, &io, b->start, &b->began, &b->ended, b->err, sizeof(b->err));
		/* 1 -> 2, unless teardown asked us to stop meanwhile (3): a store here would
		 * overwrite its 3, and we would wait on to_exec for ever (SIGTERM hung) */
		int given = 1;
		if (!atomic_compare_exchange_strong_explicit(&be->exec_state, &given, 2, memory_order_acq_rel,
							     memory_order_acquire))
			break;
		v = 1;
		if (write(be->from_exec, &v, sizeof(v)) < 0)
			break;
	}
	return NULL;
}

static void *load_thread(void *arg)
{
	struct backend *be = arg;
	for (;;) {
		uint64_t v;
		if (read(be->to_load, &v, sizeof(v)) < 0 && errno != EINTR && errno != EAGAIN)
			break;
		int st = atomic_load_explicit(&be->load_state, memory_order_acquire);
		if (st == 3)
			break;
		if (st != 1)
			continue;
		const struct lop *op = &be->lq[be->lq_head];
		sym_time t0 = sym_monotonic_ns();
		be->lerr[0] = 0;
		be->lrc = op->op == SYM_WIRE_LOAD
				  ? be->x->ops->load(be->x, op->model, &be->descs[op->model], be->lerr, sizeof(be->lerr))
				  : be->x->ops->unload(be->x, op->model, be->lerr, sizeof(be->lerr));
		be->ltook = sym_monotonic_ns() - t0;
		int given = 1;
		if (!atomic_compare_exchange_strong_explicit(&be->load_state, &given, 2, memory_order_acq_rel,
							     memory_order_acquire))
			break;
		v = 1;
		if (write(be->from_load, &v, sizeof(v)) < 0)
			break;
	}
	return NULL;
}

/* True when a batch in hand runs model m. */
static bool model_in_hand(const struct backend *be, int m)
{
	for (int j = 0; j < be->nb; j++)
		if (be->b[(be->head + j) % SLOTS].model == m)
			return true;
	return false;
}

static void schedd_lost(struct backend *be, const char *why);
static void maybe_load(struct backend *be);

static bool slot_busy(const struct backend *be, int m)
{
	for (int j = 0; j < be->lq_n; j++)
		if (be->lq[(be->lq_head + j) % be->lq_cap].model == m)
			return true;
	return be->held[m];
}

/* The model schedd put in spare slot m, read from this backend's repository
 * now that nothing of the slot's old model is loaded or in hand (a load of
 * it that fails names why: LOADED). */
static void slot_apply(struct backend *be, int m)
{
	struct sym_cluster *c = be->c;
	if (!be->slot_next[m][0])
		return;
	char err[512];
	bool capped;
	int rc = sym_cluster_set_slot(c, (size_t)m, be->slot_next[m], strlen(be->slot_next[m]), &capped, err, sizeof(err));
	be->slot_next[m][0] = '\0';
	if (rc < 0)
		sym_rt_log(be->who, "spare model slot %d: %s", m, err);
	else if (rc > 0 && be->o->verbose)
		sym_rt_log(be->who, "model %s added (spare slot %zu)", c->models[m].name, (size_t)m - c->exp.slot0);
	const struct sym_experiment *e = &c->exp;
	be->descs[m] = c->models[m];
	be->descs[m].profile = &e->profiles[(size_t)be->kind * e->nmodels + (size_t)m];
	be->descs[m].file_mb = e->models[m].file_mb;
}

/* The backend's own unload of a spare slot's model (schedd does not count on it). */
static bool own_unload(struct backend *be, int m)
{
	if (be->lq_n == be->lq_cap)
		return false;
	be->unloading[m] = true;
	be->lq[(be->lq_head + be->lq_n) % be->lq_cap] = (struct lop){ (uint16_t)m, SYM_WIRE_UNLOAD, true };
	be->lq_n++;
	return true;
}

/* schedd put a repository model in spare slot m (MODEL): taken at once when
 * the slot is idle, else once what is queued for it is done (an own unload
 * first when it holds another model: a scheduler that took over). */
static void on_slot(struct backend *be, const struct sym_msg *m)
{
	const struct sym_experiment *e = &be->c->exp;
	size_t k = m->u.model.model;
	if (k < e->slot0 || k >= e->nmodels) {
		sym_rt_warn(be->who, "bad model message from schedd (model %zu is not a spare slot); closing the connection",
			    k);
		schedd_lost(be, "bad model");
		return;
	}
	char nm[64];
	snprintf(nm, sizeof(nm), "%.*s", m->u.model.name_len, m->u.model.name);
	if (!strcmp(e->models[k].name, nm) && !be->slot_next[k][0])
		return;
	snprintf(be->slot_next[k], sizeof(be->slot_next[k]), "%s", nm);
	if (be->held[k] && !be->unloading[k] && !own_unload(be, (int)k)) {
		sym_rt_warn(be->who, "more than %d loads and unloads queued; closing the connection to schedd", be->lq_cap);
		schedd_lost(be, "too many loads");
		return;
	}
	if (!slot_busy(be, (int)k))
		slot_apply(be, (int)k);
	maybe_load(be);
}

/* Hands the next queued load or unload to the loader thread: an unload once
 * no batch in hand runs the model (its plans all came before the UNLOAD). */
static void maybe_load(struct backend *be)
{
	if (be->lbusy || !be->lq_n)
		return;
	const struct lop *op = &be->lq[be->lq_head];
	if (op->op == SYM_WIRE_UNLOAD && model_in_hand(be, op->model))
		return;
	if (op->op == SYM_WIRE_LOAD)
		slot_apply(be, op->model); /* (the loader is idle: the slot may change) */
	be->lbusy = true;
	atomic_store_explicit(&be->load_state, 1, memory_order_release);
	uint64_t v = 1;
	if (write(be->to_load, &v, sizeof(v)) < 0)
		sym_rt_error(be->who, "eventfd: %s", strerror(errno));
}

/* The loader thread is done with lq[lq_head]: schedd hears how it went. */
static void on_load_done(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)events;
	struct backend *be = ctx;
	uint64_t v;
	if (read(sym_loop_io_fd(io), &v, sizeof(v)) < 0 && errno != EAGAIN)
		sym_rt_error(be->who, "eventfd: %s", strerror(errno));
	if (!be->lbusy || atomic_load_explicit(&be->load_state, memory_order_acquire) != 2)
		return;
	struct lop op = be->lq[be->lq_head];
	be->lq_head = (be->lq_head + 1) % be->lq_cap;
	be->lq_n--;
	be->lbusy = false;
	atomic_store_explicit(&be->load_state, 0, memory_order_relaxed);
	const char *name = be->c->exp.models[op.model].name;
	double took = (double)be->ltook / 1e9;
	if (op.op == SYM_WIRE_LOAD) {
		if (be->lrc) {
			be->load_failures++;
			sym_rt_error(be->who, "could not load model %s: %s", name, be->lerr);
		} else {
			be->held[op.model] = true;
			be->loads++;
			be->load_s += took;
			if (be->o->verbose)
				sym_rt_log(be->who, "model %s loaded in %.3f s", name, took);
		}
	} else {
		/* an unload of a model that is not there leaves it not there: done */
		be->held[op.model] = false;
		be->unloading[op.model] = false;
		be->unloads++;
		if (be->o->verbose)
			sym_rt_log(be->who, "model %s unloaded", name);
	}
	if (be->schedd_up && be->hello_sent && !op.own) {
		struct sym_msg m = { .type = SYM_MSG_LOADED };
		m.u.loaded.model = op.model;
		m.u.loaded.op = op.op;
		m.u.loaded.status = op.op == SYM_WIRE_LOAD && be->lrc ? SYM_WIRE_BACKEND_FAILED : SYM_WIRE_OK;
		m.u.loaded.took_ns = be->ltook < 0 ? 0 : be->ltook > 3600 * SYM_S ? 3600 * SYM_S : be->ltook;
		char why[256]; /* a failed load's reason, printable, for the repository API's answer */
		size_t wl = 0;
		for (const char *c = be->lerr; op.op == SYM_WIRE_LOAD && be->lrc && *c && wl < 255; c++)
			why[wl++] = *c >= 0x20 && *c <= 0x7e ? *c : '?';
		m.u.loaded.why_len = (uint8_t)wl;
		m.u.loaded.why = why;
		to_schedd(be, &m, NULL);
	}
	maybe_load(be);
}

/* schedd asks for a model to be loaded or unloaded: queued, in order. */
static void on_load(struct backend *be, const struct sym_msg *m)
{
	if (m->u.load.model >= be->c->exp.nmodels) {
		sym_rt_warn(be->who, "bad %s from schedd (model %u of %zu); closing the connection",
			    sym_wire_type_name(m->type), m->u.load.model, be->c->exp.nmodels);
		schedd_lost(be, "bad load");
		return;
	}
	if (be->lq_n == be->lq_cap) {
		sym_rt_warn(be->who, "schedd queued more than %d loads and unloads; closing the connection", be->lq_cap);
		schedd_lost(be, "too many loads");
		return;
	}
	if (m->u.load.op == SYM_WIRE_UNLOAD)
		be->unloading[m->u.load.model] = true; /* from now on its plans are refused */
	be->lq[(be->lq_head + be->lq_n) % be->lq_cap] = (struct lop){ m->u.load.model, m->u.load.op, false };
	be->lq_n++;
	maybe_load(be);
}

static void send_hello(struct backend *be)
{
	const struct sym_experiment *e = &be->c->exp;
	uint16_t *models = malloc(e->nmodels * sizeof(*models));
	if (!models)
		return;
	uint16_t n = 0;
	for (size_t m = 0; m < e->nmodels; m++)
		if (be->held[m] && !be->unloading[m] && m < e->slot0)
			models[n++] = (uint16_t)m;
	/* A spare slot's model came from a scheduler that may be gone: this
	 * one may hold another model there (or none). Unloaded; the slots it
	 * fills it says first (MODEL), then loads them as any other. */
	for (size_t m = e->slot0; m < e->nmodels; m++)
		if (be->held[m] && !be->unloading[m])
			own_unload(be, (int)m);
	maybe_load(be);
	struct sym_msg h = { .type = SYM_MSG_HELLO };
	h.u.hello.role = SYM_ROLE_BACKEND;
	h.u.hello.id = (uint32_t)be->id;
	snprintf(h.u.hello.kind, sizeof(h.u.hello.kind), "%s", e->kinds[be->kind].name);
	h.u.hello.nmodels = n;
	/* the sub-cluster it was started for, until schedd took it (an epoch may move its GPU later: a
	 * HELLO again, after a lost connection, keeps what schedd decided) */
	h.u.hello.part = be->o->subcluster >= 0 && !be->registered ? (uint8_t)(be->o->subcluster + 1) : 0;
	if (to_schedd(be, &h, models) == 0) {
		be->hello_sent = true;
		be->schedd_heard = sym_monotonic_ns(); /* silence counts from here (the hello may come long after connecting) */
		sym_loop_timer_set(be->beat_t, sym_monotonic_ns(), sym_ms(be->c->heartbeat_ms));
		size_t known = 0; /* (the empty spare slots are no models) */
		for (size_t m = 0; m < e->nmodels; m++)
			known += !sym_experiment_slot_empty(e, m);
		if (!be->o->quiet)
			sym_rt_log(be->who, "registered with schedd (%s, %u of the %zu models loaded)", h.u.hello.kind, n,
				   known);
	}
	free(models);
}

static bool all_frontends_up(const struct backend *be)
{
	for (int i = 0; i < be->c->nfrontends; i++)
		if (!be->fe_up[i] || !be->fe_key[i]) /* connected, and granted its key */
			return false;
	return true;
}

/* Some frontend is reachable and granted, and the others have had 2 s since
 * schedd was reached: a backend that cannot reach one frontend still serves
 * the others (the requests of that one it is given fail, and that frontend
 * answers them when they are overdue). */
static bool enough_frontends(struct backend *be)
{
	if (all_frontends_up(be))
		return true;
	int up = 0;
	for (int i = 0; i < be->c->nfrontends; i++)
		up += be->fe_up[i] && be->fe_key[i];
	if (!up || sym_monotonic_ns() - be->schedd_since < FRONTEND_GRACE)
		return false;
	char missing[200] = "";
	for (int i = 0; i < be->c->nfrontends && strlen(missing) < 150; i++)
		if (!be->fe_up[i] || !be->fe_key[i])
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%d", missing[0] ? ", " : "", i);
	sym_rt_warn(be->who, "registering without frontend(s) %s, unreachable for %.0f s: their requests given to this "
		    "backend will fail", missing, (double)FRONTEND_GRACE / 1e9);
	return true;
}

static void maybe_hello(struct backend *be)
{
	/* no batch of a former scheduler in hand: its completions would puzzle this one */
	if (be->schedd_up && !be->hello_sent && !be->leaving && !be->nb && enough_frontends(be))
		send_hello(be);
}

static void schedd_lost(struct backend *be, const char *why)
{
	if (be->schedd) {
		sym_loop_fab_close(be->loop, be->schedd, NULL, NULL);
		be->schedd = NULL;
	}
	if (be->schedd_up)
		sym_rt_warn(be->who, "scheduler lost: %s", why);
	be->schedd_up = false;
	be->hello_sent = false;
	be->bye_acked = true; /* no plan can come any more */
	sym_loop_timer_stop(be->beat_t);
	/* the standby is tried at once after the active one; the active one again after RECONNECT */
	sym_loop_timer_set(be->connect_t, sym_monotonic_ns() + (be->c->has_standby && be->schedd_try % 2 ? SWITCH : RECONNECT),
			   RECONNECT);
}

static void maybe_run(struct backend *be);

/* The batch at the head ended: schedd hears how, the next batch becomes the head and, with
 * start_next, is handed to the executor; then each input's frontend hears its output (or why
 * there is none). The next batch starts before the replies because, planned ahead, it is due the
 * moment this one ends, and the replies (a message per input) would delay it: that delay is the
 * batch's start lateness, and a deferred batch has about alpha of slack. The slot keeps this
 * batch's outputs until the replies are out: no plan can take it before the loop runs again. */
static void batch_done(struct backend *be, int status, bool start_next)
{
	struct batch *b = &be->b[be->head];
	sym_time now = sym_monotonic_ns();
	if (status == SYM_WIRE_BACKEND_FAILED)
		sym_rt_error(be->who, "batch %" PRIu64 " failed: %s", b->id, b->err);
	if (sym_rt_tracing()) {
		struct sym_log_fields lf = { .batch = (int64_t)b->id };
		if (status == SYM_WIRE_REJECTED)
			sym_rt_trace(be->who, &lf, "batch %" PRIu64 " of model %s (%d request%s) rejected: it could not "
				     "start by its latest moment", b->id, be->c->exp.models[b->model].name, b->n,
				     b->n == 1 ? "" : "s");
		else
			sym_rt_trace(be->who, &lf, "batch %" PRIu64 " of model %s (%d request%s, %d input%s read) %s: began "
				     "%.3f ms after its planned start, ran %.3f ms", b->id, be->c->exp.models[b->model].name,
				     b->n, b->n == 1 ? "" : "s", b->nrun, b->nrun == 1 ? "" : "s",
				     status == SYM_WIRE_OK ? "ran" : "failed",
				     (double)(b->began - b->start) / 1e6, (double)(b->ended - b->began) / 1e6);
	}
	if (status != SYM_WIRE_REJECTED) {
		sym_hist_record(&be->late, b->began - b->start);
		if (status == SYM_WIRE_OK)
			sym_hist_record(&be->run, b->ended - b->began);
	}
	/* The completion first: schedd can plan this GPU's next batch while the
	 * outputs travel; and before the next batch starts, whose completion (a
	 * rejection, at once) schedd must hear after this one's. */
	if (be->schedd_up) {
		struct sym_msg d = { .type = SYM_MSG_DONE };
		d.u.done.batch_id = b->id;
		d.u.done.gpu = (uint32_t)be->id;
		d.u.done.status = (uint8_t)status;
		d.u.done.ran_ns = status == SYM_WIRE_REJECTED || b->ended < b->began ? 0 : b->ended - b->began;
		d.u.done.ago_ns = now > b->ended ? now - b->ended : 0;
		to_schedd(be, &d, NULL);
	}
	if (status == SYM_WIRE_REJECTED) {
		be->rejected++;
	} else {
		be->batches++;
		be->reqs += (uint64_t)b->n;
	}
	be->head = (be->head + 1) % SLOTS;
	be->nb--;
	be->running = false;
	atomic_store_explicit(&be->exec_state, 0, memory_order_relaxed);
	if (start_next)
		maybe_run(be);
	int k = 0;
	for (int i = 0; i < b->n; i++) {
		struct input *in = &b->in[i];
		if (in->status) { /* its read failed: its frontend, if we reach it, hears so (else its safety net) */
			struct sym_msg r = { .type = SYM_MSG_RESULT };
			r.u.result.req_id = in->w.req_id;
			r.u.result.status = SYM_WIRE_BACKEND_FAILED;
			r.u.result.batch_id = b->id;
			if (be->fe_up[in->w.frontend])
				sym_rt_send(be->who, be->fe[in->w.frontend], &r, NULL, NULL);
			continue;
		}
		struct sym_msg r = { .type = SYM_MSG_RESULT };
		r.u.result.req_id = in->w.req_id;
		r.u.result.status = (uint8_t)status;
		r.u.result.batch = (uint16_t)b->n;
		r.u.result.batch_id = b->id;
		r.u.result.len = status == SYM_WIRE_OK ? b->out_lens[k] : 0;
		r.u.result.data = b->outputs[k];
		k++;
		if (be->fe_up[in->w.frontend])
			sym_rt_send(be->who, be->fe[in->w.frontend], &r, NULL, NULL);
	}
}

static void maybe_leave(struct backend *be);

/* Hands the head batch to the executor once its reads are done and nothing
 * runs; rejects it if it is past its latest start. */
static void maybe_run(struct backend *be)
{
	while (be->nb && !be->running && be->b[be->head].pending == 0) {
		struct batch *b = &be->b[be->head];
		sym_time now = sym_monotonic_ns();
		if (now > b->latest) {
			b->began = b->ended = now;
			b->nrun = 0;
			batch_done(be, SYM_WIRE_REJECTED, false);
			continue;
		}
		int k = 0;
		for (int i = 0; i < b->n; i++) {
			if (b->in[i].status)
				continue;
			b->inputs[k] = b->staging + (size_t)i * be->stride;
			b->lens[k] = b->in[i].w.len;
			b->outputs[k] = b->outbuf + (size_t)i * be->out_cap;
			k++;
		}
		be->running = true;
		if (k == 0) { /* every read failed: nothing to run */
			b->nrun = 0;
			b->rc = 0;
			b->began = b->ended = now;
			atomic_store_explicit(&be->exec_state, 2, memory_order_release);
			uint64_t v = 1;
			if (write(be->from_exec, &v, sizeof(v)) < 0)
				sym_rt_error(be->who, "eventfd: %s", strerror(errno));
			return;
		}
		b->nrun = k;
		atomic_store_explicit(&be->exec_state, 1, memory_order_release);
		uint64_t v = 1;
		if (write(be->to_exec, &v, sizeof(v)) < 0)
			sym_rt_error(be->who, "eventfd: %s", strerror(errno));
		return;
	}
	maybe_leave(be);
}

/* The batch in hand whose input `in` is, or NULL. */
static struct batch *batch_of(struct backend *be, const struct input *in)
{
	for (int j = 0; j < be->nb; j++) {
		struct batch *b = &be->b[(be->head + j) % SLOTS];
		if (in >= b->in && in < b->in + b->n)
			return b;
	}
	return NULL;
}

static void read_finished(struct backend *be, struct input *in, int status)
{
	struct batch *b = batch_of(be, in);
	if (!b || in->status != 1)
		return;
	if (!status) {
		/* what was read must be what its frontend sealed for this request (runtime/inputseal.h) */
		int i = (int)(in - b->in);
		const struct fe_seal *fs = &be->fe_seal[in->w.frontend];
		if (sym_input_open(fs->key, in->w.req_id, b->staging + (size_t)i * be->stride, in->w.len, fs->encrypted)) {
			status = -EBADMSG;
			be->inputs_refused++;
			sym_rt_log_limited(&be->seal_log, be->who, "the input of request %" PRIu64 " read from frontend %u "
					   "fails its seal (changed on the way, or not what the frontend sealed for it); "
					   "refused", in->w.req_id, in->w.frontend);
		}
	}
	in->status = status ? status : 0;
	if (status)
		be->read_failures++;
	if (--b->pending == 0)
		maybe_run(be);
}

/* Frontend fi's connection is gone: close it; the reads still pending from it fail. */
static void frontend_lost(struct backend *be, int fi)
{
	sym_loop_fab_close(be->loop, be->fe[fi], NULL, NULL);
	be->fe[fi] = NULL;
	be->fe_up[fi] = false;
	be->fe_key[fi] = 0; /* that connection's registration is gone with it */
	sodium_memzero(&be->fe_seal[fi], sizeof(be->fe_seal[fi]));
	for (int j = 0; j < be->nb; j++) {
		struct batch *b = &be->b[(be->head + j) % SLOTS];
		for (int k = 0; k < b->n; k++)
			if (b->in[k].status == 1 && (int)b->in[k].w.frontend == fi)
				read_finished(be, &b->in[k], -ECONNRESET);
	}
}

static void on_plan(struct backend *be, const struct sym_msg *m, sym_time now)
{
	const struct sym_experiment *e = &be->c->exp;
	char why[200] = "";
	int model = m->u.plan.model;
	if (be->nb == SLOTS)
		snprintf(why, sizeof(why), "a plan while batches %" PRIu64 " and %" PRIu64 " are in hand",
			 be->b[be->head].id, be->b[(be->head + 1) % SLOTS].id);
	else if ((int)m->u.plan.gpu != be->id)
		snprintf(why, sizeof(why), "a plan for GPU %u", m->u.plan.gpu);
	else if ((size_t)model >= e->nmodels)
		snprintf(why, sizeof(why), "a plan for model %d of %zu", model, e->nmodels);
	else if (!be->held[model] || be->unloading[model])
		snprintf(why, sizeof(why), "a plan for model %s, which is %s", e->models[model].name,
			 be->held[model] ? "being unloaded" : "not loaded");
	else if (m->u.plan.n > e->profiles[(size_t)be->kind * e->nmodels + (size_t)model].max_batch)
		snprintf(why, sizeof(why), "a batch of %u, beyond the model's largest", m->u.plan.n);
	for (uint16_t i = 0; !why[0] && i < m->u.plan.n; i++) {
		struct sym_wire_input w;
		sym_wire_plan_input(m, i, &w);
		if (w.frontend >= (uint32_t)be->c->nfrontends || w.len > be->c->input_max || !w.len)
			snprintf(why, sizeof(why), "input %u from frontend %u of %u bytes", i, w.frontend, w.len);
	}
	if (why[0]) {
		sym_rt_warn(be->who, "bad plan from schedd (%s); closing the connection", why);
		schedd_lost(be, "bad plan");
		return;
	}
	struct batch *b = &be->b[(be->head + be->nb) % SLOTS];
	b->id = m->u.plan.batch_id;
	b->model = model;
	b->n = m->u.plan.n;
	b->start = now + m->u.plan.start_in_ns;
	b->latest = m->u.plan.latest_in_ns < 0 ? SYM_TIME_NEVER : now + m->u.plan.latest_in_ns;
	b->pending = b->n;
	be->nb++;
	for (int i = 0; i < b->n; i++) {
		struct input *in = &b->in[i];
		sym_wire_plan_input(m, (uint16_t)i, &in->w);
		in->status = 1;
	}
	for (int i = 0; i < b->n && b->pending; i++) {
		struct input *in = &b->in[i];
		int rc = -ENOTCONN;
		if (be->fe_up[in->w.frontend] && be->fe_key[in->w.frontend])
			rc = sym_fab_read(be->fe[in->w.frontend], b->staging + (size_t)i * be->stride, in->w.len + SYM_INPUT_TRAILER,
					  be->mr, in->w.addr, be->fe_key[in->w.frontend], in);
		if (rc)
			read_finished(be, in, rc);
	}
}

/* Leaving: once schedd has said that nothing more comes and every batch in hand is done. */
static void maybe_leave(struct backend *be)
{
	if (be->leaving && be->bye_acked && !be->nb && !be->left) {
		be->left = true; /* a batch's end calls this twice (after the next batch, and after the loads) */
		if (!be->o->quiet)
			sym_rt_log(be->who, "left: every batch in hand is done");
		sym_loop_stop(be->loop);
	}
}

static void on_leave_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct backend *be = ctx;
	sym_rt_warn(be->who, "leaving: %d batches still in hand after %.0f s; stopping anyway", be->nb,
		    (double)LEAVE_MAX / 1e9);
	sym_loop_stop(be->loop);
}

/* SIGTERM: tell schedd we leave (it plans nothing more for this GPU and says bye back),
 * finish the batches in hand, then stop; at most LEAVE_MAX. */
static void drain(void *ctx)
{
	struct backend *be = ctx;
	be->leaving = true;
	if (!be->o->quiet)
		sym_rt_log(be->who, "SIGTERM: leaving; %d batches in hand", be->nb);
	struct sym_msg m = { .type = SYM_MSG_BYE };
	m.u.bye.role = SYM_ROLE_BACKEND;
	m.u.bye.id = (uint32_t)be->id;
	if (!be->hello_sent || to_schedd(be, &m, NULL))
		be->bye_acked = true; /* not registered: no plan can come */
	sym_loop_timer_set(be->leave_t, sym_monotonic_ns() + LEAVE_MAX, 0);
	maybe_leave(be);
}

static void on_msg(struct backend *be, struct sym_fab_conn *conn, const uint8_t *data, size_t len)
{
	struct sym_msg m;
	char why[200];
	long n = sym_wire_decode(data, len, &m, why, sizeof(why));
	bool from_schedd = conn == be->schedd;
	if (from_schedd && n > 0 && (size_t)n == len) {
		if (m.term < be->term) {
			/* a scheduler replaced since (fencing): refused; it hears our term, and we reconnect */
			be->stale_msgs++;
			sym_rt_log_limited(&be->term_log, be->who, "refused a %s message of scheduler term %u: this backend has "
					   "seen term %u; dropping the connection (a scheduler replaced since)",
					   sym_wire_type_name(m.type), m.term, be->term);
			sym_rt_heartbeat(be->who, be->schedd, be->id, be->term, &be->seq);
			schedd_lost(be, "a scheduler of a past term");
			return;
		}
		be->term = m.term;
	}
	if (from_schedd)
		be->schedd_heard = sym_monotonic_ns();
	if (n > 0 && (size_t)n == len && from_schedd && m.type == SYM_MSG_HEARTBEAT)
		return; /* schedd is alive (it heartbeats us on its own timer) */
	if (n > 0 && (size_t)n == len && from_schedd && (m.type == SYM_MSG_PLAN || m.type == SYM_MSG_LOAD))
		be->registered = true; /* (schedd sends them to registered backends only) */
	if (n > 0 && (size_t)n == len && from_schedd && m.type == SYM_MSG_PLAN) {
		on_plan(be, &m, sym_monotonic_ns());
		return;
	}
	if (n > 0 && (size_t)n == len && from_schedd && m.type == SYM_MSG_LOAD) {
		on_load(be, &m);
		return;
	}
	if (n > 0 && (size_t)n == len && from_schedd && m.type == SYM_MSG_MODEL) {
		on_slot(be, &m);
		return;
	}
	int fi = -1;
	for (int i = 0; i < be->c->nfrontends; i++)
		if (be->fe[i] == conn)
			fi = i;
	if (n > 0 && (size_t)n == len && fi >= 0 && m.type == SYM_MSG_GRANT && (int)m.u.grant.frontend == fi) {
		be->fe_key[fi] = m.u.grant.key;
		memcpy(be->fe_seal[fi].key, m.u.grant.seal_key, SYM_INPUT_KEY);
		be->fe_seal[fi].encrypted = m.u.grant.encrypted;
		maybe_hello(be);
		return;
	}
	if (n > 0 && (size_t)n == len && from_schedd && m.type == SYM_MSG_BYE && be->leaving) {
		be->bye_acked = true; /* every plan for us came before this */
		maybe_leave(be);
		return;
	}
	if (n <= 0 || (size_t)n != len)
		sym_rt_warn(be->who, "malformed message from %s: %s; closing it", from_schedd ? "schedd" : "a frontend",
			    n < 0 ? why : "bad length");
	else
		sym_rt_warn(be->who, "unexpected %s message from %s; closing it", sym_wire_type_name(m.type),
			    from_schedd ? "schedd" : "a frontend");
	if (from_schedd) {
		schedd_lost(be, "protocol error");
		return;
	}
	for (int i = 0; i < be->c->nfrontends; i++)
		if (be->fe[i] == conn)
			frontend_lost(be, i);
}

static void on_connected(struct backend *be, struct sym_fab_conn *conn, int fi)
{
	if (conn == be->schedd) {
		be->schedd_up = true;
		be->schedd_heard = be->schedd_since = sym_monotonic_ns();
	} else if (fi >= 0) {
		be->fe_up[fi] = true;
		if (be->o->verbose)
			sym_rt_log(be->who, "connected to frontend %d", fi);
	}
	maybe_hello(be);
}

static void on_closed(struct backend *be, struct sym_fab_conn *conn, int fi, const char *reason)
{
	if (conn == be->schedd) {
		schedd_lost(be, reason);
	} else if (fi >= 0) {
		if (be->fe_up[fi] && !be->o->quiet)
			sym_rt_warn(be->who, "frontend %d lost: %s", fi, reason);
		frontend_lost(be, fi);
	} else {
		sym_loop_fab_close(be->loop, conn, NULL, NULL);
	}
}

static void on_fab(void *ctx, const struct sym_fab_event *e)
{
	struct backend *be = ctx;
	int fi = -1;
	for (int j = 0; j < be->c->nfrontends; j++)
		if (be->fe[j] == e->conn)
			fi = j;
	switch (e->type) {
	case SYM_FAB_CONNECTED:
		on_connected(be, e->conn, fi);
		break;
	case SYM_FAB_MSG:
		on_msg(be, e->conn, e->data, e->len);
		break;
	case SYM_FAB_READ:
		read_finished(be, e->ctx, e->status);
		break;
	case SYM_FAB_CLOSED:
		on_closed(be, e->conn, fi, e->reason);
		break;
	default:
		break;
	}
}

/* Every 100 ms: connects to schedd and the frontends it is not connected to. */
static void on_connect_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct backend *be = ctx;
	char err[512];
	struct sym_cluster *c = be->c;
	for (int i = 0; i < c->nfrontends; i++) {
		const struct sym_fab_peer fe = { SYM_CRED_FRONTEND, (uint32_t)i };
		if (!be->fe[i] && sym_fab_connect(be->fab, c->frontends[i].fabric.host, c->frontends[i].fabric.port, &fe,
						  &be->fe[i], err, sizeof(err)))
			sym_rt_warn(be->who, "frontend %d: %s", i, err);
	}
	/* an attempt unanswered (a scheduler that does not run, SIGSTOP, never answers): the other one */
	if (be->schedd && !be->schedd_up && sym_monotonic_ns() - be->schedd_tried > sym_rt_connect_timeout(c)) {
		snprintf(err, sizeof(err), "no answer in %.0f ms", (double)sym_rt_connect_timeout(c) / 1e6);
		schedd_lost(be, err);
		return;
	}
	/* the active scheduler, then its standby, in turn until one takes us */
	bool standby = c->has_standby && be->schedd_try % 2;
	const struct sym_hostport *to = standby ? &c->standby : &c->schedd;
	const struct sym_fab_peer sd = { SYM_CRED_SCHEDD, standby ? 1 : 0 };
	if (!be->schedd && !be->leaving) {
		be->schedd_try++;
		be->schedd_tried = sym_monotonic_ns();
		if (sym_fab_connect(be->fab, to->host, to->port, &sd, &be->schedd, err, sizeof(err)))
			sym_rt_warn(be->who, "schedd: %s", err);
	}
	maybe_hello(be); /* a batch of a former scheduler may have ended meanwhile */
}

static void on_beat_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct backend *be = ctx;
	char why[64];
	if (sym_rt_beat(be->who, be->c, be->schedd, be->id, be->term, &be->seq, be->schedd_heard,
			sym_loop_fab_time(be->loop), why, sizeof(why)))
		schedd_lost(be, why);
}

/* The executor thread handed a batch back. */
static void on_exec_done(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)events;
	struct backend *be = ctx;
	uint64_t v;
	if (read(sym_loop_io_fd(io), &v, sizeof(v)) < 0 && errno != EAGAIN)
		sym_rt_error(be->who, "eventfd: %s", strerror(errno));
	if (!be->running || atomic_load_explicit(&be->exec_state, memory_order_acquire) != 2)
		return;
	batch_done(be, be->b[be->head].rc ? SYM_WIRE_BACKEND_FAILED : SYM_WIRE_OK, true);
	maybe_load(be); /* an unload waiting for this batch */
	maybe_leave(be);
	maybe_hello(be); /* after a failover: the last batch of the old scheduler is done */
}

static void write_metrics(void *ctx, struct sym_buf *b)
{
	struct backend *be = ctx;
	char id[16];
	snprintf(id, sizeof(id), "%d", be->id);
	const char *l[] = { "backend", id, NULL };
	sym_prom_family(b, "symphony_backend_batches_total", "counter", "Batches run");
	sym_prom_sample(b, "symphony_backend_batches_total", l, (double)be->batches);
	sym_prom_family(b, "symphony_backend_rejected_batches_total", "counter",
			"Batches rejected: they could not start by their latest start");
	sym_prom_sample(b, "symphony_backend_rejected_batches_total", l, (double)be->rejected);
	sym_prom_family(b, "symphony_backend_requests_total", "counter", "Requests in the batches run");
	sym_prom_sample(b, "symphony_backend_requests_total", l, (double)be->reqs);
	sym_prom_family(b, "symphony_backend_read_failures_total", "counter", "Inputs whose RMA read failed");
	sym_prom_sample(b, "symphony_backend_read_failures_total", l, (double)be->read_failures);
	sym_prom_family(b, "symphony_backend_inputs_refused_total", "counter",
			"Inputs read whose seal failed (changed on the way, or not sealed for their request): not run");
	sym_prom_sample(b, "symphony_backend_inputs_refused_total", l, (double)be->inputs_refused);
	sym_prom_family(b, "symphony_backend_busy_seconds_total", "counter",
			"Time the GPU ran batches (its rate is the GPU's busy fraction)");
	sym_prom_sample(b, "symphony_backend_busy_seconds_total", l, (double)be->run.sum / 1e9);
	sym_prom_family(b, "symphony_backend_batch_seconds", "histogram", "Time each batch ran on the GPU");
	sym_prom_hist(b, "symphony_backend_batch_seconds", l, &be->run, sym_prom_latency_bounds,
		      sym_prom_latency_nbounds);
	sym_prom_family(b, "symphony_backend_start_lateness_seconds", "histogram",
			"How long after its planned start each batch began");
	sym_prom_hist(b, "symphony_backend_start_lateness_seconds", l, &be->late, sym_prom_latency_bounds,
		      sym_prom_latency_nbounds);
	sym_prom_family(b, "symphony_backend_model_loads_total", "counter", "Models loaded on schedd's command");
	sym_prom_sample(b, "symphony_backend_model_loads_total", l, (double)be->loads);
	sym_prom_family(b, "symphony_backend_model_unloads_total", "counter", "Models unloaded on schedd's command");
	sym_prom_sample(b, "symphony_backend_model_unloads_total", l, (double)be->unloads);
	sym_prom_family(b, "symphony_backend_model_load_failures_total", "counter",
			"Loads that failed (the model did not fit, the executor refused it)");
	sym_prom_sample(b, "symphony_backend_model_load_failures_total", l, (double)be->load_failures);
	sym_prom_family(b, "symphony_backend_model_load_seconds_total", "counter", "Time spent loading models");
	sym_prom_sample(b, "symphony_backend_model_load_seconds_total", l, be->load_s);
	size_t held = 0;
	for (size_t m = 0; m < be->c->exp.nmodels; m++)
		held += be->held[m] && !be->unloading[m];
	sym_prom_family(b, "symphony_backend_models_loaded", "gauge", "Models loaded on the GPU");
	sym_prom_sample(b, "symphony_backend_models_loaded", l, (double)held);
	sym_prom_family(b, "symphony_backend_scheduler_up", "gauge", "1 when the backend is registered with schedd");
	sym_prom_sample(b, "symphony_backend_scheduler_up", l, be->schedd_up);
	sym_prom_family(b, "symphony_backend_scheduler_term", "gauge", "The highest scheduler term the backend has seen");
	sym_prom_sample(b, "symphony_backend_scheduler_term", l, be->term);
	sym_prom_family(b, "symphony_backend_stale_scheduler_messages_total", "counter",
			"Scheduler messages refused for a term below the highest seen (a scheduler replaced since)");
	sym_prom_sample(b, "symphony_backend_stale_scheduler_messages_total", l, (double)be->stale_msgs);
}

static void on_http(void *ctx, struct sym_http_req *r)
{
	sym_rt_serve_metrics(r, write_metrics, ctx);
}

static int setup(struct backend *be, char *err, size_t errlen)
{
	struct sym_cluster *c = be->c;
	struct sym_experiment *e = &c->exp;
	be->kind = e->gpu_kind[be->id];
	be->maxb = 1;
	for (size_t m = 0; m < e->nmodels; m++) {
		int mb = e->profiles[(size_t)be->kind * e->nmodels + m].max_batch;
		if (mb > be->maxb)
			be->maxb = mb;
	}
	if (be->maxb > SYM_WIRE_MAX_BATCH)
		be->maxb = SYM_WIRE_MAX_BATCH;
	be->stride = c->input_max + SYM_INPUT_TRAILER;
	size_t stage = (size_t)be->maxb * be->stride;
	be->staging = malloc(SLOTS * stage);
	be->out_cap = (uint32_t)(c->output_bytes_max ? c->output_bytes_max : SYM_EXEC_OUTPUT);
	be->outbuf = malloc(SLOTS * (size_t)be->maxb * be->out_cap);
	be->fe = calloc((size_t)c->nfrontends, sizeof(*be->fe));
	be->fe_up = calloc((size_t)c->nfrontends, sizeof(*be->fe_up));
	be->fe_key = calloc((size_t)c->nfrontends, sizeof(*be->fe_key));
	be->fe_seal = calloc((size_t)c->nfrontends, sizeof(*be->fe_seal));
	if (!be->staging || !be->outbuf || !be->fe || !be->fe_up || !be->fe_key || !be->fe_seal)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (int j = 0; j < SLOTS; j++) {
		struct batch *b = &be->b[j];
		b->staging = be->staging + (size_t)j * stage;
		b->outbuf = be->outbuf + (size_t)j * (size_t)be->maxb * be->out_cap;
		b->in = calloc((size_t)be->maxb, sizeof(*b->in));
		b->inputs = calloc((size_t)be->maxb, sizeof(*b->inputs));
		b->lens = calloc((size_t)be->maxb, sizeof(*b->lens));
		b->outputs = calloc((size_t)be->maxb, sizeof(*b->outputs));
		b->out_lens = calloc((size_t)be->maxb, sizeof(*b->out_lens));
		if (!b->in || !b->inputs || !b->lens || !b->outputs || !b->out_lens)
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	/* sleeps are precise to ~1 us here (timer slack) */
	const struct sym_kind *kd = &e->kinds[be->kind];
	struct sym_executor_opts xo = { .spin_ns = EXEC_SPIN, .device = c->device,
					.model_lib = c->model_lib[0] ? c->model_lib : NULL,
					.torch_threads = c->torch_threads, .torch_device = c->torch_device,
					.memory_mb = e->memory_check && kd->memory_mb > 0 ? kd->memory_mb : 0,
					.load_mbps = e->partition.load_mbps, .load_ms = e->partition.load_ms };
	be->x = sym_executor_open(c->executor, &xo, err, errlen);
	if (!be->x)
		return -EINVAL;
	be->descs = calloc(e->nmodels, sizeof(*be->descs));
	be->held = calloc(e->nmodels, sizeof(*be->held));
	be->unloading = calloc(e->nmodels, sizeof(*be->unloading));
	be->lq_cap = 2 * (int)e->nmodels + 8;
	be->lq = calloc((size_t)be->lq_cap, sizeof(*be->lq));
	be->slot_next = calloc(e->nmodels, sizeof(*be->slot_next));
	if (!be->descs || !be->held || !be->unloading || !be->lq || !be->slot_next)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	/* With sub-clusters the backend starts empty and loads what schedd asks
	 * for (its sub-cluster's models); else it loads every model now. */
	bool on_command = e->partition.subclusters > 1;
	for (size_t m = 0; m < e->nmodels; m++) {
		be->descs[m] = c->models[m];
		be->descs[m].profile = &e->profiles[(size_t)be->kind * e->nmodels + m];
		be->descs[m].file_mb = e->models[m].file_mb;
		if (on_command || m >= e->slot0) /* (a spare slot: no model until schedd says, MODEL) */
			continue;
		int rc = be->x->ops->load(be->x, (int)m, &be->descs[m], err, errlen);
		if (rc)
			return rc;
		be->held[m] = true;
	}
	struct sym_fab_cfg fc = { .provider = c->provider, .cred = be->o->cred, .revoked = be->o->revoked };
	int rc = sym_fab_open(&be->fab, &fc, err, errlen);
	if (!rc)
		rc = sym_fab_mr_reg(be->fab, be->staging, SLOTS * stage, SYM_FAB_LOCAL_READ_TARGET, &be->mr, err, errlen);
	if (rc)
		return rc;
	be->to_exec = eventfd(0, EFD_CLOEXEC);
	be->from_exec = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (be->to_exec < 0 || be->from_exec < 0)
		return snprintf(err, errlen, "eventfd: %s", strerror(errno)), -errno;
	if ((rc = pthread_create(&be->thr, NULL, exec_thread, be)))
		return snprintf(err, errlen, "cannot start the executor thread: %s", strerror(rc)), -rc;
	be->thr_started = true;
	be->to_load = eventfd(0, EFD_CLOEXEC);
	be->from_load = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (be->to_load < 0 || be->from_load < 0)
		return snprintf(err, errlen, "eventfd: %s", strerror(errno)), -errno;
	if ((rc = pthread_create(&be->lthr, NULL, load_thread, be)))
		return snprintf(err, errlen, "cannot start the loader thread: %s", strerror(rc)), -rc;
	be->lthr_started = true;
	return 0;
}

/* SIGHUP: the cluster file read again (sym_rt_reload_cluster); a backend
 * holds only the HTTP limits of what may change live. */
static void on_reload(void *ctx)
{
	struct backend *be = ctx;
	char done[1500], err[1500];
	int rc = sym_rt_reload_cluster(be->c, be->o, done, sizeof(done), err, sizeof(err));
	if (rc < 0) {
		sym_rt_warn(be->who, "SIGHUP: reload refused, nothing changed: %s", err);
		return;
	}
	sym_http_set_limits(be->http, 0, be->c->http_body_budget, (unsigned)be->c->client_min_rate);
	sym_rt_log(be->who, "SIGHUP: reloaded %s: %s", be->o->config_path, rc ? done : "no change");
}

/* GET /v2/health/ready (sym_rt_set_ready): registered with a scheduler, not leaving. */
static bool is_ready(void *ctx, char *why, size_t len)
{
	struct backend *be = ctx;
	if (be->leaving)
		return snprintf(why, len, "leaving"), false;
	if (!be->schedd_up)
		return snprintf(why, len, "no scheduler reached"), false;
	if (!be->hello_sent)
		return snprintf(why, len, "not registered with the scheduler yet (reaching the frontends)"), false;
	return true;
}

/* HTTP, and everything on the loop. */
static int setup_loop(struct backend *be)
{
	struct sym_cluster *c = be->c;
	char hport[16], err[512];
	sym_rt_set_ready(is_ready, be);
	if (sym_rt_metrics_start(c, SYM_ROLE_BACKEND, be->id, sym_cluster_bind_host(c, c->host), write_metrics, be, err, sizeof(err)))
		return sym_rt_error(be->who, "metrics: %s", err), -EINVAL;
	if (sym_cluster_http_port(c, SYM_ROLE_BACKEND, be->id, hport, sizeof(hport))) {
		if (sym_rt_http_start(&be->http, c, sym_cluster_bind_host(c, c->host), hport, 4096, on_http, be, err, sizeof(err)))
			return sym_rt_error(be->who, "%s", err), -EINVAL;
	}
	struct sym_loop_io *io;
	int rc = sym_rt_loop(&be->loop, be->who, be->fab, on_fab, be->http, be);
	if (!rc && ((rc = sym_loop_io_start(be->loop, be->from_exec, EPOLLIN, on_exec_done, be, &io)) ||
		    (rc = sym_loop_io_start(be->loop, be->from_load, EPOLLIN, on_load_done, be, &io)) ||
		    (rc = sym_loop_timer_new(be->loop, on_connect_timer, be, &be->connect_t)) ||
		    (rc = sym_loop_timer_new(be->loop, on_beat_timer, be, &be->beat_t)) ||
		    (rc = sym_loop_timer_new(be->loop, on_leave_timer, be, &be->leave_t))))
		sym_rt_error(be->who, "event loop: %s", strerror(-rc));
	if (!rc)
		sym_loop_timer_set(be->connect_t, sym_monotonic_ns(), RECONNECT);
	return rc;
}

static void teardown(struct backend *be)
{
	if (be->thr_started) {
		atomic_store_explicit(&be->exec_state, 3, memory_order_release);
		uint64_t v = 1;
		if (write(be->to_exec, &v, sizeof(v)) >= 0)
			pthread_join(be->thr, NULL);
	}
	if (be->lthr_started) { /* a load under way finishes first */
		atomic_store_explicit(&be->load_state, 3, memory_order_release);
		uint64_t v = 1;
		if (write(be->to_load, &v, sizeof(v)) >= 0)
			pthread_join(be->lthr, NULL);
	}
	sym_loop_destroy(be->loop); /* connections closing now */
	if (be->to_exec >= 0)
		close(be->to_exec);
	if (be->from_exec >= 0)
		close(be->from_exec);
	if (be->to_load >= 0)
		close(be->to_load);
	if (be->from_load >= 0)
		close(be->from_load);
	if (be->mr)
		sym_fab_mr_close(be->mr);
	if (be->fab)
		sym_fab_destroy(be->fab);
	if (be->x)
		be->x->ops->destroy(be->x);
	free(be->staging);
	free(be->outbuf);
	free(be->descs);
	free(be->held);
	free(be->unloading);
	free(be->lq);
	free(be->slot_next);
	free(be->fe);
	free(be->fe_up);
	free(be->fe_key);
	if (be->fe_seal)
		sodium_memzero(be->fe_seal, (size_t)be->c->nfrontends * sizeof(*be->fe_seal));
	free(be->fe_seal);
	for (int j = 0; j < SLOTS; j++) {
		free(be->b[j].in);
		free(be->b[j].inputs);
		free(be->b[j].lens);
		free(be->b[j].outputs);
		free(be->b[j].out_lens);
	}
	sym_hist_finish(&be->late);
	sym_hist_finish(&be->run);
	sym_http_stop(be->http);
}

int sym_backend_run(struct sym_cluster *c, const struct sym_rt_opts *o)
{
	struct backend be = { .c = c, .o = o, .id = o->id, .to_exec = -1, .from_exec = -1, .to_load = -1,
			      .from_load = -1 };
	snprintf(be.who, sizeof(be.who), "backend %d", o->id);
	sym_hist_init(&be.late);
	sym_hist_init(&be.run);
	char err[1024] = "";
	int rc = setup(&be, err, sizeof(err));
	if (rc) {
		sym_rt_error(be.who, "%s", err);
		rc = rc == -EINVAL ? 2 : 1;
		goto out;
	}
	rc = 1;
	if (setup_loop(&be))
		goto out;
	if (!o->quiet)
		sym_rt_log(be.who, "%s executor, GPU kind %s, %zu models (and %d spare slots); fabric %s", be.x->ops->name,
			   c->exp.kinds[be.kind].name, c->exp.slot0, c->exp.model_slots, sym_fab_provider(be.fab));
	sym_rt_on_term(drain, &be);
	sym_rt_on_reload(on_reload, &be);
	if ((rc = sym_loop_run(be.loop)))
		sym_rt_error(be.who, "%s", sym_loop_error(be.loop));
	sym_fab_flush(be.fab, 1000); /* the last completions and results go out before the close */
	rc = rc ? 1 : 0;
	if (!o->quiet)
		sym_rt_log(be.who, "stopping: %" PRIu64 " batches, %" PRIu64 " requests, %" PRIu64
			   " failed reads, %" PRIu64 " batches rejected (past their latest start); batches began after "
			   "their planned start by %.3f ms (p50), %.3f (p99), %.3f (max)",
			   be.batches, be.reqs, be.read_failures, be.rejected, (double)sym_hist_quantile(&be.late, 0.5) / 1e6,
			   (double)sym_hist_quantile(&be.late, 0.99) / 1e6, (double)be.late.max / 1e6);
out:
	teardown(&be);
	return rc;
}
