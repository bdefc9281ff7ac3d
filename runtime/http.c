#define _GNU_SOURCE
#include "runtime/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "runtime/net.h"

struct sym_http {
	struct MHD_Daemon *d;
	int lfd;
	struct sym_http_cfg cfg;
	struct sym_http_stats st;
	bool resumed; /* a connection was resumed: run libmicrohttpd soon */
};

struct sym_http_req {
	struct sym_http *h;
	struct MHD_Connection *conn;
	char method[16];
	char *path;
	char *body;
	size_t len, cap;
	bool too_large;
	bool dispatched;
	bool suspended;
	struct MHD_Response *resp; /* the answer, until queued */
	unsigned status;
};

static void req_free(struct sym_http_req *r)
{
	if (r->resp)
		MHD_destroy_response(r->resp);
	free(r->path);
	free(r->body);
	free(r);
}

static void count(struct sym_http *h, unsigned status)
{
	h->st.requests++;
	if (status >= 200 && status < 300)
		h->st.s2xx++;
	else if (status >= 400 && status < 500)
		h->st.s4xx++;
	else if (status >= 500)
		h->st.s5xx++;
}

static enum MHD_Result queue(struct sym_http_req *r)
{
	enum MHD_Result rc = MHD_queue_response(r->conn, r->status, r->resp);
	MHD_destroy_response(r->resp);
	r->resp = NULL;
	count(r->h, r->status);
	return rc;
}

static bool append(struct sym_http_req *r, const char *data, size_t n)
{
	if (r->len + n > r->h->cfg.body_max)
		return false;
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n + 1)
			cap *= 2;
		if (cap > r->h->cfg.body_max + 1)
			cap = r->h->cfg.body_max + 1;
		char *b = realloc(r->body, cap);
		if (!b)
			return false;
		r->body = b;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = 0;
	return true;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				 const char *version, const char *upload, size_t *upsize, void **con_cls)
{
	(void)version;
	struct sym_http *h = cls;
	struct sym_http_req *r = *con_cls;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->h = h;
		r->conn = conn;
		snprintf(r->method, sizeof(r->method), "%s", method);
		r->path = strdup(url ? url : "/");
		if (!r->path) {
			free(r);
			return MHD_NO;
		}
		*con_cls = r;
		/* a declared length above the limit is refused before its body is read */
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > h->cfg.body_max) {
			r->dispatched = true;
			if (sym_http_reply_error(r, 413, "the body (%s bytes) is larger than the limit of %zu bytes", cl,
						 h->cfg.body_max) == 0)
				return queue(r);
			return MHD_NO;
		}
		return MHD_YES;
	}
	if (*upsize) {
		if (!r->too_large && !append(r, upload, *upsize))
			r->too_large = true;
		*upsize = 0;
		return MHD_YES;
	}
	if (r->resp)
		return queue(r);
	if (r->dispatched)
		return MHD_NO; /* resumed with no answer: cannot happen */
	r->dispatched = true;
	if (!r->body && !append(r, "", 0))
		return MHD_NO;
	if (r->too_large)
		sym_http_reply_error(r, 413, "the body is larger than the limit of %zu bytes", h->cfg.body_max);
	else
		h->cfg.handler(h->cfg.ctx, r);
	if (r->resp)
		return queue(r);
	MHD_suspend_connection(conn);
	r->suspended = true;
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)conn, (void)why;
	struct sym_http_req *r = *con_cls;
	if (r)
		req_free(r);
	*con_cls = NULL;
}

int sym_http_start(struct sym_http **out, const struct sym_http_cfg *cfg, char *err, size_t errlen)
{
	*out = NULL;
	struct sym_http *h = calloc(1, sizeof(*h));
	if (!h)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	h->cfg = *cfg;
	char msg[256];
	h->lfd = sym_tcp_listen(cfg->host, cfg->port, msg, sizeof(msg));
	if (h->lfd < 0) {
		int rc = h->lfd;
		snprintf(err, errlen, "HTTP on %s:%s: %s", cfg->host, cfg->port, msg);
		free(h);
		return rc;
	}
	bool tls = cfg->tls_cert && cfg->tls_key;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		close(h->lfd);
		free(h);
		return snprintf(err, errlen, "HTTPS on %s:%s: this libmicrohttpd was built without TLS", cfg->host,
				cfg->port), -EINVAL;
	}
	/* the limits: a connection is closed after timeout_s without progress (an idle
	 * keep-alive, or a client sending its request too slowly), at most conn_max at
	 * once (and per_ip_max from one address), a request's headers within the
	 * default 32 KiB of memory per connection (431 above, from libmicrohttpd) */
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | (tls ? MHD_USE_TLS : 0);
	unsigned timeout = cfg->timeout_s ? cfg->timeout_s : 10, limit = cfg->conn_max ? cfg->conn_max : 1024;
	if (tls)
		h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, h, MHD_OPTION_LISTEN_SOCKET, h->lfd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_CONNECTION_TIMEOUT, timeout,
					MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
					cfg->per_ip_max, MHD_OPTION_HTTPS_MEM_CERT, cfg->tls_cert, MHD_OPTION_HTTPS_MEM_KEY,
					cfg->tls_key, MHD_OPTION_END);
	else
		h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, h, MHD_OPTION_LISTEN_SOCKET, h->lfd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_CONNECTION_TIMEOUT, timeout,
					MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
					cfg->per_ip_max, MHD_OPTION_END);
	if (!h->d) {
		close(h->lfd);
		free(h);
		return snprintf(err, errlen, "HTTP%s on %s:%s: libmicrohttpd did not start%s", tls ? "S" : "", cfg->host,
				cfg->port, tls ? " (is the certificate and key PEM, and do they match?)" : ""),
		       -EINVAL;
	}
	*out = h;
	return 0;
}

void sym_http_stop(struct sym_http *h)
{
	if (!h)
		return;
	/* let answers given just now go out */
	for (int i = 0; i < 20; i++) {
		const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!di || !di->num_connections)
			break;
		MHD_run(h->d);
		usleep(2000);
	}
	MHD_stop_daemon(h->d);
	close(h->lfd);
	free(h);
}

int sym_http_fd(const struct sym_http *h)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	return di ? di->epoll_fd : -1;
}

static unsigned connections(const struct sym_http *h)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return di ? di->num_connections : 0;
}

void sym_http_run(struct sym_http *h)
{
	/* a resumed connection's answer is queued by one pass and sent by the
	 * next: run until libmicrohttpd has nothing left to do at once */
	h->resumed = false;
	MHD_UNSIGNED_LONG_LONG t = 0;
	/* At conn_max, libmicrohttpd takes the listening socket out of its epoll set, and puts
	 * it back at the start of the pass after the one that closes a connection; in
	 * external-epoll mode nothing would wake us for that pass (no connection left to time
	 * out, the listener not watched), and the server would never accept again. So a pass
	 * that closed connections is followed by another, as is one that left work due now. */
	bool again = true;
	for (int i = 0; i < 6 && again; i++) {
		unsigned before = connections(h);
		MHD_run(h->d);
		again = connections(h) < before || (MHD_get_timeout(h->d, &t) == MHD_YES && t == 0);
	}
}

bool sym_http_pending(const struct sym_http *h)
{
	return h && h->resumed;
}

int sym_http_timeout_ms(struct sym_http *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	if (h->resumed)
		return 0;
	if (MHD_get_timeout(h->d, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (int)t;
}

const char *sym_http_method(const struct sym_http_req *r)
{
	return r->method;
}

const char *sym_http_path(const struct sym_http_req *r)
{
	return r->path;
}

const char *sym_http_header(const struct sym_http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *sym_http_query(const struct sym_http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *sym_http_body(const struct sym_http_req *r, size_t *len)
{
	*len = r->len;
	return r->body ? r->body : "";
}

int sym_http_reply(struct sym_http_req *r, unsigned status, const char *content_type, const void *body,
		   size_t len, const char *const *headers)
{
	if (r->resp)
		return -EALREADY;
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	int rc = 0;
	if (!resp) {
		static const char oom[] = "{\"error\": \"out of memory\"}";
		resp = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		status = 500;
		content_type = "application/json";
		headers = NULL;
		rc = -ENOMEM;
		if (!resp)
			return rc; /* the connection is closed when it resumes with no answer */
	}
	if (content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	for (int i = 0; headers && headers[i] && headers[i + 1]; i += 2)
		MHD_add_response_header(resp, headers[i], headers[i + 1]);
	r->resp = resp;
	r->status = status;
	if (r->suspended) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
		r->h->resumed = true;
	}
	return rc;
}

/* {"error": msg}, JSON-escaped. */
static int reply_error(struct sym_http_req *r, unsigned status, const char *msg, const char *const *headers)
{
	cJSON *o = cJSON_CreateObject();
	char *text = o && cJSON_AddStringToObject(o, "error", msg) ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	int rc = sym_http_reply(r, status, "application/json", text ? text : "{}", text ? strlen(text) : 2, headers);
	free(text);
	return rc;
}

int sym_http_reply_error(struct sym_http_req *r, unsigned status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return reply_error(r, status, msg, NULL);
}

int sym_http_reply_method(struct sym_http_req *r, const char *allow)
{
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s %s: this endpoint takes %s", r->method, r->path, allow);
	const char *h[] = { "Allow", allow, NULL };
	return reply_error(r, 405, msg, h);
}

void sym_http_stats(const struct sym_http *h, struct sym_http_stats *out)
{
	*out = h->st;
}
