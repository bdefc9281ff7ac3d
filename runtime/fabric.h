/* runtime/fabric.h - the runtime's transport: libfabric connected (FI_EP_MSG)
 * endpoints carrying two-sided control messages and one-sided RMA reads.
 *
 * One `struct sym_fab` per process (or per thread that talks to peers): a
 * fabric, a domain, one event queue for connection management and one
 * completion queue shared by every connection. The provider comes from the
 * configuration: "tcp" over loopback here and in CI, "verbs" on
 * InfiniBand/RoCE hardware. The code follows the strictest memory
 * registration rules libfabric reports (FI_MR_LOCAL descriptors,
 * FI_MR_PROV_KEY keys, FI_MR_VIRT_ADDR or offset addressing,
 * FI_MR_ALLOCATED, FI_MR_ENDPOINT binding) and retries on -FI_EAGAIN, so
 * that the same path runs on both; there is no provider-specific branch.
 *
 * Messages: each sym_fab_send is one message of at most cfg.msg_max bytes,
 * delivered whole and in order on its connection (the wire format's header
 * says what it is). Sends are copied into registered buffers, so the
 * caller's buffer is free at once.
 *
 * RMA reads: a process registers memory that peers may read
 * (sym_fab_mr_reg with SYM_FAB_REMOTE_READ) and tells them its address
 * (sym_fab_mr_addr) and key (sym_fab_mr_key); a peer reads it into its own
 * registered memory with sym_fab_read, and learns of completion from a
 * SYM_FAB_READ event.
 *
 * Progress: everything happens inside sym_fab_poll (nonblocking). A process
 * waits for work with sym_fab_wait, or adds sym_fab_fd to its own epoll set
 * and calls sym_fab_trywait before blocking on it. A frontend keeps calling
 * sym_fab_poll so that the reads of its memory are served.
 *
 * Not thread-safe: one thread uses one sym_fab and its connections.
 */
#ifndef SYM_FABRIC_H
#define SYM_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_fab;
struct sym_fab_conn;
struct sym_fab_mr;

struct sym_cred;
struct sym_revoked;

struct sym_fab_cfg {
	const char *provider; /* libfabric provider name; NULL or "": "tcp" */
	size_t msg_max;       /* largest message in bytes; 0: SYM_FAB_MSG_MAX */
	int rx_depth;         /* receive buffers posted per connection; 0: 64 */
	int tx_depth;         /* sends in flight per connection; 0: 256 */
	const struct sym_cred *cred;       /* this member's credential (runtime/cred.h): every connection
					    * authenticates and is sealed (below); NULL: none is (benchmarks,
					    * tests) */
	const struct sym_revoked *revoked; /* serials refused (copied); NULL: none */
	bool isolate; /* each accepted connection gets a libfabric domain (and completion queue) of its
		       * own: what sym_fab_mr_reg_conn registers for it is readable through it alone
		       * (a frontend's pool, granted to one backend). Costs a domain per connection. */
};

/* Authentication. With a credential, a connection is reported up
 * (CONNECTED, ACCEPTED) only after a mutual handshake that authenticates
 * both ends' roles and ids, and every message after it is sealed.
 *
 * The handshake is the signed Diffie-Hellman of SIGMA and TLS 1.3 (ISO/IEC
 * 9798-3 with ephemeral keys), from libsodium's primitives: the initiator
 * sends a fresh X25519 key (crypto_kx), its credential and the role and id
 * it means to reach; the responder checks that this is itself, answers with
 * its own fresh key, its credential and an Ed25519 signature (crypto_sign)
 * of the transcript so far; the initiator checks the credential is the one
 * it wanted and the signature, and signs the whole transcript in turn. Each
 * credential must carry the cluster CA's signature and a serial not
 * revoked. The session keys come from the two ephemeral keys (crypto_kx),
 * bound to the transcript's BLAKE2b hash: a relay that forwards a
 * handshake to another member fails (the signed transcript names whom each
 * side meant), a recorded one replays to nothing (fresh keys), and a peer
 * that holds a credential can act only as the role and id it names.
 *
 * After it, every message is ChaCha20-Poly1305 (IETF) with a per-direction
 * key and the message's sequence number as nonce: a forged, replayed,
 * reordered or dropped message fails, and the connection closes. A peer
 * that sends anything else first, fails a check, or takes longer than 1 s
 * is closed: on our side of a connection we started, with a CLOSED event
 * saying why; on one we accepted, before the caller ever sees it. Every
 * refusal is counted by class (sym_fab_refusals). Accepted connections
 * still authenticating are bounded: 64 in all. The newest always gets in:
 * when all are taken, the oldest of the address holding the most is closed
 * for it. A member needs a round trip or two, so a flood from other
 * addresses cannot keep it out, and one from its own address must open 64
 * connections within that time. A process takes at most 16 connection
 * requests a poll. */
#define SYM_FAB_ANY_ID UINT32_MAX

/* The role and id a connection must reach (sym_fab_connect). */
struct sym_fab_peer {
	int role;    /* SYM_CRED_* (runtime/cred.h) */
	uint32_t id; /* or SYM_FAB_ANY_ID */
};

/* Why peers were refused (sym_fab_refusals). */
enum sym_fab_refusal {
	SYM_FAB_REFUSE_PROTOCOL, /* it sent something other than the handshake, or out of order */
	SYM_FAB_REFUSE_CREDENTIAL, /* a credential not signed by the CA, or a bad signature */
	SYM_FAB_REFUSE_IDENTITY, /* it is (or wanted) another role or id than the one meant: a relay */
	SYM_FAB_REFUSE_REVOKED,  /* its credential's serial is revoked */
	SYM_FAB_REFUSE_TIMEOUT,  /* it did not finish the handshake in time */
	SYM_FAB_REFUSE_FLOOD,    /* too many connections authenticating from its address, or in all */
	SYM_FAB_REFUSE_MESSAGE,  /* a message after the handshake failed authentication */
	SYM_FAB_REFUSE_N
};
const char *sym_fab_refusal_name(int why);

#define SYM_FAB_MSG_MAX (64 * 1024)

enum sym_fab_ev_type {
	SYM_FAB_CONNECTED, /* a connection we started is up */
	SYM_FAB_ACCEPTED,  /* a peer connected to our listener; conn is new */
	SYM_FAB_MSG,       /* a message arrived on conn */
	SYM_FAB_READ,      /* a read we posted finished (status 0) or failed (< 0) */
	SYM_FAB_CLOSED,    /* conn is down (peer closed, failed to connect, error); reason says why.
			    * The conn stays valid until the caller calls sym_fab_close on it.
			    * Messages that arrived before come first; reads still in flight
			    * end just before it with status -ECONNABORTED; no event names
			    * conn after it. */
};

struct sym_fab_event {
	enum sym_fab_ev_type type;
	struct sym_fab_conn *conn;
	const uint8_t *data; /* MSG: the message, valid until the next sym_fab_poll */
	size_t len;
	void *ctx;           /* READ: the ctx given to sym_fab_read */
	int status;          /* READ: 0 or -errno */
	char reason[160];    /* CLOSED: why, for the log */
};

/* Access flags for sym_fab_mr_reg. */
#define SYM_FAB_REMOTE_READ 1u /* peers may read it with sym_fab_read */
#define SYM_FAB_LOCAL_READ_TARGET 2u /* our reads may land in it */
#define SYM_FAB_LOCAL_SEND 4u /* (internal use: send and receive buffers) */

/* Opens the provider. Returns 0, or -ENODATA (no such provider, or it lacks
 * FI_MSG/FI_RMA on connected endpoints), -ENOMEM, or another -errno, with a
 * message naming the provider and libfabric's error in err. */
int sym_fab_open(struct sym_fab **out, const struct sym_fab_cfg *cfg, char *err, size_t errlen);

/* Closes every connection and registration, then the fabric. */
void sym_fab_destroy(struct sym_fab *f);

/* The provider in use ("tcp", "verbs", ...). sym_fab_describe adds, for
 * logs, the mr_mode bits it reported and whether wait fds are available,
 * e.g. "tcp (mr_mode none, wait fd)". */
const char *sym_fab_provider(const struct sym_fab *f);
const char *sym_fab_describe(const struct sym_fab *f);

/* The message of the last error on f, for the calls that take no err
 * buffer (send, read, poll, wait), naming the provider and libfabric's
 * error. "" before any. */
const char *sym_fab_last_error(const struct sym_fab *f);

/* Listens on host:port ("0": a free port; see sym_fab_listen_port). One
 * listener per sym_fab. Returns 0 or -errno with a message. */
int sym_fab_listen(struct sym_fab *f, const char *host, const char *port, char *err, size_t errlen);
int sym_fab_listen_port(const struct sym_fab *f);

/* Starts connecting to host:port, to the member `want` names (with a
 * credential, the handshake fails unless the peer proves it is that role
 * and id; want may be NULL only without one); a SYM_FAB_CONNECTED or SYM_FAB_CLOSED
 * event follows (a refused connection is a CLOSED event, also when the
 * provider knows at once). Returns 0 with *out set, or -errno with a
 * message (an address that does not resolve, no memory). */
int sym_fab_connect(struct sym_fab *f, const char *host, const char *port, const struct sym_fab_peer *want,
		    struct sym_fab_conn **out, char *err, size_t errlen);

/* The caller's pointer on a connection (NULL until set). */
void sym_fab_conn_set_user(struct sym_fab_conn *c, void *user);
void *sym_fab_conn_user(const struct sym_fab_conn *c);

/* Whether conn is connected (not yet closed). */
bool sym_fab_conn_up(const struct sym_fab_conn *c);

/* Who the peer proved it is (role, id and serial of its credential);
 * false without authentication or before the handshake is over (once a
 * connection is down, who it was). */
bool sym_fab_conn_peer(const struct sym_fab_conn *c, int *role, uint32_t *id, uint64_t *serial);

/* Replaces the revoked serials (copied) and closes every connection whose
 * peer's credential is now revoked (CLOSED events follow). Returns the
 * number closed, or -ENOMEM. */
int sym_fab_set_revoked(struct sym_fab *f, const struct sym_revoked *r);

/* Sends len bytes (copied). Returns 0; -EMSGSIZE when len > msg_max;
 * -ENOTCONN when conn is not up; -ENOBUFS when tx_depth sends are still
 * in flight after progressing the CQ for 200 ms (the peer does not drain).
 * Completions read meanwhile are kept for the next sym_fab_poll. Each
 * connection holds (rx_depth + tx_depth) * msg_max bytes of registered
 * buffers. */
int sym_fab_send(struct sym_fab_conn *c, const void *buf, size_t len);

/* Registers [buf, buf+len) with the given SYM_FAB_* access flags. Returns 0
 * or -errno with a message; -EOPNOTSUPP when the provider requires
 * FI_MR_ENDPOINT (a registration per endpoint, which this API's one key per
 * region cannot express; tcp and verbs do not). */
int sym_fab_mr_reg(struct sym_fab *f, void *buf, size_t len, unsigned access, struct sym_fab_mr **out,
		   char *err, size_t errlen);
void sym_fab_mr_close(struct sym_fab_mr *mr);

/* Registers memory for one connection: with cfg.isolate, on a connection we
 * accepted, in that connection's own domain, so that its key reads nothing
 * through any other connection (on the tcp provider a read's key is looked up
 * in the domain of the endpoint it arrives on; on verbs, a protection domain
 * per connection does the same in the NIC). The registration stops working
 * when the connection is closed (the handle stays valid until
 * sym_fab_mr_close). Without isolation it is sym_fab_mr_reg. Reads *from*
 * such a connection need a local registration made for it too. */
int sym_fab_mr_reg_conn(struct sym_fab_conn *c, void *buf, size_t len, unsigned access, struct sym_fab_mr **out,
			char *err, size_t errlen);

/* What a peer needs to read p (inside mr): the key, and the address to pass
 * to its read: p itself with FI_MR_VIRT_ADDR, else p's offset in mr. */
uint64_t sym_fab_mr_key(const struct sym_fab_mr *mr);
uint64_t sym_fab_mr_addr(const struct sym_fab_mr *mr, const void *p);

/* Reads len bytes at the peer's (raddr, rkey) into local (inside local_mr,
 * registered with SYM_FAB_LOCAL_READ_TARGET). A SYM_FAB_READ event with ctx
 * follows. Returns 0, or -ENOTCONN, -ENOBUFS (tx_depth sends and reads
 * still in flight after 200 ms, as for sym_fab_send), -EINVAL (len 0, or
 * local outside local_mr), or another -errno. */
int sym_fab_read(struct sym_fab_conn *c, void *local, size_t len, struct sym_fab_mr *local_mr, uint64_t raddr,
		 uint64_t rkey, void *ctx);

/* Progresses every connection and returns up to max events (0: none now),
 * or -errno on a fabric-wide failure. Never blocks. */
int sym_fab_poll(struct sym_fab *f, struct sym_fab_event *ev, int max);

/* A file descriptor that becomes readable when sym_fab_poll may have work,
 * for the caller's epoll set. Before blocking on it call sym_fab_trywait:
 * false means work is pending (poll instead of blocking). -1 when the
 * provider has no wait fds (then trywait is always false). */
int sym_fab_fd(const struct sym_fab *f);
bool sym_fab_trywait(struct sym_fab *f);

/* Blocks until sym_fab_poll may have work, or timeout_ms passes (-1: no
 * limit). Returns 0 (also on a spurious or early wake-up: call sym_fab_poll
 * and wait again), or -errno. Without wait fds from the provider
 * (sym_fab_fd is -1) it sleeps at most 1 ms. */
int sym_fab_wait(struct sym_fab *f, int timeout_ms);

/* Peers refused so far (every class), and why the last one was (into
 * last, "" before any); sym_fab_refusals gives the count of each class
 * (counts[SYM_FAB_REFUSE_N]). */
uint64_t sym_fab_refused(const struct sym_fab *f, char *last, size_t len);
void sym_fab_refusals(const struct sym_fab *f, uint64_t counts[SYM_FAB_REFUSE_N]);

/* Progresses the completion queue until every send posted on every
 * connection has completed (handed to the provider's transport), or
 * timeout_ms pass: what a process calls before it closes, so that its last
 * messages are not dropped with the endpoints. Returns 0 or -ETIMEDOUT. */
int sym_fab_flush(struct sym_fab *f, int timeout_ms);

/* Shuts conn down and frees it (its pending reads end with no event, and
 * its queued events are dropped). Events already returned by the current
 * sym_fab_poll that name conn (and their data) must not be used after. */
void sym_fab_close(struct sym_fab_conn *c);

#endif
