/* runtime/wire.h - the runtime's binary wire format.
 *
 * Every message is a 16-byte header followed by a payload:
 *
 *   offset 0  u32 magic   0x314d5953 ("SYM1" in little-endian byte order)
 *          4  u16 version SYM_WIRE_VERSION
 *          6  u16 type    enum sym_msg_type
 *          8  u32 length  payload bytes, at most SYM_WIRE_MAX_PAYLOAD
 *         12  u32 term    the scheduler term (since version 5; before, reserved flags, 0)
 *
 * The term fences schedulers (docs/runtime.md, "Fencing"): a number that
 * only grows, one higher each time a scheduler takes over. A message a
 * scheduler sends carries its term (a standby's: the highest term it has
 * seen); a message a frontend or backend sends to a scheduler carries the
 * highest term the sender has seen from one (0: none yet). A frontend or
 * backend refuses a scheduler message whose term is below the highest it
 * has seen, and a scheduler that sees a term above its own stops acting as
 * the active one. REQUEST, ANSWER, RESULT and GRANT, which no scheduler
 * sends or reads, carry 0: another value is refused on decode.
 *
 * All integers are little-endian and written byte by byte (no struct
 * layout on the wire). Each type's payload has an exact size, or an exact
 * size given its counts, and every field is range-checked on decode: a
 * message that is not exactly well-formed is rejected with a reason, never
 * partly accepted. Variable parts (plan inputs, model lists, data bytes) are
 * not copied: the decoded message points into the caller's buffer.
 *
 * Times on the wire are relative durations in nanoseconds (a request's
 * remaining budget, a plan's start delay), never absolute clock readings, so
 * processes on different hosts need no common clock.
 *
 * Thread safety: the functions are pure; buffers belong to the caller.
 */
#ifndef SYM_WIRE_H
#define SYM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_WIRE_MAGIC 0x314d5953u
#define SYM_WIRE_VERSION 8 /* 5: the header's term; a HELLO carries a token, a native client's first
			    * message is its HELLO; a GRANT carries the key inputs are sealed with;
			    * 6: MODEL; 7: a RESULT names its batch; 8: a backend's HELLO names the
			    * sub-cluster it joins */
#define SYM_WIRE_HEADER 16
#define SYM_WIRE_MAX_PAYLOAD (1u << 20) /* 1 MiB: inputs and outputs travel inline for clients */
#define SYM_WIRE_MAX_BATCH 1024         /* inputs in one plan */
#define SYM_WIRE_MAX_MODELS 1024        /* models in one hello */
#define SYM_WIRE_MAX_NAME 63            /* bytes of a name (kind, peer) */
#define SYM_WIRE_MAX_TOKEN 255          /* bytes of a HELLO's token */
#define SYM_WIRE_MAX_PARTS 32           /* sub-clusters a HELLO can name (core/parts.h: SYM_MAX_KINDS) */

enum sym_msg_type {
	SYM_MSG_HELLO = 1,    /* any peer -> schedd / frontend: who it is; a native client's first message
			       * (since version 5), with its bearer token when the frontend asks for one;
			       * between the two schedulers, each side's, to the other (role SCHEDD or
			       * STANDBY, id 0 or 1) */
	SYM_MSG_HEARTBEAT,    /* peer -> schedd and schedd -> peer: alive (each on its own timer);
			       * the active scheduler -> the standby: seq is its clock, which the
			       * standby sends back at once (the active scheduler's lease) */
	SYM_MSG_REQUEST,      /* client -> frontend: an inference request with its input */
	SYM_MSG_META,         /* frontend -> schedd: a request's metadata and where its input lies */
	SYM_MSG_PLAN,         /* schedd -> backend: a batch to run */
	SYM_MSG_DONE,         /* backend -> schedd: a batch finished (or failed) */
	SYM_MSG_RESULT,       /* backend -> frontend: one request's output */
	SYM_MSG_DROP,         /* schedd -> frontend: a request dropped, and why */
	SYM_MSG_ANSWER,       /* frontend -> client: the output, or why there is none */
	SYM_MSG_BYE,          /* frontend/backend -> schedd: it is leaving, plan nothing more for it;
			       * schedd -> backend: nothing more will come (its plans came before) */
	SYM_MSG_STATUS,       /* schedd -> frontend: the GPUs online, for readiness */
	SYM_MSG_GRANT,        /* frontend -> backend: the key of its input pool for this connection, and the
			       * key its inputs are sealed with */
	SYM_MSG_LOAD,         /* schedd -> backend: load a model onto the GPU, or unload it (since version 4) */
	SYM_MSG_LOADED,       /* backend -> schedd: a load or unload is done (or failed), and how long it took */
	SYM_MSG_MODEL,        /* schedd -> frontend, backend: a spare model slot now holds this model of the
			       * repository (since version 6) */
	SYM_MSG_NTYPES
};

/* A scheduler's hello to the other scheduler says SCHEDD when it acts as the
 * active one, STANDBY (since version 5) when it stands by. */
enum sym_role {
	SYM_ROLE_SCHEDD = 1,
	SYM_ROLE_FRONTEND,
	SYM_ROLE_BACKEND,
	SYM_ROLE_CLIENT,
	SYM_ROLE_STANDBY,
	SYM_ROLE_NROLES
};

/* Why a request got no output (ANSWER.status, DROP.reason, RESULT.status). */
enum sym_wire_status {
	SYM_WIRE_OK = 0,
	SYM_WIRE_DROPPED_EXPIRED,  /* its deadline could no longer be met */
	SYM_WIRE_DROPPED_EARLY,    /* early drop: shed to keep the batch on time */
	SYM_WIRE_BACKEND_FAILED,   /* its backend stopped answering */
	SYM_WIRE_FRONTEND_GONE,    /* its frontend disappeared (schedd side) */
	SYM_WIRE_BAD_REQUEST,      /* unknown model, input too large */
	SYM_WIRE_OVERLOADED,       /* the frontend's input pool is full */
	SYM_WIRE_UNAVAILABLE,      /* the frontend cannot reach the scheduler */
	SYM_WIRE_REJECTED,         /* its batch could not start by the latest start its scheduler gave */
	SYM_WIRE_UNAUTHORIZED,     /* a native client without a valid HELLO (token): the frontend closes it */
	SYM_WIRE_NOT_LOADED,       /* its model is unloaded (the repository API), or is being unloaded */
	SYM_WIRE_NSTATUS
};

/* LOAD.op, LOADED.op */
enum sym_wire_load_op { SYM_WIRE_LOAD = 1, SYM_WIRE_UNLOAD = 2 };

/* One input of a plan: which frontend holds it and where, for an RMA read. */
struct sym_wire_input {
	uint32_t frontend;
	uint64_t req_id;
	uint64_t addr;   /* the frontend's address (or offset) of the input */
	uint32_t len;    /* bytes */
	uint64_t key;    /* 0: since version 3 a backend reads with the key its frontend granted it (GRANT) */
};
#define SYM_WIRE_INPUT_SIZE 32

struct sym_msg {
	enum sym_msg_type type;
	uint32_t term;  /* the header's scheduler term (above); 0 where no scheduler is involved */
	union {
		struct {
			uint8_t role;           /* enum sym_role */
			uint32_t id;            /* frontend or backend id (0 for schedd, clients) */
			char kind[SYM_WIRE_MAX_NAME + 1]; /* backend GPU kind, or "" */
			uint16_t nmodels;       /* backend: the models it has loaded */
			const uint8_t *models;  /* nmodels u16 model ids (little-endian), into the buffer */
			uint8_t part;           /* a backend: 1 + the sub-cluster it joins (the autoscaler that
						 * started it chose it, since version 8), at most
						 * SYM_WIRE_MAX_PARTS; 0: its GPU's own */
			uint8_t token_len;      /* a client: its bearer token (printable ASCII, no blank), or 0 */
			const char *token;      /* token_len bytes, not NUL-terminated (decoded: into the buffer) */
		} hello;
		struct {
			uint32_t id;
			uint64_t seq;
		} heartbeat;
		struct {
			uint64_t req_id;        /* the client's id, unique per client connection */
			uint16_t model;
			int64_t budget_ns;      /* > 0: deadline override (remaining time), 0: the model's SLO */
			uint32_t len;
			const uint8_t *data;    /* the input, into the buffer */
		} request;
		struct {
			uint64_t req_id;        /* the frontend's id, unique per frontend */
			uint16_t model;
			uint32_t frontend;
			int64_t budget_ns;      /* remaining time to the deadline when sent, > 0 */
			uint64_t addr;
			uint32_t len;
			uint64_t key;
		} meta;
		struct {
			uint64_t batch_id;
			uint32_t gpu;
			uint16_t model;
			int64_t start_in_ns;    /* start this long after receipt (>= 0) */
			int64_t latest_in_ns;   /* reject it if it cannot start within this long after receipt
						 * (>= start_in_ns), or -1: never */
			uint16_t n;             /* 1..SYM_WIRE_MAX_BATCH */
			const uint8_t *inputs;  /* n encoded inputs; read with sym_wire_plan_input */
		} plan;
		struct {
			uint64_t batch_id;
			uint32_t gpu;
			uint8_t status;         /* SYM_WIRE_OK, SYM_WIRE_BACKEND_FAILED or SYM_WIRE_REJECTED */
			int64_t ran_ns;         /* how long it ran on the GPU (0 when it did not run) */
			int64_t ago_ns;         /* how long before this message it ended (or was rejected) */
		} done;
		struct {
			uint64_t req_id;
			uint8_t status;
			uint16_t batch;         /* size of the batch that ran it (0: none) */
			uint32_t len;
			uint64_t batch_id;      /* the batch's id (schedd's plan), for the logs' traces */
			const uint8_t *data;
		} result;
		struct {
			uint64_t req_id;
			uint8_t reason;         /* a SYM_WIRE_DROPPED_* or SYM_WIRE_BACKEND_FAILED */
		} drop;
		struct {
			uint64_t req_id;
			uint8_t status;
			uint16_t batch;         /* size of the batch that ran it (0: none) */
			uint32_t len;
			const uint8_t *data;    /* the output when status is OK */
		} answer;
		struct {
			uint8_t role;           /* the sender's (enum sym_role) */
			uint32_t id;
		} bye;
		struct {
			uint32_t frontend;
			uint64_t key;           /* valid while this connection lasts (the pool's registration for it) */
			uint8_t seal_key[32];   /* the key the frontend seals its inputs with (runtime/inputseal.h) */
			uint8_t encrypted;      /* 1: inputs are encrypted, 0: authenticated only */
		} grant;
		struct {
			uint32_t gpus_online;   /* backends registered and not suspect or leaving */
			uint32_t gpus_max;      /* the most the cluster may have (backends_max) */
			uint8_t draining;       /* 1: schedd is shutting down and takes no new request */
			uint16_t noff;          /* models taking no request (unloaded or unloading), at most
						 * SYM_WIRE_MAX_MODELS */
			const uint8_t *off;     /* noff u16 model ids, into the buffer; read with sym_wire_status_model */
		} status;
		struct {
			uint16_t model;
			uint8_t op;             /* enum sym_wire_load_op */
		} load;
		struct {
			uint16_t model;
			uint8_t op;             /* enum sym_wire_load_op */
			uint8_t status;         /* SYM_WIRE_OK, or SYM_WIRE_BACKEND_FAILED (it does not fit, the executor refused) */
			int64_t took_ns;        /* how long the load or unload took on the backend */
			uint8_t why_len;        /* a failed load: why (the executor's message, printable ASCII), or 0 */
			const char *why;        /* why_len bytes, not NUL-terminated (decoded: into the buffer) */
		} loaded;
		struct {
			uint16_t model;         /* the slot */
			uint8_t name_len;       /* a repository's model name (sym_repo_name_ok): 1..40 bytes */
			const char *name;       /* not NUL-terminated (decoded: into the buffer) */
		} model;
	} u;
};

/* The encoded size of m (header included), or 0 when m is out of bounds. */
size_t sym_wire_size(const struct sym_msg *m);

/* Encodes m into buf. For a plan, inputs[0..n) are the inputs (m->u.plan.inputs is ignored);
 * for a hello, models[0..nmodels) the model ids; for a status, models[0..noff) the models off. Returns the bytes written, or 0 when m is out of
 * bounds or cap is too small. */
size_t sym_wire_encode(const struct sym_msg *m, const struct sym_wire_input *inputs, const uint16_t *models,
		       uint8_t *buf, size_t cap);

/* Decodes the message at the start of buf[0..len). Returns the message's size (> 0) with *m
 * filled; 0 when buf holds only part of a message (read more); or -EPROTO when it is malformed,
 * with the reason in err. After -EPROTO the stream cannot be resynchronised: close it. */
long sym_wire_decode(const uint8_t *buf, size_t len, struct sym_msg *m, char *err, size_t errlen);

/* Plan input i (i < n) of a decoded plan. */
void sym_wire_plan_input(const struct sym_msg *m, uint16_t i, struct sym_wire_input *out);

/* Model i (i < noff) of a decoded status. */
uint16_t sym_wire_status_model(const struct sym_msg *m, uint16_t i);

/* Model i (i < nmodels) of a decoded hello. */
uint16_t sym_wire_hello_model(const struct sym_msg *m, uint16_t i);

const char *sym_wire_type_name(int type);
const char *sym_wire_status_name(int status);

#endif
