/* cli/info.c - symphony models, policies, help and version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "core/build.h"
#include "core/policy.h"
#include "core/profile.h"
#include "experiment/output.h"
#include "profiles/zoo.h"
#include "sym_version.h"

/* A zoo model's largest batch and where it comes from: what the profile
 * declares (max_batch, or its table's length) wins; else the SLO's limit;
 * 0 when neither is known. */
static int model_max_batch(const struct sym_model_spec *m, const char **from)
{
	if (m->table_ms)
		return *from = "table", m->ntable;
	if (m->max_batch)
		return *from = "profile", m->max_batch;
	if (m->slo_ms > 0)
		return *from = "slo", sym_profile_linear_batch_limit(m->alpha_ms, m->beta_ms, m->slo_ms);
	return *from = "unknown", 0;
}

static int print_json(const struct cli *c, cJSON *doc)
{
	char err[512];
	int rc = doc ? sym_write_json("-", doc, err, sizeof(err)) : -1;
	cJSON_Delete(doc);
	return rc ? cli_fail(c, 1, "%s", doc ? err : "out of memory") : 0;
}

int cli_cmd_models(struct cli *c)
{
	const char *zoo = cli_str(c, "zoo");
	struct sym_zoo z;
	char err[1024];
	if (sym_zoo_load(zoo, &z, err, sizeof(err)))
		return cli_usage_error(c, "%s", err);
	if (cli_flag(c, "json")) {
		cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "models");
		cJSON_AddStringToObject(doc, "zoo", zoo);
		cJSON_AddStringToObject(doc, "gpu", z.gpu);
		for (size_t i = 0; i < z.n; i++) {
			const char *from;
			int b = model_max_batch(&z.models[i], &from);
			cJSON *o = sym_model_spec_to_json(&z.models[i]);
			cJSON_AddNumberToObject(o, "largest_batch", b);
			cJSON_AddStringToObject(o, "largest_batch_from", from);
			cJSON_AddItemToArray(arr, o);
		}
		sym_zoo_finish(&z);
		return print_json(c, doc);
	}
	printf("zoo %s (%s): %zu models\n%-22s %9s %9s %8s %9s\n", zoo, z.gpu, z.n, "model", "alpha ms", "beta ms",
	       "SLO ms", "max batch");
	for (size_t i = 0; i < z.n; i++) {
		const struct sym_model_spec *m = &z.models[i];
		const char *from;
		int b = model_max_batch(m, &from);
		char mb[32];
		snprintf(mb, sizeof(mb), b ? "%d" : "-", b);
		printf("%-22s %9.3f %9.3f %8g %9s%s\n", m->name, m->alpha_ms, m->beta_ms, m->slo_ms, mb,
		       !strcmp(from, "profile") ? " (declared)" : "");
	}
	sym_zoo_finish(&z);
	return 0;
}

int cli_cmd_policies(struct cli *c)
{
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	char line[512];
	if (cli_flag(c, "json")) {
		cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "policies");
		for (size_t i = 0; i < n; i++) {
			struct sym_policy pol;
			bool sched = !sym_policy_parse(sym_policy_ops_name(list[i]), &pol, line, sizeof(line)) &&
				     sym_policy_is_scheduler(&pol);
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", sym_policy_ops_name(list[i]));
			cJSON_AddStringToObject(o, "kind", sched ? "scheduler" : "candidate");
			cJSON_AddStringToObject(o, "summary", sym_policy_ops_summary(list[i]));
			cJSON *params = cJSON_AddArrayToObject(o, "parameters");
			for (size_t j = 0; sym_policy_help_line(list[i], j, line, sizeof(line)); j++)
				cJSON_AddItemToArray(params, cJSON_CreateString(line));
			cJSON_AddItemToArray(arr, o);
		}
		return print_json(c, doc);
	}
	for (size_t i = 0; i < n; i++) {
		printf("%-11s %s\n", sym_policy_ops_name(list[i]), sym_policy_ops_summary(list[i]));
		for (size_t j = 0; sym_policy_help_line(list[i], j, line, sizeof(line)); j++)
			printf("%-11s   %s\n", "", line);
	}
	return 0;
}

int cli_cmd_help(struct cli *c)
{
	if (cli_flag(c, "markdown")) {
		cli_print_markdown(stdout);
		return 0;
	}
	if (!c->nargs) {
		cli_print_usage(stdout);
		return 0;
	}
	if (!strcmp(c->args[0], "config")) {
		cli_print_config_help(stdout);
		return 0;
	}
	const struct cli_cmd *cmd = cli_find(c->args[0]);
	if (!cmd)
		return cli_usage_error(c, "no help on '%s' (try: symphony help)", c->args[0]);
	cli_print_help(stdout, cmd);
	return 0;
}

int cli_cmd_version(struct cli *c)
{
	(void)c;
	printf("symphony %s (commit %s, %s build)\n", SYM_VERSION, sym_build_commit(), SYM_BUILD_TYPE);
	return 0;
}
