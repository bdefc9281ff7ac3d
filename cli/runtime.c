/* cli/runtime.c - the runtime's commands: schedd, frontend, backend, loadgen,
 * profile, bench-sched and fabbench. Built into the module symphony-runtime.so
 * with the runtime (cli/rtmodule.c loads it); the cli_* helpers it calls are
 * the symphony executable's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/cli.h"
#include "core/policy.h"
#include "runtime/auth.h"
#include "runtime/autoscaler.h"
#include "runtime/benchsched.h"
#include "runtime/cluster.h"
#include "runtime/cred.h"
#include "runtime/fabbench.h"
#include "runtime/profiler.h"
#include "runtime/run.h"

/* The cluster of a CLI_CLUSTER command: the file (the first positional
 * argument, "-": standard input), then the flags in order. c is
 * initialised; finish it whatever the result. */
static int load_cluster(const struct cli *c, struct sym_cluster *cl)
{
	char err[1024];
	if (sym_cluster_init(cl))
		return cli_fail(c, 1, "out of memory");
	const char *path = cli_config_path(c);
	if (path && sym_cluster_load_file(cl, path, err, sizeof(err)))
		return cli_usage_error(c, "%s", err);
	for (size_t i = 0; i < c->nflags; i++) {
		int rc = sym_cluster_apply_flag(cl, c->flag_name[i], c->flag_val[i], err, sizeof(err));
		if (rc == 1)
			return cli_usage_error(c, "unknown option '--%s' (see symphony help %s)", c->flag_name[i],
					       c->cmd->name);
		if (rc)
			return cli_usage_error(c, "%s", err);
	}
	return 0;
}

static int cmd_process(struct cli *c)
{
	const char *cmd = c->cmd->name;
	bool schedd = !strcmp(cmd, "schedd");
	struct sym_rt_opts o = { .cmd = cmd, .id = !schedd && cli_given(c, "id") ? (int)cli_int(c, "id") : -1,
				 .subcluster = !strcmp(cmd, "backend") && cli_given(c, "subcluster") ?
						       (int)cli_int(c, "subcluster") : -1,
				 .json = cli_str(c, "json"), .quiet = cli_flag(c, "quiet"),
				 .verbose = cli_flag(c, "verbose"), .check = cli_flag(c, "check"),
				 .standby = schedd && cli_flag(c, "standby"), .config_path = cli_config_path(c),
				 .flag_name = c->flag_name, .flag_val = c->flag_val, .nflags = c->nflags };
	struct sym_cluster cl;
	char err[1024];
	sym_rt_log_setup(cli_str(c, "log-format"), cli_str(c, "log-level"), err, sizeof(err)); /* (cli checked them) */
	sym_rt_log_identity(cmd, o.id);
	int rc = load_cluster(c, &cl);
	if (!strcmp(cmd, "loadgen"))
		cl.repository_slots = 0; /* its load is over the models served from the start (the slots follow them) */
	if (!rc && sym_cluster_resolve(&cl, err, sizeof(err)))
		rc = cli_usage_error(c, "%s", err);
	bool needs_id = !strcmp(cmd, "frontend") || !strcmp(cmd, "backend");
	int nid = !strcmp(cmd, "frontend") ? cl.nfrontends : cl.backends_max;
	if (!rc && needs_id && (o.id < 0 || o.id >= nid))
		rc = cli_usage_error(c, "--id must be given, from 0 to %d (the cluster has %d %ss)", nid - 1, nid, cmd);
	if (!rc && !needs_id && o.id >= 0)
		rc = cli_usage_error(c, "--id is for frontends and backends, not %s", cmd);
	const char *env_part = getenv("SYMPHONY_SUBCLUSTER");
	if (!rc && !strcmp(cmd, "backend") && !cli_given(c, "subcluster") && env_part && env_part[0]) {
		/* (the environment of `symphony autoscale`'s add command, or a unit's EnvironmentFile) */
		char *end;
		long v = strtol(env_part, &end, 10);
		if (*end || v < 0 || v > 31)
			rc = cli_usage_error(c, "SYMPHONY_SUBCLUSTER='%s' in the environment: a sub-cluster from 0 to 31 "
					     "(or unset)", env_part);
		else
			o.subcluster = (int)v;
	}
	int nsub = cl.exp.partition.subclusters;
	if (!rc && o.subcluster >= (nsub ? nsub : 1))
		rc = cli_usage_error(c, "sub-cluster %d (%s): the cluster has %d%s", o.subcluster,
				     cli_given(c, "subcluster") ? "--subcluster" : "SYMPHONY_SUBCLUSTER", nsub ? nsub : 1,
				     nsub ? "" : " (no partition: the whole cluster is sub-cluster 0)");
	if (!nsub)
		o.subcluster = -1; /* (0: the whole cluster, the autoscaler's one part) */
	if (!rc && o.standby && !cl.has_standby)
		rc = cli_usage_error(c, "--standby needs a second scheduler address: \"schedd\": [\"HOST:PORT\", \"HOST:PORT\"] "
				     "(or --schedd ACTIVE,STANDBY)");
	if (!rc && o.json && needs_id)
		rc = cli_usage_error(c, "--json is for schedd and loadgen, not %s", cmd);
	struct sym_cred cred;
	struct sym_revoked revoked = { 0 };
	char revoked_path[1100] = "";
	memset(&cred, 0, sizeof(cred));
	if (!rc && strcmp(cmd, "loadgen")) {
		/* clients are not fabric peers: every member proves its role and id */
		int role = schedd ? SYM_CRED_SCHEDD : !strcmp(cmd, "frontend") ? SYM_CRED_FRONTEND : SYM_CRED_BACKEND;
		uint32_t id = schedd ? (o.standby ? 1u : 0u) : (uint32_t)o.id;
		char path[1100], ca[1100];
		uint8_t ca_pk[SYM_CRED_PK];
		if (!cl.keys_dir[0])
			rc = cli_usage_error(c, "the cluster names no keys: make them with `symphony keygen cluster DIR "
					     "--frontends %d --backends %d%s` and give runtime.keys_dir in the cluster file or "
					     "--keys-dir DIR", cl.nfrontends, cl.backends_max, cl.has_standby ? " --standby" : "");
		if (!rc) {
			snprintf(ca, sizeof(ca), "%s/ca.pub", cl.keys_dir);
			if (cl.credential[0])
				snprintf(path, sizeof(path), "%s", cl.credential);
			else
				sym_cred_path(cl.keys_dir, role, id, path, sizeof(path));
			snprintf(revoked_path, sizeof(revoked_path), "%s/revoked.json", cl.keys_dir);
			if (sym_ca_load(ca, ca_pk, err, sizeof(err)) || sym_cred_load(path, ca_pk, &cred, err, sizeof(err)) ||
			    sym_revoked_load(revoked_path, true, &revoked, err, sizeof(err)))
				rc = cli_usage_error(c, "%s", err);
		}
		if (!rc && (cred.role != role || cred.id != id))
			rc = cli_usage_error(c, "%s holds the credential of %s %u, not of %s %u", path,
					     sym_cred_role_name(cred.role), cred.id, sym_cred_role_name(role), id);
		if (!rc && sym_revoked_has(&revoked, cred.serial))
			rc = cli_usage_error(c, "%s: its serial %llu is revoked (%s); issue a new one (symphony keygen issue "
					     "--replace)", path, (unsigned long long)cred.serial, revoked_path);
		o.cred = &cred;
		o.revoked = &revoked;
		o.revoked_path = revoked_path;
	}
	if (!rc && o.check)
		printf("%s: the configuration is valid (%zu models, %d frontends, %d backends, schedd at %s:%s)\n", cmd,
		       cl.exp.slot0, cl.nfrontends, cl.nbackends, cl.schedd.host, cl.schedd.port);
	else if (!rc) {
		sym_rt_set_revocation(revoked_path);
		rc = sym_rt_run(&cl, &o);
	}
	sym_cluster_finish(&cl);
	sodium_memzero(&cred, sizeof(cred));
	sym_revoked_free(&revoked);
	return rc;
}

/* symphony keygen ACTION DIR [ROLE ID | SERIAL] (cli/commands.c says what each does). */
static int cmd_keygen(struct cli *c)
{
	char err[1400], path[1100];
	const char *action = c->args[0], *dir = c->args[1];
	bool quiet = cli_flag(c, "quiet");
	int n = c->nargs;
	if (!strcmp(action, "ca") || !strcmp(action, "list") || !strcmp(action, "cluster")) {
		if (n != 2)
			return cli_usage_error(c, "keygen %s takes DIR only", action);
	} else if (!strcmp(action, "issue")) {
		if (n != 4)
			return cli_usage_error(c, "keygen issue takes DIR ROLE ID (e.g. keygen issue keys backend 4)");
	} else if (!strcmp(action, "revoke")) {
		if (n != 3)
			return cli_usage_error(c, "keygen revoke takes DIR SERIAL or DIR ROLE-ID (e.g. backend-4)");
	} else {
		return cli_usage_error(c, "unknown action '%s': cluster, ca, issue, revoke or list (the shared "
				       "secret of `symphony keygen FILE` is gone: members have credentials of their own)",
				       action);
	}
	if (!strcmp(action, "list"))
		return sym_ca_list(dir, err, sizeof(err)) ? cli_fail(c, 1, "%s", err) : 0;
	if (!strcmp(action, "ca") || !strcmp(action, "cluster")) {
		char key[1100];
		snprintf(key, sizeof(key), "%s/ca.key", dir);
		bool have = !strcmp(action, "cluster") && access(key, F_OK) == 0;
		if (!have && sym_ca_create(dir, err, sizeof(err)))
			return cli_fail(c, 1, "%s", err);
		if (!quiet && !have)
			fprintf(stderr, "keygen: a new CA in %s (ca.key: keep it to yourself; ca.pub: every member)\n", dir);
		if (!strcmp(action, "ca"))
			return 0;
		long nfe = cli_int(c, "frontends"), nbe = cli_int(c, "backends");
		int made = 0;
		for (long k = 0; k < 2 + nfe + nbe; k++) {
			int role = k < 2 ? SYM_CRED_SCHEDD : k < 2 + nfe ? SYM_CRED_FRONTEND : SYM_CRED_BACKEND;
			uint32_t id = (uint32_t)(k < 2 ? k : k < 2 + nfe ? k - 2 : k - 2 - nfe);
			if (k == 1 && !cli_flag(c, "standby"))
				continue;
			sym_cred_path(dir, role, id, path, sizeof(path));
			if (access(path, F_OK) == 0)
				continue;
			if (sym_ca_issue(dir, role, id, false, NULL, NULL, 0, err, sizeof(err)))
				return cli_fail(c, 1, "%s", err);
			made++;
		}
		if (!quiet)
			fprintf(stderr, "keygen: %d new credential%s in %s (symphony keygen list %s)\n", made,
				made == 1 ? "" : "s", dir, dir);
		return 0;
	}
	if (!strcmp(action, "issue")) {
		int role = sym_cred_role_of(c->args[2]);
		char *end;
		unsigned long id = strtoul(c->args[3], &end, 10);
		if (!role)
			return cli_usage_error(c, "unknown role '%s': schedd, frontend or backend", c->args[2]);
		if (*end || end == c->args[3] || id > 65535 || c->args[3][0] == '-')
			return cli_usage_error(c, "expected an id 0..65535, got '%s'", c->args[3]);
		uint64_t serial;
		if (sym_ca_issue(dir, role, (uint32_t)id, cli_flag(c, "replace"), &serial, path, sizeof(path), err,
				 sizeof(err)))
			return cli_fail(c, 1, "%s", err);
		if (!quiet)
			fprintf(stderr, "keygen: %s %lu, serial %llu: %s (mode 0600: give it to that member only)\n",
				c->args[2], id, (unsigned long long)serial, path);
		return 0;
	}
	/* revoke SERIAL, or ROLE-ID: every serial issued to that member */
	const char *what = c->args[2];
	char *end;
	unsigned long long serial = strtoull(what, &end, 10);
	if (*end || end == what || what[0] == '-') {
		const char *dash = strrchr(what, '-');
		char rname[16];
		size_t rl = dash ? (size_t)(dash - what) : 0;
		if (!dash || rl >= sizeof(rname))
			return cli_usage_error(c, "expected a serial or ROLE-ID (e.g. backend-4), got '%s'", what);
		memcpy(rname, what, rl);
		rname[rl] = '\0';
		int role = sym_cred_role_of(rname);
		unsigned long id = strtoul(dash + 1, &end, 10);
		if (!role || *end || end == dash + 1)
			return cli_usage_error(c, "expected a serial or ROLE-ID (e.g. backend-4), got '%s'", what);
		uint64_t serials[256];
		size_t ns = 0;
		if (sym_ca_serials_of(dir, role, (uint32_t)id, serials, 256, &ns, err, sizeof(err)))
			return cli_fail(c, 1, "%s", err);
		if (!ns)
			return cli_fail(c, 1, "the CA in %s issued nothing to %s", dir, what);
		for (size_t i = 0; i < ns; i++)
			if (sym_ca_revoke(dir, serials[i], err, sizeof(err)))
				return cli_fail(c, 1, "%s", err);
		if (!quiet)
			fprintf(stderr, "keygen: %s revoked (%zu serial%s) in %s/revoked.json: copy it to the members and "
				"send them SIGHUP\n", what, ns, ns == 1 ? "" : "s", dir);
		return 0;
	}
	if (sym_ca_revoke(dir, serial, err, sizeof(err)))
		return cli_fail(c, 1, "%s", err);
	if (!quiet)
		fprintf(stderr, "keygen: serial %llu revoked in %s/revoked.json: copy it to the members and send them "
			"SIGHUP\n", serial, dir);
	return 0;
}

static int cmd_profile(struct cli *c)
{
	struct sym_profiler_cmd o = { .model = cli_str(c, "model"), .batches = cli_str(c, "batches"),
				      .out = cli_str(c, "out"), .table_out = cli_str(c, "table-out"),
				      .json = cli_str(c, "json"), .repeats = (int)cli_int(c, "repeats"),
				      .warmup = (int)cli_int(c, "warmup"), .quiet = cli_flag(c, "quiet"),
				      .write = cli_flag(c, "write") };
	struct sym_cluster cl;
	int rc = load_cluster(c, &cl);
	if (!rc)
		rc = sym_profiler_run(&cl, &o);
	sym_cluster_finish(&cl);
	return rc;
}

/* --threads LIST: thread counts 1 to 64, comma-separated. */
static int parse_threads(const struct cli *c, struct sym_benchsched_opts *o)
{
	const char *val = cli_str(c, "threads"), *p = val;
	o->nthreads = 0;
	for (;;) {
		char *end;
		long t = strtol(p, &end, 10);
		if (end == p || (*end && *end != ',') || t < 1 || t > 64)
			return cli_usage_error(c, "--threads: expected thread counts from 1 to 64, comma-separated, got '%s'",
					       val);
		if (o->nthreads == SYM_BENCHSCHED_MAX_THREAD_COUNTS)
			return cli_usage_error(c, "--threads: at most %d thread counts", SYM_BENCHSCHED_MAX_THREAD_COUNTS);
		o->threads[o->nthreads++] = (int)t;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

static int cmd_bench_sched(struct cli *c)
{
	struct sym_benchsched_opts o = {
		.models = (int)cli_int(c, "models"), .gpus = (int)cli_int(c, "gpus"), .alpha_ms = cli_num(c, "alpha"),
		.beta_ms = cli_num(c, "beta"), .slo_ms = cli_num(c, "slo"), .ctrl_us = cli_num(c, "ctrl"),
		.max_batch = (int)cli_int(c, "max-batch"), .duration_s = cli_num(c, "duration"),
		.poisson = !strcmp(cli_str(c, "arrivals"), "poisson"), .start_rate = cli_num(c, "start-rate"),
		.max_rate = cli_num(c, "max-rate"), .precision = cli_num(c, "precision"),
		.late_limit_us = cli_num(c, "late-limit"), .lag_limit_us = cli_num(c, "lag-limit"),
		.max_drop = cli_num(c, "max-drop"), .retries = (int)cli_int(c, "retries"),
		.seed = strtoull(cli_str(c, "seed"), NULL, 10), .json = cli_str(c, "json"), .quiet = cli_flag(c, "quiet"),
	};
	if (strlen(cli_str(c, "policy")) >= sizeof(o.policy))
		return cli_usage_error(c, "--policy: too long");
	snprintf(o.policy, sizeof(o.policy), "%s", cli_str(c, "policy"));
	int rc = parse_threads(c, &o);
	return rc ? rc : sym_benchsched_run(&o);
}

static int cmd_fabbench(struct cli *c)
{
	return sym_fabbench_run(cli_str(c, "provider"), cli_int(c, "iters"), (size_t)cli_int(c, "size"),
				strcmp(cli_str(c, "auth"), "off") != 0, cli_str(c, "json"));
}

/* symphony autoscale: schedd's /metrics URL from the cluster file unless given. */
static int cmd_autoscale(struct cli *c)
{
	if (!cli_given(c, "add-cmd") || !cli_given(c, "remove-cmd"))
		return cli_usage_error(c, "give both --add-cmd and --remove-cmd (the shell commands that start and stop "
				       "backend $SYMPHONY_BACKEND_ID)");
	struct sym_cluster cl;
	char err[1024], url[600], port[16];
	sym_rt_log_setup(cli_str(c, "log-format"), cli_str(c, "log-level"), err, sizeof(err)); /* (cli checked them) */
	sym_rt_log_identity("autoscaler", -1);
	int rc = load_cluster(c, &cl);
	if (!rc && sym_cluster_resolve(&cl, err, sizeof(err)))
		rc = cli_usage_error(c, "%s", err);
	const char *p = NULL;
	if (!rc && !cli_given(c, "url")) {
		p = sym_cluster_metrics_port(&cl, SYM_ROLE_SCHEDD, 0, port, sizeof(port));
		if (!p)
			p = sym_cluster_http_port(&cl, SYM_ROLE_SCHEDD, 0, port, sizeof(port));
		if (!p)
			rc = cli_usage_error(c, "the cluster gives schedd no HTTP or metrics port: set http_base or "
					     "metrics_base, or give --url");
		else
			snprintf(url, sizeof(url), "%s://%s:%s/metrics", cl.http_tls_cert[0] ? "https" : "http",
				 cl.schedd.host, p);
	}
	int max = (int)cli_int(c, "max");
	if (!rc && max == 0)
		max = cl.backends_max;
	if (!rc && cli_int(c, "min") > max)
		rc = cli_usage_error(c, "--min %ld is above --max %d", cli_int(c, "min"), max);
	struct sym_ctl_opts o = {
		.url = cli_given(c, "url") ? cli_str(c, "url") : url,
		.cacert = cli_given(c, "cacert") ? cli_str(c, "cacert") : cl.http_tls_cert[0] ? cl.http_tls_cert : NULL,
		.add_cmd = cli_str(c, "add-cmd"), .remove_cmd = cli_str(c, "remove-cmd"),
		.duration_s = cli_num(c, "duration"),
		.cmd_timeout_s = cli_num(c, "cmd-timeout"), .quiet = cli_flag(c, "quiet"),
		.cfg = { .scale = { .interval_s = cli_num(c, "interval"), .target = cli_num(c, "target"), .release_fraction = cli_num(c, "release-fraction"),
				   .min_gpus = (int)cli_int(c, "min"), .max_gpus = max, .cooldown_s = cli_num(c, "cooldown") },
			 .start_timeout_s = cli_num(c, "start-timeout") },
	};
	if (sym_scale_rule_parse(cli_str(c, "rule"), &o.cfg.scale.rule))
		rc = cli_usage_error(c, "--rule: %s", cli_str(c, "rule")); /* (cli checked the choices) */
	if (!rc)
		rc = sym_ctl_run(&o);
	sym_cluster_finish(&cl);
	return rc;
}

int cli_runtime_main(struct cli *c)
{
	const char *cmd = c->cmd->name;
	if (!strcmp(cmd, "autoscale"))
		return cmd_autoscale(c);
	if (!strcmp(cmd, "profile"))
		return cmd_profile(c);
	if (!strcmp(cmd, "bench-sched"))
		return cmd_bench_sched(c);
	if (!strcmp(cmd, "fabbench"))
		return cmd_fabbench(c);
	if (!strcmp(cmd, "keygen"))
		return cmd_keygen(c);
	return cmd_process(c);
}
