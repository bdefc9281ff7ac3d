/* runtime/cluster.h - the cluster configuration every runtime process reads.
 *
 * One JSON file serves the whole cluster. It is a simulator experiment
 * (models, zoo or profiles, SLOs, policy, drop rule, network delays, and the
 * workload loadgen offers: rate, arrival, popularity, segments, duration,
 * seed) plus a "runtime" object that says where the processes are:
 *
 *   "runtime": {
 *     "provider": "tcp",              libfabric provider ("verbs" on RDMA hardware)
 *     "host": "127.0.0.1",            where processes bind (loopback unless configured)
 *     "listen_host": "0.0.0.0",       (optional, usually a flag) where this process's listeners
 *                                     bind, in place of its listed address's host (a pod listed by
 *                                     its DNS name binds every interface)
 *     "http_port": 8080,              (optional) every process's HTTP port, in place of http_base's
 *                                     layout: processes on hosts of their own (pods)
 *     "grpc_base": 8001,              (optional) the gRPC API (KServe v2 over gRPC): schedd at PORT
 *                                     (the repository extension; the standby at PORT + 511),
 *                                     frontend i at PORT + 1 + i; a listed frontend's "grpc" wins
 *     "keys_dir": "keys",             the cluster's keys (`symphony keygen cluster DIR`; runtime/cred.h):
 *                                     DIR/ca.pub, DIR/revoked.json and each member's own
 *                                     DIR/ROLE-ID.cred (mode 0600), required by schedd, frontends
 *                                     and backends: a fabric peer proves its role and id before
 *                                     it is trusted (a relative path is from the working directory)
 *     "credential": "FILE",           (optional, usually a flag) this process's credential file
 *     "port_base": 7100,              schedd at port_base; frontend i's fabric port at
 *                                     port_base + 1 + 2i, its client port at port_base + 2 + 2i
 *     "frontends": 2,                 a count (addresses from port_base), or an array of
 *                                     {"fabric": "HOST:PORT", "clients": "HOST:PORT"}
 *     "schedd": "HOST:PORT",          (optional) overrides host:port_base; ["HOST:PORT", "HOST:PORT"]:
 *                                     the active scheduler, then its hot standby
 *     "backends": 4,                  one emulated GPU each; backend i is GPU i of the experiment
 *     "threads": 1,                   schedd's scheduler threads
 *     "heartbeat_ms": 10,             how often frontends and backends heartbeat
 *     "backends_max": 0,              backends that may join (ids up to backends_max-1; 0: backends)
 *     "suspect_ms": 50,               a backend silent this long is suspect: no new plans
 *     "failure_ms": 1000,             a peer silent this long is removed (its batches fail)
 *     "input_max": 262144,            bytes of the largest input a frontend holds
 *     "pool_slots": 1024,             inputs a frontend holds at once
 *     "input_encryption": true,       a frontend encrypts the inputs backends read from its pool
 *                                     (false: authenticated only; runtime/inputseal.h)
 *     "input_bytes": 1024,            input size of a model without a signature
 *     "executor": "emulated",         or "cuda" (runtime/cuda/) or "torch" (runtime/torch/)
 *     "model_lib": "",                cuda: plugin library for models with no built-in
 *     "device": 0,                    cuda (and torch on "cuda"): the device ordinal a backend uses
 *     "torch_threads": 1,             torch: intra-op threads of each batch
 *     "torch_device": "cpu",          torch: "cpu" or "cuda" (a libtorch with CUDA)
 *     "poll_us": 0,                   schedd's polling (0: sleep at once; see sched.h)
 *     "http_base": 8100,              HTTP (KServe v2 API, /metrics): schedd here, frontend i at
 *                                     +1+i, a standby schedd at +511, backend i at +512+i;
 *                                     default port_base + 1000; 0: off
 *     "http_body_max": 8388608,       largest HTTP body (413 above)
 *     "deadline_max_ms": 10000,       largest per-request deadline a client may ask for
 *     "late_status": 200,             or 504: the status of an answer that came back late
 *     "metrics_base": 0,              /metrics (and liveness) on ports of their own, laid out as
 *                                     http_base's; 0: on the HTTP ports
 *     "http_conn_max": 1024,          HTTP connections a process holds at once (past it, the one
 *                                     waiting longest for its request is closed)
 *     "http_timeout_s": 10,           an HTTP connection's next request (TLS handshake, headers,
 *                                     body) must be in this long after it began waiting for it,
 *                                     plus its body at client_min_rate; else it is closed
 *     "http_per_ip_max": 64,          HTTP connections from one address (0: no limit of its own)
 *     "http_body_budget": 67108864,   bytes of HTTP request bodies a process holds at once, in
 *                                     all (a request beyond: 503 before its body is read)
 *     "client_min_rate": 32768,       bytes/s a client must keep up sending a request (an HTTP
 *                                     body, a native message), beyond its timeout
 *     "http_tls_cert", "http_tls_key": PEM files: HTTPS instead of HTTP (GnuTLS, via libmicrohttpd)
 *     "http_token_file": "",          bearer tokens that inference requests must carry (HTTP, and
 *                                     the native port's HELLO)
 *     "repository_token_file": "",    bearer tokens that schedd's model repository API's load and
 *                                     unload must carry (without it, they are refused)
 *     "repository_slots": 4,          spare model slots: models added to the repository after
 *                                     schedd started that its API can load (default 4 with a
 *                                     model repository, else 0)
 *     "clients_max": 256,             native-protocol clients a frontend holds at once (past it,
 *                                     the one idle longest is closed)
 *     "clients_per_ip_max": 64,       native clients from one address (0: no limit of its own)
 *     "clients_budget": 67108864,     bytes of native clients' messages in flight and answers not
 *                                     yet read, in all (beyond 32 KiB each way per client)
 *     "clients_timeout_s": 10,        a native client's next message (its HELLO first) must be in
 *                                     this long after it began waiting for it (plus the message
 *                                     at client_min_rate), unless it awaits answers
 *     "models": {                     (optional) per model, by name:
 *       "mlp": {
 *         "input":  {"name": "INPUT0", "datatype": "FP32", "shape": [784]},
 *         "output": {"name": "OUTPUT0", "datatype": "FP32", "shape": [10]},
 *         "executor": {...}           what the executor runs (cuda: see runtime/cuda/;
 *                                     torch: {"file": "PATH.pt"})
 *       }
 *     }
 *   }
 *
 * With the experiment's "model_repository" (experiment/repository.h), each
 * of its models joins "runtime.models" too: its tensors, version and file.
 *
 * A model's input defaults to INPUT0 UINT8 [input_bytes] and its output to
 * OUTPUT0 UINT64 [1], the emulated executor's digest; a model whose executor
 * spec names a built-in ({"builtin": "mlp", ...}) takes the built-in's
 * signature by default. A frontend refuses a request whose input is not of
 * its model's size.
 *
 * Every key can also be given as a flag (--port-base 7300, --frontends 2,
 * ...), and every simulator flag works too; flags override the file. The
 * simulator ignores the "runtime" object, so `symphony sim` runs the same
 * file (what scripts/fidelity does).
 *
 * Network delays: when the configuration sets none (no "network" key and
 * no --ctrl-ms/--data-ms/--resp-ms), the scheduler plans with the measured
 * high-percentile delays of the provider (sym_cluster_net_defaults).
 */
#ifndef SYM_CLUSTER_H
#define SYM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "experiment/config.h"
#include "runtime/executor.h"

struct sym_hostport {
	char host[256];
	char port[16];
};

struct sym_cluster_fe {
	struct sym_hostport fabric;  /* backends connect here (RMA reads, results) */
	struct sym_hostport clients; /* clients (loadgen) connect here */
	struct sym_hostport http;    /* the HTTP API and /metrics ("" port: none) */
	struct sym_hostport grpc;    /* the gRPC API ("" port: none) */
};

struct sym_cluster {
	struct sym_experiment exp;
	char provider[32];
	char host[256];
	char listen_host[256];            /* "": each listener binds its listed address's host (sym_cluster_bind_host) */
	int http_port;                    /* > 0: every process's HTTP port, in place of http_base's layout */
	int grpc_base;                    /* > 0: gRPC: schedd here (standby +511), frontend i at +1+i (unless listed) */
	int port_base;
	struct sym_hostport schedd;       /* the active scheduler */
	struct sym_hostport standby;      /* its hot standby (symphony schedd --standby), when has_standby */
	bool schedd_set, has_standby;
	int nfrontends;
	struct sym_cluster_fe *frontends; /* nfrontends */
	bool frontends_listed;            /* given as an array (not from port_base) */
	int nbackends;
	int backends_max;                 /* backends that may be members at once (ids 0..backends_max-1);
					   * after resolve >= nbackends (0 given: nbackends) */
	double suspect_ms;                /* a backend silent this long gets no new plans (0: min(50, failure_ms)) */
	int threads;
	double heartbeat_ms;
	double failure_ms;
	size_t input_max;
	int pool_slots;
	bool input_encryption;            /* inputs in a frontend's pool: encrypted, else authenticated only */
	size_t input_bytes;
	char executor[32];
	bool repo_read;                   /* after resolve: the experiment's model repository's signatures and
					   * files joined models_rt */
	char keys_dir[512];               /* the cluster's keys (runtime/cred.h), or "" */
	char credential[512];             /* this process's credential file, or "": keys_dir/ROLE-ID.cred */
	char model_lib[512];              /* cuda: plugin library for models with no built-in, or "" */
	int device;                       /* cuda, torch on "cuda": device ordinal (default 0) */
	int torch_threads;                /* torch: intra-op threads per batch (default 1) */
	char torch_device[8];             /* torch: "cpu" (default) or "cuda" */
	cJSON *models_rt;                 /* the "runtime.models" object as given, or NULL (owned) */
	struct sym_model_desc *models;    /* exp.nmodels after resolve: signatures and executor specs;
					   * .profile is kind 0's (a backend sets its own kind's) */
	size_t input_bytes_max;           /* after resolve: the largest input of any model */
	size_t output_bytes_max;          /* after resolve: the largest output of any model */
	double poll_us;                   /* schedd's threads poll this long after work, twice before timers */
	int http_base;                    /* HTTP ports: schedd here, frontend i at +1+i, backend i at +512+i;
					   * 0: no HTTP; -1 (default): port_base + 1000 */
	size_t http_body_max;             /* bytes of the largest HTTP request body (413 above) */
	double deadline_max_ms;           /* the largest per-request deadline a client may ask for */
	int late_status;                  /* HTTP status of an answer that came back late: 200 or 504 */
	int metrics_base;                 /* /metrics on listeners of their own: schedd here, frontend i at +1+i,
					   * the standby at +511, backend i at +512+i; 0: on the HTTP ports */
	int http_conn_max;                /* HTTP connections a process holds at once */
	double http_timeout_s;            /* an HTTP connection without progress this long is closed */
	int http_per_ip_max;              /* HTTP connections from one address at once (0: no limit of its own) */
	size_t http_body_budget;          /* bytes of HTTP request bodies held at once, in all (>= http_body_max) */
	double client_min_rate;           /* bytes/s a client must keep up sending a request, beyond its timeout */
	char http_tls_cert[512], http_tls_key[512]; /* PEM files: HTTPS on every HTTP port; "": plain HTTP */
	char http_token_file[512];        /* bearer tokens for inference (one a line, mode 0600); "": none asked */
	char repository_token_file[512];  /* bearer tokens for the repository API's load and unload; "": refused */
	int repository_slots;             /* spare model slots for models added to the repository later (-1,
					   * the default: 4 with a model repository, else 0) */
	int clients_max;                  /* native-protocol clients a frontend holds at once */
	int clients_per_ip_max;           /* native clients from one address at once (0: no limit of its own) */
	size_t clients_budget;            /* bytes native clients' buffers hold beyond their base, in all */
	double clients_timeout_s;         /* a native client's next message must be in this long after it began
					   * waiting for it (plus the message at client_min_rate) */
	bool net_set;                     /* the configuration set network delays */
	bool resolved;
};

/* Defaults (no file): one frontend, two backends, tcp on 127.0.0.1:7100. */
int sym_cluster_init(struct sym_cluster *c);
void sym_cluster_finish(struct sym_cluster *c);

/* Applies a cluster file (experiment keys plus "runtime"). Returns 0, or
 * -EINVAL/-ENOENT/-EIO with a message naming the file and key. */
int sym_cluster_load_file(struct sym_cluster *c, const char *path, char *err, size_t errlen);

/* Applies a parsed cluster file (path names it in messages). */
int sym_cluster_load_json(struct sym_cluster *c, const cJSON *root, const char *path, char *err, size_t errlen);

/* Applies one flag (no leading "--"): a runtime key (port-base, frontends,
 * ...) or any simulator flag. Returns 0, 1 when it is neither, or -EINVAL. */
int sym_cluster_apply_flag(struct sym_cluster *c, const char *flag, const char *value, char *err, size_t errlen);

/* Fills the addresses, sets the experiment's GPUs to the backends and the
 * network defaults, then resolves the experiment. */
int sym_cluster_resolve(struct sym_cluster *c, char *err, size_t errlen);

/* Fills spare model slot m (empty) with model `name` of the model repository,
 * read again from its directory: the experiment's model (its profile on each
 * kind, SLO, memory; *capped: its batches capped at the slots' largest),
 * its signature, version and file. Every runtime process does this for the
 * same slot when schedd says so (SYM_MSG_MODEL), each from its own
 * --model-repository. 0, or a negative errno with a message naming the
 * file and what is wrong; the slot stays empty then. */
int sym_cluster_fill_slot(struct sym_cluster *c, size_t m, const char *name, bool *capped, char *err, size_t errlen);

/* Spare slot m holds model `name` (nl bytes) as schedd says (SYM_MSG_MODEL):
 * 0 when it did already, 1 when it was filled with it (emptied first if it
 * held another), or a negative errno with a message (the slot is empty). */
int sym_cluster_set_slot(struct sym_cluster *c, size_t m, const char *name, size_t nl, bool *capped, char *err,
			 size_t errlen);

/* Empties spare slot m again (its model, if any, is forgotten). */
void sym_cluster_clear_slot(struct sym_cluster *c, size_t m);

/* The planning delays (ms) used when the configuration sets none: measured
 * high percentiles of the provider's control round trip and 150 KB read. */
void sym_cluster_net_defaults(const char *provider, double *ctrl_ms, double *data_ms, double *resp_ms,
			      double *done_ms);

/* The input and output tensors a loadgen or a client sends and receives for
 * model m (after resolve). */
static inline size_t sym_cluster_input_bytes(const struct sym_cluster *c, size_t m)
{
	return sym_tensor_bytes(&c->models[m].input);
}

/* Largest output a model may have: what fits in one wire message. */
#define SYM_CLUSTER_OUTPUT_MAX (60 * 1024)

/* The HTTP port of schedd (role SYM_ROLE_SCHEDD; id 0 the active, 1 the standby), frontend or backend `id`
 * as a string in buf, or NULL when HTTP is off (after resolve). */
const char *sym_cluster_http_port(const struct sym_cluster *c, int role, int id, char *buf, size_t len);

/* A reload (SIGHUP; schedd's POST /v2/admin/reload): fresh is the cluster
 * file read and resolved again with the start's flags. The keys that may
 * change live (client and HTTP limits, deadline_max_ms, late_status, the
 * token files) and the models' SLOs are copied into c and listed in done
 * ("key old -> new; ..."); any other difference (the membership lists,
 * addresses, the experiment's models, profiles, policy or workload) refuses
 * the whole reload, c unchanged, naming each in err. Returns the number of
 * changes (0: none), or -EINVAL. The process then applies what it holds
 * apart from c (HTTP servers' limits, tokens, the scheduler's SLOs). */
int sym_cluster_reload(struct sym_cluster *c, const struct sym_cluster *fresh, char *done, size_t donelen, char *err,
		       size_t errlen);

/* Schedd's gRPC port (id 0 the active, 1 the standby) in buf, or NULL when
 * there is no gRPC (grpc_base 0). */
const char *sym_cluster_grpc_port(const struct sym_cluster *c, int id, char *buf, size_t len);

/* Where a listener of this process binds: listen_host, or else the host of
 * its listed address `listed`. */
const char *sym_cluster_bind_host(const struct sym_cluster *c, const char *listed);

/* The metrics port of a process (as sym_cluster_http_port), or NULL when
 * metrics share the HTTP port (metrics_base 0). */
const char *sym_cluster_metrics_port(const struct sym_cluster *c, int role, int id, char *buf, size_t len);

/* The "runtime" object as resolved (for result files). */
cJSON *sym_cluster_runtime_json(const struct sym_cluster *c);

/* The i-th runtime key (its key in the file's "runtime" object, its flag,
 * placeholder and help); false past the last. */
bool sym_cluster_flag_at(size_t i, struct sym_flag_info *out);

/* Parses "HOST:PORT" (the last colon splits; "[v6]:PORT" allowed). */
int sym_hostport_parse(const char *text, struct sym_hostport *out);

#endif
