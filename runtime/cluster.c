#include "runtime/cluster.h"

#include "core/policy.h"
#include "profiles/zoo.h"
#include "runtime/cuda/cuda_models.h"
#include "experiment/repository.h"
#include "runtime/wire.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

int sym_cluster_init(struct sym_cluster *c)
{
	memset(c, 0, sizeof(*c));
	int rc = sym_experiment_init(&c->exp);
	if (rc)
		return rc;
	snprintf(c->provider, sizeof(c->provider), "tcp");
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	snprintf(c->executor, sizeof(c->executor), "emulated");
	snprintf(c->torch_device, sizeof(c->torch_device), "cpu");
	c->torch_threads = 1;
	c->repository_slots = -1;
	c->port_base = 7100;
	c->nfrontends = 1;
	c->nbackends = 2;
	c->threads = 1;
	c->heartbeat_ms = 10;
	c->failure_ms = 1000;
	c->input_max = 256 * 1024;
	c->pool_slots = 1024;
	c->input_encryption = true;
	c->input_bytes = 1024;
	c->http_base = -1;
	c->http_body_max = 8u << 20;
	c->deadline_max_ms = 10000;
	c->late_status = 200;
	c->http_conn_max = 1024;
	c->http_timeout_s = 10;
	c->http_per_ip_max = 64;
	c->http_body_budget = 64u << 20;
	c->client_min_rate = 32768;
	c->clients_max = 256;
	c->clients_per_ip_max = 64;
	c->clients_budget = 64u << 20;
	c->clients_timeout_s = 10;
	return 0;
}

static void free_models(struct sym_cluster *c)
{
	free(c->models);
	c->models = NULL;
}

void sym_cluster_finish(struct sym_cluster *c)
{
	sym_experiment_finish(&c->exp);
	free(c->frontends);
	free_models(c);
	cJSON_Delete(c->models_rt);
	memset(c, 0, sizeof(*c));
}

int sym_hostport_parse(const char *text, struct sym_hostport *out)
{
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text || !colon[1])
		return -EINVAL;
	const char *h = text;
	size_t hl = (size_t)(colon - text);
	if (h[0] == '[') {
		if (hl < 3 || h[hl - 1] != ']')
			return -EINVAL;
		h++;
		hl -= 2;
	}
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (*end || errno || p < 0 || p > 65535 || hl >= sizeof(out->host))
		return -EINVAL;
	memcpy(out->host, h, hl);
	out->host[hl] = '\0';
	snprintf(out->port, sizeof(out->port), "%ld", p);
	return 0;
}

/* ---- the runtime keys, shared by the file and the flags ---- */

static int set_frontend_list(struct sym_cluster *c, const cJSON *arr, const char *where, char *err, size_t errlen)
{
	int n = cJSON_GetArraySize(arr);
	if (n < 1 || n > 1024)
		return ERR("%s: expected 1 to 1024 frontends, got %d", where, n);
	struct sym_cluster_fe *fe = calloc((size_t)n, sizeof(*fe));
	if (!fe)
		return ERR("%s: out of memory", where);
	for (int i = 0; i < n; i++) {
		const cJSON *o = cJSON_GetArrayItem(arr, i);
		const cJSON *fa = cJSON_GetObjectItemCaseSensitive(o, "fabric");
		const cJSON *cl = cJSON_GetObjectItemCaseSensitive(o, "clients");
		const cJSON *ht = cJSON_GetObjectItemCaseSensitive(o, "http");
		const cJSON *gr = cJSON_GetObjectItemCaseSensitive(o, "grpc");
		if (!cJSON_IsObject(o) || !cJSON_IsString(fa) || !cJSON_IsString(cl) ||
		    cJSON_GetArraySize(o) != 2 + (ht != NULL) + (gr != NULL) ||
		    sym_hostport_parse(fa->valuestring, &fe[i].fabric) || sym_hostport_parse(cl->valuestring, &fe[i].clients) ||
		    (ht && (!cJSON_IsString(ht) || sym_hostport_parse(ht->valuestring, &fe[i].http))) ||
		    (gr && (!cJSON_IsString(gr) || sym_hostport_parse(gr->valuestring, &fe[i].grpc)))) {
			free(fe);
			return ERR("%s: frontend %d: expected {\"fabric\": \"HOST:PORT\", \"clients\": \"HOST:PORT\"} "
				   "and optionally \"http\" and \"grpc\": \"HOST:PORT\"", where, i);
		}
	}
	free(c->frontends);
	c->frontends = fe;
	c->nfrontends = n;
	c->frontends_listed = true;
	return 0;
}

/* The runtime's keys: the flag, its help, and how its value is read. Most
 * are a number in a range or a path; those of RK_CODE are read in set_key. */
enum rk_type {
	RK_INT,   /* an integer in [lo, hi], into an int */
	RK_SIZE,  /* an integer in [lo, hi], into a size_t */
	RK_NUM,   /* a number in [lo, hi], into a double */
	RK_BYTES, /* a number of bytes in [lo, hi], into a size_t */
	RK_PATH,  /* a non-empty string shorter than its field */
	RK_CODE,  /* read by set_key's code */
};

static const struct rt_key {
	const char *key, *flag, *arg, *help;
	enum rk_type type;
	size_t off, len; /* the field in struct sym_cluster; RK_PATH: its size */
	double lo, hi;
	const char *want; /* what the message says was expected */
} rt_keys[] = {
	{ "provider", "provider", "NAME", "libfabric provider: tcp (default; loopback, CI) or verbs (RDMA hardware)", RK_PATH, offsetof(struct sym_cluster, provider), sizeof(((struct sym_cluster *)0)->provider), 0, 0, "a libfabric provider name such as tcp or verbs" },
	{ "host", "host", "HOST", "address processes bind to and reach each other at (default 127.0.0.1)", RK_PATH, offsetof(struct sym_cluster, host), sizeof(((struct sym_cluster *)0)->host), 0, 0, "a host name or address" },
	{ "listen_host", "listen-host", "HOST", "where this process's listeners bind, in place of its listed address's host (e.g. 0.0.0.0 in a pod listed by its DNS name; default: that host)", RK_PATH, offsetof(struct sym_cluster, listen_host), sizeof(((struct sym_cluster *)0)->listen_host), 0, 0, "a host name or address" },
	{ "http_port", "http-port", "PORT", "every process's HTTP port (API, /metrics), in place of http_base's layout: for processes on hosts of their own, as pods (default 0: the layout)", RK_INT, offsetof(struct sym_cluster, http_port), 0, 0, 65535, "a port 1..65535, or 0 for http_base's layout" },
	{ "grpc_base", "grpc-base", "PORT", "the gRPC API (KServe v2 over gRPC): schedd at PORT (the repository extension; its standby at PORT+511), frontend i at PORT+1+i (default 0: none; a listed frontend's \"grpc\" address wins)", RK_INT, offsetof(struct sym_cluster, grpc_base), 0, 0, 65535 - 1024, "a port 1..64511, or 0 for no gRPC" },
	{ "keys_dir", "keys-dir", "DIR", "the cluster's keys (symphony keygen cluster DIR): DIR/ca.pub, DIR/revoked.json, and each member's DIR/ROLE-ID.cred; required by schedd, frontends and backends", RK_PATH, offsetof(struct sym_cluster, keys_dir), sizeof(((struct sym_cluster *)0)->keys_dir), 0, 0, "a path" },
	{ "credential", "credential", "FILE", "this process's credential, when not DIR/ROLE-ID.cred of keys_dir (schedd-0, schedd-1 for a standby, frontend-N, backend-N)", RK_PATH, offsetof(struct sym_cluster, credential), sizeof(((struct sym_cluster *)0)->credential), 0, 0, "a path" },
	{ "port_base", "port-base", "PORT", "schedd's port; frontend i uses PORT+1+2i (fabric) and PORT+2+2i (clients)", RK_INT, offsetof(struct sym_cluster, port_base), 0, 1, 65535 - 2 * 1024 - 2, "a port from 1 to 63485" },
	{ "schedd", "schedd", "HOST:PORT[,HOST:PORT]", "the scheduler's address (default HOST:PORT_BASE), then its hot standby's (symphony schedd --standby)", RK_CODE, 0, 0, 0, 0, NULL },
	{ "frontends", "frontends", "N", "number of frontends (default 1)", RK_CODE, 0, 0, 0, 0, NULL },
	{ "backends", "backends", "N", "number of backends, one GPU each (default 2)", RK_INT, offsetof(struct sym_cluster, nbackends), 0, 1, 65535, "a count from 1 to 65535" },
	{ "threads", "threads", "N", "schedd's scheduler threads (default 1; >= 2: candidate policies)", RK_INT, offsetof(struct sym_cluster, threads), 0, 1, 256, "1 to 256 scheduler threads" },
	{ "heartbeat_ms", "heartbeat-ms", "MS", "heartbeat period of frontends and backends (default 10)", RK_NUM, offsetof(struct sym_cluster, heartbeat_ms), 0, 0.1, 60000, "a heartbeat period from 0.1 to 60000 ms" },
	{ "backends_max", "backends-max", "N", "backends that may join a running cluster, ids 0..N-1 (default: backends)", RK_INT, offsetof(struct sym_cluster, backends_max), 0, 0, 65535, "0 (as many as backends) to 65535" },
	{ "suspect_ms", "suspect-ms", "MS", "a backend silent this long gets no new plans until it is heard again (default 50, or 3 heartbeats if longer; at most failure_ms)", RK_NUM, offsetof(struct sym_cluster, suspect_ms), 0, 0, 600000, "0 (the default) to 600000 ms" },
	{ "failure_ms", "failure-ms", "MS", "a peer silent this long is removed, its batches failed (default 1000)", RK_NUM, offsetof(struct sym_cluster, failure_ms), 0, 1, 600000, "a failure timeout from 1 to 600000 ms" },
	{ "input_max", "input-max", "BYTES", "largest input a frontend accepts (default 262144)", RK_SIZE, offsetof(struct sym_cluster, input_max), 0, 8, 1 << 20, "8 to 1048576 bytes" },
	{ "pool_slots", "pool-slots", "N", "inputs a frontend holds at once (default 1024)", RK_INT, offsetof(struct sym_cluster, pool_slots), 0, 1, 1 << 20, "1 to 1048576 slots" },
	{ "input_encryption", "input-encryption", "true|false", "a frontend encrypts each input it holds for backends to read (default true); false: authenticated only, for speed (runtime/inputseal.h)", RK_CODE, 0, 0, 0, 0, NULL },
	{ "input_bytes", "input-bytes", "BYTES", "input size of a model without a signature: UINT8 [BYTES] (default 1024)", RK_SIZE, offsetof(struct sym_cluster, input_bytes), 0, 1, 1 << 20, "1 to 1048576 bytes" },
	{ "executor", "executor", "NAME", "backend executor: emulated (the default), cuda or torch (TorchScript files, runtime/torch/)", RK_CODE, 0, 0, 0, 0, NULL },
	{ "model_lib", "model-lib", "PATH", "cuda: plugin library (load/run/unload) for models with no built-in", RK_PATH, offsetof(struct sym_cluster, model_lib), sizeof(((struct sym_cluster *)0)->model_lib), 0, 0, "the path of a shared library" },
	{ "device", "device", "N", "cuda, and torch with torch_device cuda: the GPU a backend runs on (default 0)", RK_INT, offsetof(struct sym_cluster, device), 0, 0, 1023, "a device ordinal 0..1023" },
	{ "torch_threads", "torch-threads", "N", "torch: intra-op threads each batch runs on (default 1; more spin while idle unless OMP_WAIT_POLICY=PASSIVE)", RK_INT, offsetof(struct sym_cluster, torch_threads), 0, 1, 256, "1 to 256 intra-op threads" },
	{ "torch_device", "torch-device", "cpu|cuda", "torch: where models run (default cpu; cuda: GPU --device, needs a libtorch with CUDA)", RK_CODE, 0, 0, 0, 0, NULL },
	{ "http_base", "http-base", "PORT", "HTTP API and /metrics: schedd at PORT, frontend i at PORT+1+i, backend i at PORT+512+i (default port_base+1000; 0: off)", RK_INT, offsetof(struct sym_cluster, http_base), 0, 0, 65535 - 1024, "a port 1..64511, or 0 for no HTTP" },
	{ "http_body_max", "http-body-max", "BYTES", "largest HTTP request body; larger ones get 413 (default 8388608)", RK_SIZE, offsetof(struct sym_cluster, http_body_max), 0, 1024, 1 << 30, "bytes in 1024..1073741824" },
	{ "deadline_max_ms", "deadline-max-ms", "MS", "largest per-request deadline a client may ask for (default 10000)", RK_NUM, offsetof(struct sym_cluster, deadline_max_ms), 0, 1e-3, 3600e3, "milliseconds in (0, 3600000]" },
	{ "late_status", "late-status", "200|504", "HTTP status of an inference answered after its deadline (default 200)", RK_CODE, 0, 0, 0, 0, NULL },
	{ "metrics_base", "metrics-base", "PORT", "/metrics on listeners of their own: schedd at PORT, frontend i at PORT+1+i, the standby at PORT+511, backend i at PORT+512+i (default 0: on the HTTP ports)", RK_INT, offsetof(struct sym_cluster, metrics_base), 0, 0, 65535 - 1024, "a port 1..64511, or 0 for /metrics on the HTTP ports" },
	{ "http_conn_max", "http-conn-max", "N", "HTTP connections a process holds at once; past N the one waiting longest for its request is closed (default 1024)", RK_INT, offsetof(struct sym_cluster, http_conn_max), 0, 1, 100000, "1 to 100000 connections" },
	{ "http_timeout_s", "http-timeout-s", "S", "an HTTP connection's next request (TLS handshake, headers, body) must be in S after it began waiting for it, plus its body at client_min_rate; else it is closed (default 10)", RK_NUM, offsetof(struct sym_cluster, http_timeout_s), 0, 1, 3600, "1 to 3600 seconds" },
	{ "http_per_ip_max", "http-per-ip-max", "N", "HTTP connections from one address at once (default 64; 0: only http_conn_max)", RK_INT, offsetof(struct sym_cluster, http_per_ip_max), 0, 0, 100000, "0 (no limit of its own) to 100000 connections" },
	{ "http_body_budget", "http-body-budget", "BYTES", "HTTP request bodies a process holds at once, in all; a request beyond gets 503 before its body is read (default 67108864)", RK_BYTES, offsetof(struct sym_cluster, http_body_budget), 0, 1024, 1e12, "bytes in 1024..1e12 (at least http_body_max)" },
	{ "client_min_rate", "client-min-rate", "BYTES/S", "the rate a client must keep up sending a request (HTTP body, native message) beyond its timeout (default 32768)", RK_NUM, offsetof(struct sym_cluster, client_min_rate), 0, 1, 1e10, "bytes per second in 1..1e10" },
	{ "http_tls_cert", "http-tls-cert", "FILE", "PEM certificate (chain): serve HTTPS instead of HTTP (with http_tls_key)", RK_PATH, offsetof(struct sym_cluster, http_tls_cert), sizeof(((struct sym_cluster *)0)->http_tls_cert), 0, 0, "a file's path" },
	{ "http_tls_key", "http-tls-key", "FILE", "PEM private key of http_tls_cert (mode 0600)", RK_PATH, offsetof(struct sym_cluster, http_tls_key), sizeof(((struct sym_cluster *)0)->http_tls_key), 0, 0, "a file's path" },
	{ "repository_slots", "repository-slots", "N", "spare model slots: models added to the model repository after schedd started that the repository API can load (default 4 with a model repository)", RK_INT, offsetof(struct sym_cluster, repository_slots), 0, 0, 256, "0 to 256 slots" },
	{ "repository_token_file", "repository-token-file", "FILE", "bearer tokens, one a line (mode 0600), for schedd's model repository API: loading or unloading a model needs 'Authorization: Bearer TOKEN' (without this file, load and unload are refused)", RK_PATH, offsetof(struct sym_cluster, repository_token_file), sizeof(((struct sym_cluster *)0)->repository_token_file), 0, 0, "a file's path" },
	{ "http_token_file", "http-token-file", "FILE", "bearer tokens, one a line (mode 0600): inference needs 'Authorization: Bearer TOKEN', a native client's HELLO one of them; SIGHUP rereads it", RK_PATH, offsetof(struct sym_cluster, http_token_file), sizeof(((struct sym_cluster *)0)->http_token_file), 0, 0, "a file's path" },
	{ "clients_max", "clients-max", "N", "native-protocol clients a frontend holds at once; past N the one idle longest is closed, or the new one when none is idle (default 256)", RK_INT, offsetof(struct sym_cluster, clients_max), 0, 1, 100000, "1 to 100000 clients" },
	{ "clients_per_ip_max", "clients-per-ip-max", "N", "native clients from one address at once (default 64; 0: only clients_max)", RK_INT, offsetof(struct sym_cluster, clients_per_ip_max), 0, 0, 100000, "0 (no limit of its own) to 100000 clients" },
	{ "clients_budget", "clients-budget", "BYTES", "native clients' messages in flight and answers not yet read that a frontend holds at once, in all, beyond 32 KiB each way per client; a client past it is answered 'overloaded' and closed (default 67108864)", RK_BYTES, offsetof(struct sym_cluster, clients_budget), 0, 1 << 22, 1e12, "bytes in 4194304..1e12" },
	{ "clients_timeout_s", "clients-timeout-s", "S", "a native client's next message (its HELLO first) must be in S after it began waiting for it, plus the message at client_min_rate, unless it awaits answers (default 10)", RK_NUM, offsetof(struct sym_cluster, clients_timeout_s), 0, 1, 3600, "1 to 3600 seconds" },
	{ "poll_us", "poll-us", "US", "schedd's threads poll this long after work, twice that before a timer (default 0: sleep)", RK_NUM, offsetof(struct sym_cluster, poll_us), 0, 0, 10000, "0 to 10000 microseconds" },
};
#define NRT (sizeof(rt_keys) / sizeof(rt_keys[0]))

/* One runtime key with its value as text (flags) or JSON (file: val). */
static int set_key(struct sym_cluster *c, const char *key, const char *text, const cJSON *val, const char *where,
		   char *err, size_t errlen)
{
	char buf[64];
	if (val) {
		if (cJSON_IsString(val))
			text = val->valuestring;
		else if (cJSON_IsNumber(val)) {
			snprintf(buf, sizeof(buf), "%.17g", val->valuedouble);
			text = buf;
		} else if (cJSON_IsBool(val)) {
			text = cJSON_IsTrue(val) ? "true" : "false";
		} else if (!(cJSON_IsArray(val) && (!strcmp(key, "frontends") || !strcmp(key, "schedd"))))
			return ERR("%s: expected a number, a string or true/false", where);
	}
	double d;
	int l;
	const struct rt_key *k = NULL;
	for (size_t i = 0; i < NRT && !k; i++)
		if (!strcmp(rt_keys[i].key, key))
			k = &rt_keys[i];
	char *field = k ? (char *)c + k->off : NULL;
	switch (k ? k->type : RK_CODE) {
	case RK_INT:
	case RK_SIZE:
		if (sym_policy_int(text, (int)k->lo, (int)k->hi, &l))
			return ERR("%s: expected %s, got '%s'", where, k->want, text);
		if (k->type == RK_INT) {
			memcpy(field, &l, sizeof(l));
		} else {
			size_t z = (size_t)l;
			memcpy(field, &z, sizeof(z));
		}
		return 0;
	case RK_NUM:
		if (sym_policy_num(text, k->lo, k->hi, &d))
			return ERR("%s: expected %s, got '%s'", where, k->want, text);
		memcpy(field, &d, sizeof(d));
		return 0;
	case RK_BYTES:
		if (sym_policy_num(text, k->lo, k->hi, &d) || d != floor(d))
			return ERR("%s: expected %s, got '%s'", where, k->want, text);
		size_t z = (size_t)d;
		memcpy(field, &z, sizeof(z));
		return 0;
	case RK_PATH:
		if (!text[0] || strlen(text) >= k->len)
			return ERR("%s: expected %s", where, k->want);
		memcpy(field, text, strlen(text) + 1); /* length checked above */
		return 0;
	case RK_CODE:
		break;
	}
	if (!strcmp(key, "secret_file")) {
		return ERR("%s: the shared cluster secret is gone: every member has a credential of its own now. "
			   "Make them with `symphony keygen cluster DIR --frontends N --backends M` and give "
			   "runtime.keys_dir (--keys-dir DIR) instead", where);
	} else if (!strcmp(key, "late_status")) {
		if (sym_policy_int(text, 200, 504, &l) || (l != 200 && l != 504))
			return ERR("%s: expected 200 or 504, got '%s'", where, text);
		c->late_status = l;
	} else if (!strcmp(key, "schedd")) {
		/* "HOST:PORT", or the active and its hot standby: ["HOST:PORT", "HOST:PORT"] or "H:P,H:P" */
		char a[600] = "", b[600] = "";
		if (val && cJSON_IsArray(val)) {
			int n = cJSON_GetArraySize(val);
			const cJSON *x = cJSON_GetArrayItem(val, 0), *y = cJSON_GetArrayItem(val, 1);
			if (n < 1 || n > 2 || !cJSON_IsString(x) || (y && !cJSON_IsString(y)))
				return ERR("%s: expected \"HOST:PORT\" or [\"HOST:PORT\", \"HOST:PORT\"] (the active "
					   "scheduler, then its standby)", where);
			snprintf(a, sizeof(a), "%s", x->valuestring);
			if (y)
				snprintf(b, sizeof(b), "%s", y->valuestring);
		} else {
			const char *comma = strchr(text, ',');
			snprintf(a, sizeof(a), "%.*s", comma ? (int)(comma - text) : (int)strlen(text), text);
			if (comma)
				snprintf(b, sizeof(b), "%s", comma + 1);
		}
		if (sym_hostport_parse(a, &c->schedd) || (b[0] && sym_hostport_parse(b, &c->standby)))
			return ERR("%s: expected HOST:PORT, or two of them (the active scheduler, then its standby), "
				   "got '%s'", where, b[0] && !sym_hostport_parse(a, &c->schedd) ? b : a);
		c->schedd_set = true;
		c->has_standby = b[0] != '\0';
	} else if (!strcmp(key, "frontends")) {
		if (val && cJSON_IsArray(val))
			return set_frontend_list(c, val, where, err, errlen);
		if (sym_policy_int(text, 1, 1024, &l))
			return ERR("%s: expected a count from 1 to 1024 or a list of addresses, got '%s'", where, text);
		c->nfrontends = l;
		c->frontends_listed = false;
	} else if (!strcmp(key, "input_encryption")) {
		if (!strcmp(text, "true") || !strcmp(text, "on"))
			c->input_encryption = true;
		else if (!strcmp(text, "false") || !strcmp(text, "off"))
			c->input_encryption = false;
		else
			return ERR("%s: expected true or false, got '%s'", where, text);
	} else if (!strcmp(key, "executor")) {
		if (strcmp(text, "emulated") && strcmp(text, "cuda") && strcmp(text, "torch"))
			return ERR("%s: expected emulated, cuda or torch, got '%s'", where, text);
		memcpy(c->executor, text, strlen(text) + 1); /* one of the three names above */
	} else if (!strcmp(key, "torch_device")) {
		if (strcmp(text, "cpu") && strcmp(text, "cuda"))
			return ERR("%s: expected cpu or cuda, got '%s'", where, text);
		memcpy(c->torch_device, text, strlen(text) + 1); /* one of the two names above */
	} else {
		return 1;
	}
	return 0;
}


int sym_cluster_apply_flag(struct sym_cluster *c, const char *flag, const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < NRT; i++) {
		if (strcmp(rt_keys[i].flag, flag))
			continue;
		char where[96];
		snprintf(where, sizeof(where), "option --%s", flag);
		if (!value)
			return ERR("%s needs a value", where);
		return set_key(c, rt_keys[i].key, value, NULL, where, err, errlen);
	}
	int rc = sym_experiment_apply_flag(&c->exp, flag, value, err, errlen);
	if (rc == 0 && (!strcmp(flag, "ctrl-ms") || !strcmp(flag, "data-ms") || !strcmp(flag, "resp-ms")))
		c->net_set = true;
	return rc;
}

int sym_cluster_load_file(struct sym_cluster *c, const char *path, char *err, size_t errlen)
{
	int rc;
	cJSON *root = sym_experiment_read_json(path, &rc, err, errlen);
	if (!root)
		return rc;
	rc = sym_cluster_load_json(c, root, strcmp(path, "-") ? path : "standard input", err, errlen);
	cJSON_Delete(root);
	return rc;
}

int sym_cluster_load_json(struct sym_cluster *c, const cJSON *root, const char *path, char *err, size_t errlen)
{
	int rc = sym_experiment_load_json(&c->exp, root, path, err, errlen);
	if (rc)
		return rc;
	const cJSON *cfg = sym_experiment_config_of(root);
	if (cJSON_GetObjectItemCaseSensitive(cfg, "network"))
		c->net_set = true;
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(cfg, "runtime");
	if (!rt && cfg != root)
		rt = cJSON_GetObjectItemCaseSensitive(root, "runtime");
	rc = 0;
	if (rt && !cJSON_IsObject(rt))
		rc = ERR("%s: key 'runtime': expected an object", path);
	for (const cJSON *it = rt ? rt->child : NULL; !rc && it; it = it->next) {
		char where[600];
		snprintf(where, sizeof(where), "%s: key 'runtime.%s'", path, it->string);
		if (!strcmp(it->string, "models")) {
			if (!cJSON_IsObject(it)) {
				rc = ERR("%s: expected an object of model names", where);
				break;
			}
			cJSON_Delete(c->models_rt);
			c->models_rt = cJSON_Duplicate(it, 1);
			if (!c->models_rt)
				rc = ERR("out of memory");
			continue;
		}
		rc = set_key(c, it->string, NULL, it, where, err, errlen);
		if (rc == 1) {
			char known[1200] = "";
			for (size_t i = 0; i < NRT; i++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s, ", rt_keys[i].key);
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "models");
			rc = ERR("%s: unknown key (expected %s)", where, known);
		}
	}
	return rc;
}

void sym_cluster_net_defaults(const char *provider, double *ctrl_ms, double *data_ms, double *resp_ms,
			      double *done_ms)
{
	/* done_ms is not used by the runtime: it tells the simulator how long a
	 * GPU here stays unavailable after its batch's planned finish (schedd's
	 * completion_lag_p50_us: a backend's wake-up and its message's trip;
	 * measured 0.2 ms on tcp loopback). */
	*done_ms = strcmp(provider, "tcp") ? 0.02 : 0.2;
	/* p99 of `symphony fabbench` on loopback (tcp) and of RDMA NICs (verbs;
	 * a few microseconds), rounded up: see runtime/README.md. The control
	 * delay covers the plan's message, the data delay one input read, the
	 * response delay the result's message and the frontend's answer. */
	if (!strcmp(provider, "tcp")) {
		*ctrl_ms = 0.3;
		*data_ms = 0.05;
		*resp_ms = 1.0;
	} else {
		*ctrl_ms = 0.02;
		*data_ms = 0.02;
		*resp_ms = 0.05;
	}
}

/* Model m's signature, version and executor spec from its runtime.models
 * entry `mo` (or NULL: the emulated executor's default), checked against
 * the sizes a message and a frontend's pool take. */
static int resolve_model(struct sym_cluster *c, size_t m, const cJSON *mo, char *err, size_t errlen)
{
	const struct sym_experiment *e = &c->exp;
	struct sym_model_desc *d = &c->models[m];
	sym_model_desc_default(d, e->profiles[m].name, &e->profiles[m], c->input_bytes);
	char where[160];
	int rc;
	const cJSON *v;
	if ((v = cJSON_GetObjectItemCaseSensitive(mo, "version"))) {
		if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
		    v->valuedouble > 1e9)
			return ERR("runtime.models.%s.version: expected a positive integer", d->name);
		d->version = (int)v->valuedouble;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(mo, "executor"))) {
		if (!cJSON_IsObject(v))
			return ERR("runtime.models.%s.executor: expected an object", d->name);
		d->spec = v;
		/* a built-in's signature is the default; input/output below must then match it */
		char msg[256];
		if (cJSON_GetObjectItemCaseSensitive(v, "builtin") &&
		    sym_cuda_builtin_signature(v, &d->input, &d->output, msg, sizeof(msg)))
			return ERR("runtime.models.%s.executor: %s", d->name, msg);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(mo, "input"))) {
		snprintf(where, sizeof(where), "runtime.models.%s.input", d->name);
		if ((rc = sym_tensor_sig_from_json(v, where, "INPUT0", SYM_WIRE_MAX_PAYLOAD, &d->input, err, errlen)))
			return rc;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(mo, "output"))) {
		snprintf(where, sizeof(where), "runtime.models.%s.output", d->name);
		if ((rc = sym_tensor_sig_from_json(v, where, "OUTPUT0", SYM_CLUSTER_OUTPUT_MAX, &d->output, err,
						   errlen)))
			return rc;
	}
	if (sym_tensor_bytes(&d->output) > SYM_CLUSTER_OUTPUT_MAX)
		return ERR("runtime: model '%s' gives %zu-byte outputs, more than the %d a message carries", d->name,
			   sym_tensor_bytes(&d->output), SYM_CLUSTER_OUTPUT_MAX);
	if (sym_tensor_bytes(&d->input) > c->input_max)
		return ERR("runtime: model '%s' takes %zu-byte inputs, more than input_max (%zu): raise it "
			   "(runtime.input_max, --input-max BYTES; a frontend holds pool_slots inputs of that size)",
			   d->name, sym_tensor_bytes(&d->input), c->input_max);
	return 0;
}

/* Signatures and executor specs of the models, from "runtime.models". */
static int resolve_models(struct sym_cluster *c, char *err, size_t errlen)
{
	const struct sym_experiment *e = &c->exp;
	free_models(c);
	c->models = calloc(e->nmodels, sizeof(*c->models));
	if (!c->models)
		return ERR("out of memory");
	for (const cJSON *it = c->models_rt ? c->models_rt->child : NULL; it; it = it->next) {
		size_t m = 0;
		while (m < e->slot0 && strcmp(e->profiles[m].name, it->string))
			m++;
		if (m == e->slot0)
			return ERR("runtime.models: '%s' is not a model of this experiment", it->string);
		if (!cJSON_IsObject(it))
			return ERR("runtime.models.%s: expected an object with input, output, executor", it->string);
		for (const cJSON *k = it->child; k; k = k->next)
			if (strcmp(k->string, "input") && strcmp(k->string, "output") && strcmp(k->string, "executor") &&
			    strcmp(k->string, "version"))
				return ERR("runtime.models.%s: unknown key '%s' (expected input, output, executor, version)",
					   it->string, k->string);
	}
	c->input_bytes_max = c->output_bytes_max = 0;
	for (size_t m = 0; m < e->nmodels; m++) {
		const cJSON *mo = c->models_rt && m < e->slot0 ? cJSON_GetObjectItemCaseSensitive(c->models_rt,
												   e->profiles[m].name)
							       : NULL;
		int rc = resolve_model(c, m, mo, err, errlen);
		if (rc)
			return rc;
		const struct sym_model_desc *d = &c->models[m];
		if (sym_tensor_bytes(&d->input) > c->input_bytes_max)
			c->input_bytes_max = sym_tensor_bytes(&d->input);
		if (sym_tensor_bytes(&d->output) > c->output_bytes_max)
			c->output_bytes_max = sym_tensor_bytes(&d->output);
	}
	if (e->model_slots) /* a model filling a slot may give any output a message carries */
		c->output_bytes_max = SYM_CLUSTER_OUTPUT_MAX;
	return 0;
}

int sym_cluster_fill_slot(struct sym_cluster *c, size_t m, const char *name, bool *capped, char *err, size_t errlen)
{
	struct sym_experiment *e = &c->exp;
	*capped = false;
	if (!sym_experiment_slot_empty(e, m))
		return ERR("model slot %zu is not an empty spare slot", m);
	cJSON *model = NULL, *rt = NULL;
	int version;
	bool profiled;
	int rc = sym_repo_read_model(e->model_repository, name, false, &model, &rt, &version, &profiled, err, errlen);
	if (!rc && (cJSON_GetObjectItemCaseSensitive(c->models_rt, name) ||
		    (rc = sym_experiment_fill_slot(e, m, model, capped, err, errlen))))
		rc = rc ? rc : ERR("model '%s' is served already", name);
	cJSON_Delete(model);
	if (rc) {
		cJSON_Delete(rt);
		return rc;
	}
	if (!c->models_rt && !(c->models_rt = cJSON_CreateObject()))
		rc = ERR("out of memory");
	if (!rc) {
		cJSON_AddItemToObject(c->models_rt, name, rt); /* the spec points into it: kept while the slot is */
		rt = NULL;
		rc = resolve_model(c, m, cJSON_GetObjectItemCaseSensitive(c->models_rt, name), err, errlen);
	}
	if (rc) {
		cJSON_Delete(rt);
		sym_cluster_clear_slot(c, m);
	}
	return rc;
}

int sym_cluster_set_slot(struct sym_cluster *c, size_t m, const char *name, size_t nl, bool *capped, char *err,
			 size_t errlen)
{
	struct sym_experiment *e = &c->exp;
	*capped = false;
	if (m < e->slot0 || m >= e->nmodels)
		return ERR("model %zu is not a spare slot (slots %zu..%zu)", m, e->slot0, e->nmodels - 1);
	char nm[64];
	if (nl >= sizeof(nm))
		return ERR("a model name of %zu bytes", nl);
	memcpy(nm, name, nl);
	nm[nl] = '\0';
	if (!strcmp(e->models[m].name, nm))
		return 0;
	sym_cluster_clear_slot(c, m);
	int rc = sym_cluster_fill_slot(c, m, nm, capped, err, errlen);
	return rc ? rc : 1;
}

void sym_cluster_clear_slot(struct sym_cluster *c, size_t m)
{
	struct sym_experiment *e = &c->exp;
	if (m < e->slot0 || m >= e->nmodels)
		return;
	if (e->models[m].name[0])
		cJSON_DeleteItemFromObjectCaseSensitive(c->models_rt, e->models[m].name);
	sym_experiment_clear_slot(e, m);
	sym_model_desc_default(&c->models[m], e->profiles[m].name, &e->profiles[m], c->input_bytes);
}

/* The signatures, versions and files of the models of the experiment's
 * model repository join runtime.models (the experiment took their profiles:
 * experiment/repository.h). */
static int repository_models(struct sym_cluster *c, char *err, size_t errlen)
{
	cJSON *rt = c->models_rt ? c->models_rt : cJSON_CreateObject(), *repo = cJSON_CreateObject();
	if (!rt || !repo) {
		if (rt != c->models_rt)
			cJSON_Delete(rt);
		cJSON_Delete(repo);
		return ERR("out of memory");
	}
	c->models_rt = rt;
	int rc = sym_repo_read(c->exp.model_repository, c->exp.repo_unprofiled_ok, NULL, repo, err, errlen);
	rc = rc < 0 ? rc : 0;
	while (!rc && repo->child) {
		cJSON *it = cJSON_DetachItemViaPointer(repo, repo->child);
		if (cJSON_GetObjectItemCaseSensitive(rt, it->string)) {
			rc = ERR("model repository %s: model '%s' is also in runtime.models of the cluster file; give it in "
				 "one place", c->exp.model_repository, it->string);
			cJSON_Delete(it);
		} else {
			cJSON_AddItemToObject(rt, it->string, it);
		}
	}
	cJSON_Delete(repo);
	return rc;
}

int sym_cluster_resolve(struct sym_cluster *c, char *err, size_t errlen)
{
	if (!c->schedd_set) {
		snprintf(c->schedd.host, sizeof(c->schedd.host), "%s", c->host);
		snprintf(c->schedd.port, sizeof(c->schedd.port), "%d", c->port_base);
	}
	if (!c->frontends_listed) {
		free(c->frontends);
		c->frontends = calloc((size_t)c->nfrontends, sizeof(*c->frontends));
		if (!c->frontends)
			return ERR("out of memory");
		for (int i = 0; i < c->nfrontends; i++) {
			struct sym_cluster_fe *fe = &c->frontends[i];
			snprintf(fe->fabric.host, sizeof(fe->fabric.host), "%s", c->host);
			snprintf(fe->clients.host, sizeof(fe->clients.host), "%s", c->host);
			snprintf(fe->fabric.port, sizeof(fe->fabric.port), "%d", c->port_base + 1 + 2 * i);
			snprintf(fe->clients.port, sizeof(fe->clients.port), "%d", c->port_base + 2 + 2 * i);
		}
	}
	if (c->http_base < 0)
		c->http_base = c->port_base + 1000 <= 65535 - 1024 ? c->port_base + 1000 : 0;
	if (c->grpc_base && c->nfrontends > 510 && !c->frontends_listed)
		return ERR("runtime: gRPC ports are laid out for at most 510 frontends; list their \"grpc\" addresses");
	if (c->http_base && c->nfrontends > 510)
		return ERR("runtime: HTTP ports are laid out for at most 510 frontends; set http_base 0 or list them");
	if (!c->backends_max)
		c->backends_max = c->nbackends;
	if (c->backends_max < c->nbackends)
		return ERR("runtime: backends_max (%d) is below backends (%d)", c->backends_max, c->nbackends);
	if (c->metrics_base && c->metrics_base + 512 + c->backends_max > 65535)
		return ERR("runtime: metrics_base %d leaves no room for %d backends' ports", c->metrics_base,
			   c->backends_max);
	if (c->metrics_base && c->nfrontends > 510)
		return ERR("runtime: metrics ports are laid out for at most 510 frontends");
	if (c->http_base && c->http_base + 512 + c->backends_max > 65535)
		return ERR("runtime: http_base %d leaves no room for %d backends' ports", c->http_base, c->backends_max);
	int fab_hi = c->port_base + 2 + 2 * c->nfrontends;
	if (c->http_base && !c->http_port && !c->frontends_listed && !c->schedd_set &&
	    ((c->http_base <= fab_hi && c->http_base + c->nfrontends >= c->port_base) ||
	     (c->http_base + 512 <= fab_hi && c->http_base + 512 + c->backends_max >= c->port_base)))
		return ERR("runtime: HTTP ports from http_base %d overlap the fabric and client ports %d..%d",
			   c->http_base, c->port_base, fab_hi);
	for (int i = 0; i < c->nfrontends && c->grpc_base; i++) {
		struct sym_cluster_fe *fe = &c->frontends[i];
		if (fe->grpc.port[0])
			continue;
		snprintf(fe->grpc.host, sizeof(fe->grpc.host), "%s", fe->clients.host);
		snprintf(fe->grpc.port, sizeof(fe->grpc.port), "%d", c->grpc_base + 1 + i);
	}
	for (int i = 0; i < c->nfrontends; i++) {
		struct sym_cluster_fe *fe = &c->frontends[i];
		if (fe->http.port[0] || (!c->http_base && !c->http_port))
			continue;
		snprintf(fe->http.host, sizeof(fe->http.host), "%s", fe->clients.host);
		snprintf(fe->http.port, sizeof(fe->http.port), "%d", c->http_port ? c->http_port : c->http_base + 1 + i);
	}
	if (c->failure_ms < 2 * c->heartbeat_ms)
		return ERR("runtime: failure_ms (%g) must be at least twice heartbeat_ms (%g)", c->failure_ms,
			   c->heartbeat_ms);
	if (!c->suspect_ms) { /* 50 ms, or 3 heartbeats when they are slower, never past failure_ms */
		c->suspect_ms = 3 * c->heartbeat_ms > 50 ? 3 * c->heartbeat_ms : 50;
		c->suspect_ms = c->suspect_ms < c->failure_ms ? c->suspect_ms : c->failure_ms;
	}
	if (c->suspect_ms < 2 * c->heartbeat_ms)
		return ERR("runtime: suspect_ms (%g) must be at least twice heartbeat_ms (%g)", c->suspect_ms,
			   c->heartbeat_ms);
	if (c->suspect_ms > c->failure_ms)
		return ERR("runtime: suspect_ms (%g) is above failure_ms (%g): a peer is suspect before it is removed",
			   c->suspect_ms, c->failure_ms);
	if (c->input_bytes > c->input_max)
		return ERR("runtime: input_bytes (%zu) is larger than input_max (%zu)", c->input_bytes, c->input_max);
	if (c->exp.ngroups) {
		if (c->exp.gpus != c->backends_max)
			return ERR("runtime: the cluster has %d GPUs but backends_max is %d (one GPU each)", c->exp.gpus,
				   c->backends_max);
	} else {
		c->exp.gpus = c->backends_max;
		c->exp.gpus_per_model = 0;
	}
	if (!c->net_set)
		sym_cluster_net_defaults(c->provider, &c->exp.ctrl_ms, &c->exp.data_ms, &c->exp.resp_ms,
					 &c->exp.done_ms);
	if (c->http_body_budget < c->http_body_max)
		return ERR("runtime: http_body_budget (%zu) is below http_body_max (%zu): a body of the largest size "
			   "would always be refused", c->http_body_budget, c->http_body_max);
	if (!c->http_tls_cert[0] != !c->http_tls_key[0])
		return ERR("runtime.http_tls_cert and runtime.http_tls_key go together: HTTPS needs both");
	if (c->repository_slots > 0 && !c->exp.model_repository[0])
		return ERR("runtime.repository_slots: spare model slots are for a model repository's models; give one "
			   "(--model-repository DIR) or set repository_slots 0");
	c->exp.model_slots = !c->exp.model_repository[0] ? 0 : c->repository_slots < 0 ? 4 : c->repository_slots;
	int rc;
	if ((rc = sym_experiment_resolve(&c->exp, err, errlen)))
		return rc;
	if (c->exp.model_repository[0] && !c->repo_read) {
		if ((rc = repository_models(c, err, errlen)))
			return rc;
		c->repo_read = true;
	}
	if (c->exp.nmodels > 65535)
		return ERR("runtime: %zu models, at most 65535", c->exp.nmodels);
	if ((rc = resolve_models(c, err, errlen)))
		return rc;
	c->resolved = true;
	return 0;
}

const char *sym_cluster_http_port(const struct sym_cluster *c, int role, int id, char *buf, size_t len)
{
	if (role == SYM_ROLE_FRONTEND)
		return id >= 0 && id < c->nfrontends && c->frontends[id].http.port[0] ? c->frontends[id].http.port
										      : NULL;
	if (c->http_port) {
		snprintf(buf, len, "%d", c->http_port);
		return buf;
	}
	if (!c->http_base)
		return NULL;
	/* schedd: id 0 the active's, 1 the standby's */
	snprintf(buf, len, "%d", c->http_base + (role == SYM_ROLE_BACKEND ? 512 + id : id == 1 ? 511 : 0));
	return buf;
}

/* ---- reload: what may change in a running process ---- */

/* Runtime keys a running process takes on a reload (SIGHUP; schedd's POST
 * /v2/admin/reload): read where they are used, or handed on by the
 * process's reload (HTTP limits, tokens, the clients' budget). Every other
 * key, the membership lists among them, needs a restart. */
static const char *const live_keys[] = { "deadline_max_ms", "late_status", "http_body_max", "http_body_budget",
					 "client_min_rate", "clients_max", "clients_per_ip_max", "clients_budget",
					 "clients_timeout_s", "http_token_file", "repository_token_file", NULL };

static bool key_live(const char *key)
{
	for (int i = 0; live_keys[i]; i++)
		if (!strcmp(live_keys[i], key))
			return true;
	return false;
}

static void hostports_text(const struct sym_cluster *c, bool fe, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	if (!fe) {
		snprintf(buf, len, "%s:%s%s%s%s%s", c->schedd.host, c->schedd.port, c->has_standby ? "," : "",
			 c->has_standby ? c->standby.host : "", c->has_standby ? ":" : "", c->has_standby ? c->standby.port : "");
		return;
	}
	for (int i = 0; i < c->nfrontends && n + 1 < len; i++) {
		const struct sym_cluster_fe *f = &c->frontends[i];
		int w = snprintf(buf + n, len - n, "%s%s:%s/%s:%s/%s:%s/%s:%s", i ? "," : "", f->fabric.host, f->fabric.port,
				 f->clients.host, f->clients.port, f->http.host, f->http.port, f->grpc.host, f->grpc.port);
		n = w > 0 && n + (size_t)w < len ? n + (size_t)w : len - 1;
	}
}

/* Key k's value in c as text (a report's "old -> new"). */
static void key_text(const struct sym_cluster *c, const struct rt_key *k, char *buf, size_t len)
{
	const char *f = (const char *)c + k->off;
	int i;
	size_t z;
	double d;
	switch (k->type) {
	case RK_INT:
		memcpy(&i, f, sizeof(i));
		snprintf(buf, len, "%d", i);
		return;
	case RK_SIZE:
	case RK_BYTES:
		memcpy(&z, f, sizeof(z));
		snprintf(buf, len, "%zu", z);
		return;
	case RK_NUM: /* (15 digits: what a configuration says, and a change in it, print back exactly) */
		memcpy(&d, f, sizeof(d));
		snprintf(buf, len, "%.15g", d);
		return;
	case RK_PATH:
		snprintf(buf, len, "'%s'", f);
		return;
	case RK_CODE:
		break;
	}
	if (!strcmp(k->key, "late_status"))
		snprintf(buf, len, "%d", c->late_status);
	else if (!strcmp(k->key, "input_encryption"))
		snprintf(buf, len, "%s", c->input_encryption ? "true" : "false");
	else if (!strcmp(k->key, "executor"))
		snprintf(buf, len, "%s", c->executor);
	else if (!strcmp(k->key, "torch_device"))
		snprintf(buf, len, "%s", c->torch_device);
	else if (!strcmp(k->key, "schedd") || !strcmp(k->key, "frontends"))
		hostports_text(c, !strcmp(k->key, "frontends"), buf, len);
	else
		snprintf(buf, len, "?");
}

static void add_item(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_item(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	if (*n + 4 >= len)
		return;
	if (*n)
		*n += (size_t)snprintf(buf + *n, len - *n, "; ");
	va_list ap;
	va_start(ap, fmt);
	int w = *n < len ? vsnprintf(buf + *n, len - *n, fmt, ap) : 0;
	va_end(ap);
	*n = w > 0 && *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

/* The experiment's echo with its SLOs taken out (they are compared one by one). */
static cJSON *exp_without_slos(const struct sym_experiment *e)
{
	cJSON *o = sym_experiment_to_json(e);
	if (!o)
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "slo_ms");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "slo_mode");
	cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(o, "models"))
		cJSON_DeleteItemFromObjectCaseSensitive(m, "slo_ms");
	return o;
}

int sym_cluster_reload(struct sym_cluster *c, const struct sym_cluster *fresh, char *done, size_t donelen, char *err,
		       size_t errlen)
{
	size_t dn = 0, en = 0;
	done[0] = err[0] = '\0';
	char a[600], b[600];
	bool changed[NRT];
	int nchanged = 0;
	for (size_t i = 0; i < NRT; i++) {
		const struct rt_key *k = &rt_keys[i];
		key_text(c, k, a, sizeof(a));
		key_text(fresh, k, b, sizeof(b));
		changed[i] = strcmp(a, b) != 0;
		if (!changed[i])
			continue;
		if (key_live(k->key))
			add_item(done, donelen, &dn, "%s %s -> %s", k->key, a, b), nchanged++;
		else
			add_item(err, errlen, &en, "%s %s -> %s", k->key, a, b);
	}
	if (!cJSON_Compare(c->models_rt, fresh->models_rt, true) && (c->models_rt || fresh->models_rt))
		add_item(err, errlen, &en, "runtime.models (signatures, executor specs)");
	/* the experiment: each model's SLO may change; anything else needs a restart */
	cJSON *x = exp_without_slos(&c->exp), *y = exp_without_slos(&fresh->exp);
	if (!x || !y) {
		cJSON_Delete(x), cJSON_Delete(y);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, x) {
		const cJSON *other = cJSON_GetObjectItemCaseSensitive(y, it->string);
		if (!cJSON_Compare(it, other, true))
			add_item(err, errlen, &en, "the experiment's %s", it->string);
	}
	cJSON_ArrayForEach(it, y)
		if (!cJSON_GetObjectItemCaseSensitive(x, it->string))
			add_item(err, errlen, &en, "the experiment's %s", it->string);
	cJSON_Delete(x);
	cJSON_Delete(y);
	const struct sym_experiment *e = &c->exp;
	for (size_t m = 0; en == 0 && m < e->slot0 && m < fresh->exp.nmodels; m++)
		if (e->model_slo_ms[m] != fresh->exp.model_slo_ms[m])
			add_item(done, donelen, &dn, "slo_ms of %s %.15g -> %.15g", e->models[m].name, e->model_slo_ms[m],
				 fresh->exp.model_slo_ms[m]),
				nchanged++;
	if (en) {
		char what[sizeof(a)];
		snprintf(what, sizeof(what), "%s", err);
		snprintf(err, errlen, "these cannot change in a running process, restart it for them: %s", what);
		return -EINVAL;
	}
	for (size_t i = 0; i < NRT; i++) {
		if (!changed[i])
			continue;
		const struct rt_key *k = &rt_keys[i];
		if (!strcmp(k->key, "late_status"))
			c->late_status = fresh->late_status;
		else if (k->type == RK_PATH)
			memcpy((char *)c + k->off, (const char *)fresh + k->off, k->len);
		else
			memcpy((char *)c + k->off, (const char *)fresh + k->off,
			       k->type == RK_INT ? sizeof(int) : k->type == RK_NUM ? sizeof(double) : sizeof(size_t));
	}
	for (size_t m = 0; m < e->slot0; m++)
		c->exp.model_slo_ms[m] = fresh->exp.model_slo_ms[m];
	c->exp.slo_ms = fresh->exp.slo_ms;
	return nchanged;
}

const char *sym_cluster_grpc_port(const struct sym_cluster *c, int id, char *buf, size_t len)
{
	if (!c->grpc_base)
		return NULL;
	snprintf(buf, len, "%d", c->grpc_base + (id == 1 ? 511 : 0));
	return buf;
}

const char *sym_cluster_bind_host(const struct sym_cluster *c, const char *listed)
{
	return c->listen_host[0] ? c->listen_host : listed;
}

const char *sym_cluster_metrics_port(const struct sym_cluster *c, int role, int id, char *buf, size_t len)
{
	if (!c->metrics_base)
		return NULL;
	int off = role == SYM_ROLE_BACKEND ? 512 + id : role == SYM_ROLE_FRONTEND ? 1 + id : id == 1 ? 511 : 0;
	snprintf(buf, len, "%d", c->metrics_base + off);
	return buf;
}

cJSON *sym_cluster_runtime_json(const struct sym_cluster *c)
{
	cJSON *o = cJSON_CreateObject();
	char hp[300];
	cJSON_AddStringToObject(o, "provider", c->provider);
	snprintf(hp, sizeof(hp), "%s:%s", c->schedd.host, c->schedd.port);
	if (c->has_standby) {
		cJSON *sa = cJSON_AddArrayToObject(o, "schedd");
		cJSON_AddItemToArray(sa, cJSON_CreateString(hp));
		snprintf(hp, sizeof(hp), "%s:%s", c->standby.host, c->standby.port);
		cJSON_AddItemToArray(sa, cJSON_CreateString(hp));
	} else {
		cJSON_AddStringToObject(o, "schedd", hp);
	}
	cJSON *fes = cJSON_AddArrayToObject(o, "frontends");
	for (int i = 0; i < c->nfrontends && c->frontends; i++) {
		cJSON *fe = cJSON_CreateObject();
		snprintf(hp, sizeof(hp), "%s:%s", c->frontends[i].fabric.host, c->frontends[i].fabric.port);
		cJSON_AddStringToObject(fe, "fabric", hp);
		snprintf(hp, sizeof(hp), "%s:%s", c->frontends[i].clients.host, c->frontends[i].clients.port);
		cJSON_AddStringToObject(fe, "clients", hp);
		if (c->frontends[i].http.port[0]) {
			snprintf(hp, sizeof(hp), "%s:%s", c->frontends[i].http.host, c->frontends[i].http.port);
			cJSON_AddStringToObject(fe, "http", hp);
		}
		if (c->frontends[i].grpc.port[0]) {
			snprintf(hp, sizeof(hp), "%s:%s", c->frontends[i].grpc.host, c->frontends[i].grpc.port);
			cJSON_AddStringToObject(fe, "grpc", hp);
		}
		cJSON_AddItemToArray(fes, fe);
	}
	cJSON_AddNumberToObject(o, "backends", c->nbackends);
	cJSON_AddNumberToObject(o, "backends_max", c->backends_max);
	cJSON_AddNumberToObject(o, "suspect_ms", c->suspect_ms);
	cJSON_AddNumberToObject(o, "threads", c->threads);
	cJSON_AddNumberToObject(o, "heartbeat_ms", c->heartbeat_ms);
	cJSON_AddNumberToObject(o, "failure_ms", c->failure_ms);
	cJSON_AddNumberToObject(o, "input_max", (double)c->input_max);
	cJSON_AddNumberToObject(o, "pool_slots", c->pool_slots);
	cJSON_AddBoolToObject(o, "input_encryption", c->input_encryption);
	cJSON_AddNumberToObject(o, "input_bytes", (double)c->input_bytes);
	cJSON_AddStringToObject(o, "executor", c->executor);
	if (c->model_lib[0])
		cJSON_AddStringToObject(o, "model_lib", c->model_lib);
	cJSON_AddNumberToObject(o, "device", c->device);
	if (!strcmp(c->executor, "torch")) {
		cJSON_AddNumberToObject(o, "torch_threads", c->torch_threads);
		cJSON_AddStringToObject(o, "torch_device", c->torch_device);
	}
	if (c->keys_dir[0]) /* where they are, never what they are */
		cJSON_AddStringToObject(o, "keys_dir", c->keys_dir);
	if (c->models_rt)
		cJSON_AddItemToObject(o, "models", cJSON_Duplicate(c->models_rt, 1));
	cJSON_AddNumberToObject(o, "poll_us", c->poll_us);
	cJSON_AddNumberToObject(o, "http_base", c->http_base);
	if (c->http_port)
		cJSON_AddNumberToObject(o, "http_port", c->http_port);
	if (c->grpc_base)
		cJSON_AddNumberToObject(o, "grpc_base", c->grpc_base);
	if (c->listen_host[0])
		cJSON_AddStringToObject(o, "listen_host", c->listen_host);
	cJSON_AddNumberToObject(o, "http_body_max", (double)c->http_body_max);
	cJSON_AddNumberToObject(o, "deadline_max_ms", c->deadline_max_ms);
	cJSON_AddNumberToObject(o, "late_status", c->late_status);
	cJSON_AddNumberToObject(o, "metrics_base", c->metrics_base);
	cJSON_AddNumberToObject(o, "http_conn_max", c->http_conn_max);
	cJSON_AddNumberToObject(o, "http_timeout_s", c->http_timeout_s);
	cJSON_AddNumberToObject(o, "http_per_ip_max", c->http_per_ip_max);
	cJSON_AddNumberToObject(o, "http_body_budget", (double)c->http_body_budget);
	cJSON_AddNumberToObject(o, "client_min_rate", c->client_min_rate);
	if (c->http_tls_cert[0])
		cJSON_AddStringToObject(o, "http_tls_cert", c->http_tls_cert);
	if (c->http_tls_key[0])
		cJSON_AddStringToObject(o, "http_tls_key", c->http_tls_key);
	if (c->http_token_file[0])
		cJSON_AddStringToObject(o, "http_token_file", c->http_token_file);
	if (c->repository_token_file[0])
		cJSON_AddStringToObject(o, "repository_token_file", c->repository_token_file);
	if (c->exp.model_slots)
		cJSON_AddNumberToObject(o, "repository_slots", c->exp.model_slots);
	cJSON_AddNumberToObject(o, "clients_max", c->clients_max);
	cJSON_AddNumberToObject(o, "clients_per_ip_max", c->clients_per_ip_max);
	cJSON_AddNumberToObject(o, "clients_timeout_s", c->clients_timeout_s);
	cJSON_AddNumberToObject(o, "clients_budget", (double)c->clients_budget);
	return o;
}

bool sym_cluster_flag_at(size_t i, struct sym_flag_info *out)
{
	if (i >= NRT)
		return false;
	*out = (struct sym_flag_info){ rt_keys[i].key, rt_keys[i].flag, rt_keys[i].arg, rt_keys[i].help };
	return true;
}
