/* cli/runtime.c - the runtime's commands: schedd, frontend, backend, loadgen,
 * profile, bench-sched and fabbench. Built into the module symphony-runtime.so
 * with the runtime (cli/rtmodule.c loads it); the cli_* helpers it calls are
 * the symphony executable's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli/cli.h"
#include "core/policy.h"
#include "runtime/auth.h"
#include "runtime/autoscaler.h"
#include "runtime/benchsched.h"
#include "runtime/cluster.h"
#include "runtime/fabbench.h"
#include "runtime/profiler.h"
#include "runtime/rt.h"

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
				 .json = cli_str(c, "json"), .quiet = cli_flag(c, "quiet"),
				 .verbose = cli_flag(c, "verbose"), .check = cli_flag(c, "check"),
				 .standby = schedd && cli_flag(c, "standby") };
	struct sym_cluster cl;
	char err[1024];
	int rc = load_cluster(c, &cl);
	if (!rc && sym_cluster_resolve(&cl, err, sizeof(err)))
		rc = cli_usage_error(c, "%s", err);
	bool needs_id = !strcmp(cmd, "frontend") || !strcmp(cmd, "backend");
	int nid = !strcmp(cmd, "frontend") ? cl.nfrontends : cl.backends_max;
	if (!rc && needs_id && (o.id < 0 || o.id >= nid))
		rc = cli_usage_error(c, "--id must be given, from 0 to %d (the cluster has %d %ss)", nid - 1, nid, cmd);
	if (!rc && !needs_id && o.id >= 0)
		rc = cli_usage_error(c, "--id is for frontends and backends, not %s", cmd);
	if (!rc && o.standby && !cl.has_standby)
		rc = cli_usage_error(c, "--standby needs a second scheduler address: \"schedd\": [\"HOST:PORT\", \"HOST:PORT\"] "
				     "(or --schedd ACTIVE,STANDBY)");
	if (!rc && o.json && needs_id)
		rc = cli_usage_error(c, "--json is for schedd and loadgen, not %s", cmd);
	uint8_t secret[SYM_FAB_SECRET_BYTES];
	if (!rc && strcmp(cmd, "loadgen")) {
		/* clients are not fabric peers: everything else proves it holds the secret */
		if (!cl.secret_file[0])
			rc = cli_usage_error(c, "the cluster names no secret: create one with `symphony keygen FILE` and "
					     "give it as runtime.secret_file in the cluster file or --secret-file FILE");
		else if (sym_secret_load(cl.secret_file, secret, err, sizeof(err)))
			rc = cli_usage_error(c, "%s", err);
		o.secret = secret;
	}
	if (!rc && o.check)
		printf("%s: the configuration is valid (%zu models, %d frontends, %d backends, schedd at %s:%s)\n", cmd,
		       cl.exp.nmodels, cl.nfrontends, cl.nbackends, cl.schedd.host, cl.schedd.port);
	else if (!rc)
		rc = sym_rt_run(&cl, &o);
	sym_cluster_finish(&cl);
	sodium_memzero(secret, sizeof(secret));
	return rc;
}

static int cmd_keygen(struct cli *c)
{
	char err[1200];
	const char *path = c->args[0];
	if (!strcmp(path, "-"))
		return cli_usage_error(c, "name the file to write the secret to: symphony keygen FILE");
	if (sym_secret_generate(path, err, sizeof(err)))
		return cli_fail(c, 1, "%s", err);
	if (!cli_flag(c, "quiet"))
		fprintf(stderr, "keygen: wrote a new cluster secret to %s (mode 0600); give every schedd, frontend "
			"and backend a copy, readable by its user only\n", path);
	return 0;
}

static int cmd_profile(struct cli *c)
{
	struct sym_profiler_cmd o = { .model = cli_str(c, "model"), .batches = cli_str(c, "batches"),
				      .out = cli_str(c, "out"), .table_out = cli_str(c, "table-out"),
				      .json = cli_str(c, "json"), .repeats = (int)cli_int(c, "repeats"),
				      .warmup = (int)cli_int(c, "warmup"), .quiet = cli_flag(c, "quiet") };
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
				cli_str(c, "json"));
}

/* symphony autoscale: schedd's /metrics URL from the cluster file unless given. */
static int cmd_autoscale(struct cli *c)
{
	if (!cli_given(c, "add-cmd") || !cli_given(c, "remove-cmd"))
		return cli_usage_error(c, "give both --add-cmd and --remove-cmd (the shell commands that start and stop "
				       "backend $SYMPHONY_BACKEND_ID)");
	struct sym_cluster cl;
	char err[1024], url[600], port[16];
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
		.interval_s = cli_num(c, "interval"), .duration_s = cli_num(c, "duration"),
		.cmd_timeout_s = cli_num(c, "cmd-timeout"), .quiet = cli_flag(c, "quiet"),
		.cfg = { .cooldown_s = cli_num(c, "cooldown"), .min_backends = (int)cli_int(c, "min"), .max_backends = max,
			 .start_timeout_s = cli_num(c, "start-timeout"), .release_fraction = cli_num(c, "release-fraction") },
	};
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
