#include "runtime/autoscaler.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/time.h"
#include "runtime/executor.h"
#include "runtime/prom.h"
#include "runtime/rt.h"

#define WHO "autoscale"

/* ---- the metrics ---- */

/* One sample line "name{k="v",...} value": the name, up to 2 labels it
 * asks for, the value. Returns 1 for a sample, 0 for a line to skip, -1 when
 * malformed. */
static int sample(const char *line, const char *end, char *name, size_t nl, const char *k1, long *v1,
		  const char *k2, long *v2, double *value)
{
	const char *p = line;
	size_t n = 0;
	while (p < end && *p != '{' && *p != ' ')
		if (n + 1 < nl)
			name[n++] = *p++;
		else
			return -1;
	name[n] = 0;
	*v1 = *v2 = -1;
	if (p < end && *p == '{') {
		p++;
		while (p < end && *p != '}') {
			char key[64], val[64];
			size_t kn = 0, vn = 0;
			while (p < end && *p != '=' && kn + 1 < sizeof(key))
				key[kn++] = *p++;
			key[kn] = 0;
			if (p + 1 >= end || *p != '=' || p[1] != '"')
				return -1;
			p += 2;
			while (p < end && *p != '"') {
				if (*p == '\\' && p + 1 < end)
					p++;
				if (vn + 1 < sizeof(val))
					val[vn++] = *p;
				p++;
			}
			val[vn] = 0;
			if (p >= end)
				return -1;
			p++; /* the closing quote */
			if (p < end && *p == ',')
				p++;
			char *e;
			long x = strtol(val, &e, 10);
			if (k1 && !strcmp(key, k1))
				*v1 = *e || !vn ? -2 : x;
			else if (k2 && !strcmp(key, k2))
				*v2 = *e || !vn ? -2 : x;
		}
		if (p >= end)
			return -1;
		p++;
	}
	if (p >= end || *p != ' ')
		return -1;
	char num[64];
	size_t vn = 0;
	for (p++; p < end && *p != ' ' && vn + 1 < sizeof(num); p++)
		num[vn++] = *p;
	num[vn] = 0;
	char *e;
	*value = strtod(num, &e);
	return vn && !*e ? 1 : -1;
}

int sym_ctl_parse(const char *text, size_t len, struct sym_ctl_metrics *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	memset(m->serving, -1, sizeof(m->serving));
	m->next_advice_s = m->interval_s = -1;
	static const char *const adv[] = { "symphony_subcluster_autoscale_add_gpus",
					   "symphony_subcluster_autoscale_release_gpus",
					   "symphony_subcluster_autoscale_bad_rate",
					   "symphony_subcluster_autoscale_idle_fraction" };
	const char *p = text, *end = text + len;
	int lineno = 0;
	bool any = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		lineno++;
		if (le > p && *p != '#' && !strncmp(p, "symphony_", 9)) {
			char name[128];
			long a, b;
			double v;
			bool serving = le - p > 24 && !strncmp(p, "symphony_backend_serving{", 25);
			int rc = serving ? sample(p, le, name, sizeof(name), "backend", &a, "subcluster", &b, &v)
					 : sample(p, le, name, sizeof(name), "subcluster", &a, NULL, &b, &v);
			if (rc < 0)
				return snprintf(err, errlen, "schedd's metrics, line %d: not a sample ('%.60s')", lineno, p),
				       -EPROTO;
			if (serving && !strcmp(name, "symphony_backend_serving")) {
				if (a < 0 || a >= SYM_CTL_MAX_BACKENDS || b < 0 || b >= SYM_CTL_MAX_PARTS)
					return snprintf(err, errlen, "schedd's metrics, line %d: backend %ld, sub-cluster %ld "
						       "out of range", lineno, a, b), -EPROTO;
				m->serving[a] = v > 0.5;
				m->part[a] = (short)b;
				if (a + 1 > m->nbackends)
					m->nbackends = (int)a + 1;
				if (b + 1 > m->nparts)
					m->nparts = (int)b + 1;
				any = true;
			}
			bool next = !strcmp(name, "symphony_autoscale_next_advice_seconds");
			if (next || !strcmp(name, "symphony_autoscale_interval_seconds")) {
				if (!isfinite(v) || v < 0 || v > 1e6)
					return snprintf(err, errlen, "schedd's metrics, line %d: %s %g s out of range", lineno,
							name, v), -EPROTO;
				*(next ? &m->next_advice_s : &m->interval_s) = v;
			}
			for (int k = 0; k < 4; k++) {
				if (strcmp(name, adv[k]))
					continue;
				if (a < 0 || a >= SYM_CTL_MAX_PARTS || !isfinite(v) || v < 0)
					return snprintf(err, errlen, "schedd's metrics, line %d: sub-cluster %ld, value %g out of "
						       "range", lineno, a, v), -EPROTO;
				double *dst[] = { m->add, m->release, m->bad_rate, m->idle_fraction };
				dst[k][a] = v;
				if (a + 1 > m->nparts)
					m->nparts = (int)a + 1;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!any)
		return snprintf(err, errlen, "no symphony_backend_serving sample: is this schedd's /metrics (of this "
				       "version)?"), -EPROTO;
	return 0;
}

/* ---- the decision ---- */

double sym_ctl_advice_at(struct sym_ctl_state *st, const struct sym_ctl_metrics *m, double now_s)
{
	if (m->next_advice_s < 0 || m->interval_s <= 0 || m->interval_s < m->next_advice_s)
		return now_s;
	double at = now_s - (m->interval_s - m->next_advice_s), len = m->interval_s;
	/* on the grid of the first (each read's estimate is late by the read's own latency, a few ms,
	 * so two advices a cooldown of one interval apart could read 0.999 intervals apart); a grid
	 * that moved (schedd restarted it after a stall, or a new interval_s) is taken anew */
	double k = st->grid_len == len ? nearbyint((at - st->grid0) / len) : 0, q = st->grid0 + k * len;
	if (st->grid_len == len && fabs(at - q) < 0.1 * len)
		at = q;
	else
		st->grid0 = at, st->grid_len = len;
	return at > 0 ? at : 0; /* (an interval closed before the controller started: its start) */
}

double sym_ctl_next_read(const struct sym_ctl_metrics *m, double now_s, double wake_s)
{
	if (m->next_advice_s >= 0 && now_s + m->next_advice_s + SYM_CTL_ADVICE_SLACK_S < wake_s)
		return now_s + m->next_advice_s + SYM_CTL_ADVICE_SLACK_S;
	return wake_s;
}

void sym_ctl_state_init(struct sym_ctl_state *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < SYM_CTL_MAX_BACKENDS; i++)
		st->pending_since[i] = -1;
}

int sym_ctl_decide(const struct sym_ctl_cfg *c, struct sym_ctl_state *st, const struct sym_ctl_metrics *m,
		   double now_s, struct sym_scale_action *out, int cap)
{
	st->expired = 0;
	struct sym_scale_part parts[SYM_CTL_MAX_PARTS];
	memset(parts, 0, sizeof(parts));
	for (int i = 0; i < m->nbackends; i++) {
		if (st->pending_since[i] >= 0 &&
		    (m->serving[i] == 1 || now_s - st->pending_since[i] > c->start_timeout_s)) {
			st->expired += m->serving[i] != 1;
			st->pending_since[i] = -1; /* up, or given up */
		}
		if (st->removing[i] && m->serving[i] != 1)
			st->removing[i] = false; /* gone */
		/* a backend coming up counts in the sub-cluster it was started for (its id's may be
		 * another); one asked to stop counts nowhere, and so does an id schedd did not list */
		struct sym_scale_gpu *g = &st->gpus[i];
		g->part = m->part[i];
		if (m->serving[i] == 1)
			g->state = st->removing[i] ? SYM_SCALE_LEAVING : SYM_SCALE_SERVING;
		else if (st->pending_since[i] >= 0)
			*g = (struct sym_scale_gpu){ SYM_SCALE_COMING, st->pending_part[i] };
		else
			g->state = m->serving[i] == 0 ? SYM_SCALE_OFF : SYM_SCALE_LEAVING;
	}
	for (int j = 0; j < m->nparts; j++) {
		struct sym_scale_part *p = &parts[j];
		p->busy_fraction = 1 - m->idle_fraction[j];
		p->advice = (struct sym_autoscale){ .bad_rate = m->bad_rate[j], .idle_fraction = m->idle_fraction[j],
						    .add = (int)ceil(m->add[j] - 1e-9),
						    .release = (int)floor(m->release[j] + 1e-9) };
	}
	int n = sym_scale_step(&c->scale, &st->scale, parts, m->nparts, st->gpus, m->nbackends, now_s, out, cap,
			       &st->wake_s);
	for (int k = 0; k < n; k++) {
		if (out[k].delta > 0) {
			st->pending_since[out[k].gpu] = now_s;
			st->pending_part[out[k].gpu] = (short)out[k].part;
		} else {
			st->removing[out[k].gpu] = true;
		}
	}
	return n;
}

/* ---- the process ---- */

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

/* schedd's metrics are some kB per sub-cluster and backend id: far more is refused */
#define BODY_MAX (64u << 20)

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct sym_buf *b = ctx;
	size_t n = size * nmemb;
	if (b->len + n > BODY_MAX)
		return 0;
	sym_buf_append(b, data, n);
	return b->oom ? 0 : n;
}

/* GET url into f. 0, or -EIO with a message. */
static int fetch(CURL *h, const struct sym_ctl_opts *o, struct sym_buf *f, char *err, size_t errlen)
{
	f->len = 0;
	f->oom = false;
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, o->url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert);
	CURLcode rc = curl_easy_perform(h);
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK)
		return snprintf(err, errlen, "%s: %s", o->url, cerr[0] ? cerr : curl_easy_strerror(rc)), -EIO;
	if (code != 200)
		return snprintf(err, errlen, "%s: HTTP status %ld", o->url, code), -EIO;
	return 0;
}

/* Runs cmd with /bin/sh, the backend id and sub-cluster in its environment;
 * kills it past the timeout. Returns its exit status (128 + signal), or -1
 * when it could not start. */
static int run_cmd(const char *cmd, const struct sym_scale_action *a, double timeout_s)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char id[16], part[16];
		snprintf(id, sizeof(id), "%d", a->gpu);
		snprintf(part, sizeof(part), "%d", a->part);
		setenv("SYMPHONY_BACKEND_ID", id, 1);
		setenv("SYMPHONY_SUBCLUSTER", part, 1);
		setenv("SYMPHONY_ACTION", a->delta > 0 ? "add" : "remove", 1);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	sym_time end = sym_monotonic_ns() + (sym_time)(timeout_s * 1e9);
	int st;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (sym_monotonic_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			sym_rt_warn(WHO, "the command for backend %d ran past %.0f s: killed", a->gpu, timeout_s);
			break;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

int sym_ctl_run(const struct sym_ctl_opts *o)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		sym_rt_error(WHO, "libcurl could not start");
		return 1;
	}
	CURL *h = curl_easy_init();
	struct sym_ctl_metrics *m = malloc(sizeof(*m));
	struct sym_ctl_state *st = malloc(sizeof(*st));
	struct sym_scale_action *acts = malloc(SYM_CTL_MAX_BACKENDS * sizeof(*acts));
	struct sym_buf f = { 0 };
	int rc = 0;
	if (!h || !m || !st || !acts) {
		sym_rt_error(WHO, "out of memory");
		rc = 1;
		goto out;
	}
	sym_ctl_state_init(st);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sym_time t0 = sym_monotonic_ns();
	if (!o->quiet)
		sym_rt_log(WHO, "following %s every %g s (rule %s, cooldown %g s, %d to %d backends, %s %g)", o->url,
			   o->cfg.scale.interval_s, sym_scale_rule_name(o->cfg.scale.rule), o->cfg.scale.cooldown_s,
			   o->cfg.scale.min_gpus, o->cfg.scale.max_gpus,
			   o->cfg.scale.rule == SYM_SCALE_TARGET ? "target busy fraction" : "release fraction",
			   o->cfg.scale.rule == SYM_SCALE_TARGET ? o->cfg.scale.target : o->cfg.scale.release_fraction);
	unsigned fails = 0;
	uint64_t adds = 0, removes = 0;
	while (!stop_sig) {
		sym_time now = sym_monotonic_ns();
		double now_s = (double)(now - t0) / 1e9, wake_s = now_s + o->cfg.scale.interval_s;
		if (o->duration_s > 0 && now_s >= o->duration_s)
			break;
		char err[512];
		if (fetch(h, o, &f, err, sizeof(err)) || sym_ctl_parse(f.p ? f.p : "", f.len, m, err, sizeof(err))) {
			if (fails++ % 10 == 0) /* a line per ten failures */
				sym_rt_log(WHO, "%s (no action)", err);
		} else {
			fails = 0;
			double at_s = sym_ctl_advice_at(st, m, now_s);
			int n = sym_ctl_decide(&o->cfg, st, m, at_s, acts, SYM_CTL_MAX_BACKENDS);
			wake_s = sym_ctl_next_read(m, now_s, now_s + (st->wake_s - at_s));
			if (st->expired)
				sym_rt_warn(WHO, "%d backend(s) started did not serve within %g s: no longer awaited", st->expired,
					    o->cfg.start_timeout_s);
			for (int k = 0; k < n; k++) {
				const struct sym_scale_action *a = &acts[k];
				bool add = a->delta > 0;
				int j = a->part;
				int x = run_cmd(add ? o->add_cmd : o->remove_cmd, a, o->cmd_timeout_s);
				sym_rt_log(WHO, "sub-cluster %d: advice +%g/-%g (bad rate %.2f%%, idle %.1f%%): %s backend %d: "
					   "command exited %d", j, m->add[j], m->release[j], 100 * m->bad_rate[j],
					   100 * m->idle_fraction[j], add ? "adding" : "removing", a->gpu, x);
				if (add)
					adds++;
				else
					removes++;
				if (x != 0 && add)
					st->pending_since[a->gpu] = -1; /* it will not come up */
				if (x != 0 && !add)
					st->removing[a->gpu] = false;
			}
		}
		sym_time next = t0 + (sym_time)(wake_s * 1e9);
		while (!stop_sig && sym_monotonic_ns() < next) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	if (!o->quiet)
		sym_rt_log(WHO, "stopping%s: %" PRIu64 " backends added, %" PRIu64 " removed",
			   stop_sig ? " (signal)" : "", adds, removes);
out:
	sym_buf_free(&f);
	free(m);
	free(st);
	free(acts);
	if (h)
		curl_easy_cleanup(h);
	curl_global_cleanup();
	return rc;
}
