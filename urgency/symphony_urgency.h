/* symphony_urgency.h - the urgency scheduler's application API
 * (libsymphony-urgency; urgency-scheduler.md, Section III and Table I).
 *
 * Client-server applications that share a cluster of CPU+GPU nodes link
 * this library and make four calls:
 *
 *   sym_urg_register     newAppRegistration: response time, average load,
 *                        node list, nodes per request, consolidation limit
 *   sym_urg_notify       newRequestNotification: a client request arrived
 *                        (its data size)
 *   sym_urg_can_issue    canIssueRequests: may this application issue now?
 *                        if so, how many requests, under which id, on which
 *                        nodes and resources
 *   sym_urg_complete     requestComplete: the set issued under an id is done
 *
 * The scheduler runs in the caller's process on the monotonic clock (or a
 * clock the caller gives, for tests). Its decision is the paper's
 * Algorithm 1 with the metric of core/urgency.h, the same functions the
 * simulator's `urgency` policy uses: for every application A with pending
 * requests and every resource kind R (CPU, GPU) that is available to it (at
 * least num_nodes of its nodes have a free unit of R),
 *
 *   slack_A,R = DL_head - (now + EPT_A,R(s))   (s: the summed size of the set it would issue)
 *   U_A,R     = -slack^p (default p = 3), -slack or 2^-slack, times L_A = n_A / navg_A
 *   U_A       = min over R of |U_A,R|          (Eq. 5; signed_app: the largest signed U_A,R)
 *
 * with navg_A = max(1, the registered average load), and EPT_A,R from the
 * history table of A's completed sets on R (time from issue to completion
 * against their summed size, fitted as a line once min_samples sets of two
 * sizes or more are in; 0 before, as the paper assumes). The application
 * with the highest U_A (ties: the earlier head deadline, then the lower
 * id) issues min(consolidate, n_A) requests, oldest first (never reordered
 * within an application), to the resource on which its urgency is lowest
 * (ties: the GPU), on the num_nodes least loaded of its nodes with that
 * resource free (load: busy units on the node; ties: the lower node).
 *
 * sym_urg_can_issue(A) answers true only when that decision names A: the
 * scheduler "directs the highest priority application to issue". The
 * resources it grants stay busy until sym_urg_complete. Requests are not
 * dropped: a request whose deadline passed is still issued (the
 * application counts it as a miss; sym_urg_stats counts them too).
 *
 * Thread safety: every call may come from any thread (an application's
 * notifying thread and its issuing thread at once); one mutex serialises
 * them. No call blocks beyond that mutex.
 *
 * Errors: calls return 0 (or an id) or a negative errno: -EINVAL for bad
 * arguments (the message in err where the call has one), -ENOENT for an
 * unknown application or set id, -ENOMEM.
 */
#ifndef SYMPHONY_URGENCY_H
#define SYMPHONY_URGENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SYM_URG_CPU = 0, SYM_URG_GPU = 1, SYM_URG_NRES = 2 };

#define SYM_URG_MAX_NODES 4096
#define SYM_URG_MAX_APPS 1024

struct sym_urg_config {
	int nodes;          /* cluster nodes, 1..SYM_URG_MAX_NODES */
	int cpus_per_node;  /* CPU units a node can run at once (>= 0) */
	int gpus_per_node;  /* GPUs per node (>= 0; cpus + gpus >= 1) */
	/* the urgency function: "power" (default), "linear" or "exp"; p for power (default 3) */
	const char *shape;
	double p;
	bool monotone;      /* U / L instead of U * L while U < 0 (the policy's load=monotone); default false:
			     * U * L as published, under which a more loaded application is less urgent while
			     * its slack is positive (docs/policies.md) */
	bool signed_app;    /* rank applications by their largest signed U_A,R instead of Eq. 5's smallest
			     * |U_A,R| (the policy's app=signed); default false: Eq. 5 as printed, under which
			     * an application with more slack counts as more urgent while U < 0 (power and
			     * linear shapes; docs/urgency-api.md) */
	int min_samples;    /* history samples before EPT is fitted (default 8; 2..64) */
	/* the clock (ms, never decreasing), or NULL: CLOCK_MONOTONIC */
	double (*clock_ms)(void *ctx);
	void *clock_ctx;
};

struct sym_urg;

/* A scheduler for cfg's cluster, or NULL with a message in err. */
struct sym_urg *sym_urg_create(const struct sym_urg_config *cfg, char *err, size_t errlen);
void sym_urg_destroy(struct sym_urg *u);

/* newAppRegistration. response_time_ms > 0: each request's deadline is its
 * notification time plus this; average_load >= 0 requests/s (navg);
 * nodelist: nodelist_size distinct nodes (0..nodes-1) that hold the
 * application's data; num_nodes (1..nodelist_size) nodes process one
 * request; consolidate >= 1 requests may be issued together. Returns the
 * application's id (>= 0) or -EINVAL (err says why) / -ENOMEM. */
int sym_urg_register(struct sym_urg *u, double response_time_ms, double average_load, const int *nodelist,
		     int nodelist_size, int num_nodes, int consolidate, char *err, size_t errlen);

/* newRequestNotification: a request of application app with `size` (> 0,
 * the application's unit: bytes, items) arrived now. 0, -ENOENT, -EINVAL
 * or -ENOMEM. */
int sym_urg_notify(struct sym_urg *u, int app, double size);

/* canIssueRequests: true when app may issue now. Then *num_reqs is how many
 * of its oldest pending requests to issue together, *id the set's id (for
 * sym_urg_complete), nodes[0..num_nodes) the nodes to use (nodes must hold
 * num_nodes entries; the registration's num_nodes), and resources[i] the
 * resource on nodes[i] (SYM_URG_CPU or SYM_URG_GPU; the same for all). false
 * for an unknown app. */
bool sym_urg_can_issue(struct sym_urg *u, int app, int *num_reqs, uint64_t *id, int *nodes, int *resources);

/* requestComplete: the set issued under id is done; its resources are
 * free and its time goes into the history table. 0 or -ENOENT (an id not
 * issued, or completed already). */
int sym_urg_complete(struct sym_urg *u, uint64_t id);

/* What the scheduler counted for one application. */
struct sym_urg_stats {
	uint64_t notified, issued, completed, late; /* late: completed after its deadline */
	int pending;
	double ept_ms[SYM_URG_NRES];  /* the current estimate for a set of size 1 on each resource */
	bool fitted[SYM_URG_NRES];
};

/* 0 or -ENOENT. */
int sym_urg_stats(struct sym_urg *u, int app, struct sym_urg_stats *out);

/* EPT_A,R(size): the history table's estimate (ms) for a set of this summed
 * size of app on resource res (0 before the fit). -1 for a bad app or res. */
double sym_urg_estimate(struct sym_urg *u, int app, int res, double size);

#ifdef __cplusplus
}
#endif

#endif
