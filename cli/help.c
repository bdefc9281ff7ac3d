/* cli/help.c - help and the reference, generated from the command table. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/policy.h"
#include "sym_version.h"
#if SYM_HAVE_RUNTIME
#include "runtime/cluster.h"
#endif

#define WIDTH 79
#define LEFT 30

static const char *const sections[] = { "simulator", "runtime", "information" };
static const char *const section_titles[] = {
	"simulator commands",
	"runtime commands (a real cluster on the monotonic clock)",
	"information",
};

/* Prints text wrapped at WIDTH, continuation lines indented by `indent`,
 * the first line starting at column `col`. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
	const char *p = text;
	while (*p) {
		size_t w = strcspn(p, " \n");
		if (col > indent && col + 1 + (int)w > WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	fputc('\n', f);
}

/* The paragraphs of a description: blank-line separated; a paragraph whose
 * lines start with two spaces is printed as it is (examples, JSON). */
static void paragraphs(FILE *f, const char *text, bool markdown)
{
	const char *p = text;
	while (*p) {
		const char *end = strstr(p, "\n\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *para = strndup(p, n);
		if (!para)
			return;
		if (!strncmp(para, "  ", 2))
			fprintf(f, markdown ? "```\n%s\n```\n" : "%s\n", para);
		else if (markdown)
			fprintf(f, "%s\n", para);
		else
			wrap(f, para, 0, 0);
		free(para);
		p += n;
		while (*p == '\n')
			p++;
		if (*p)
			fputc('\n', f);
	}
}

static void opt_left(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->shortname)
		snprintf(buf, len, "-%c, --%s%s%s", o->shortname, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	else
		snprintf(buf, len, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* The help of o, with its default unless the help already says it. */
static void opt_help(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->def && !strstr(o->help, "default"))
		snprintf(buf, len, "%s (default %s)", o->help, o->def);
	else
		snprintf(buf, len, "%s", o->help);
}

static void print_row(FILE *f, const char *left, const char *help)
{
	fprintf(f, "  %s", left);
	int col = 2 + (int)strlen(left);
	if (col >= LEFT) {
		fprintf(f, "\n%*s", LEFT, "");
	} else {
		fprintf(f, "%*s", LEFT - col, "");
	}
	wrap(f, help, LEFT, LEFT);
}

static void print_policies(FILE *f)
{
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	char line[512];
	for (size_t i = 0; i < n; i++) {
		print_row(f, sym_policy_ops_name(list[i]), sym_policy_ops_summary(list[i]));
		for (size_t j = 0; sym_policy_help_line(list[i], j, line, sizeof(line)); j++)
			print_row(f, "", line);
	}
}

void cli_print_usage(FILE *f)
{
	fprintf(f, "symphony %s - deferred batch scheduling for DNN inference on GPU clusters\n\n"
		   "usage: symphony COMMAND [ARGUMENTS] [OPTIONS]\n", SYM_VERSION);
	size_t n;
	const struct cli_cmd *cmds = cli_commands(&n);
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		fprintf(f, "\n%s:\n", section_titles[s]);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(cmds[i].section, sections[s]))
				fprintf(f, "  %-11s %s%s\n", cmds[i].name, cmds[i].summary,
					cmds[i].run ? "" : " (not in this build)");
	}
	fprintf(f, "\nsymphony help COMMAND (or symphony COMMAND --help) describes a command; symphony help config the\n"
		   "experiment file; docs/cli.md is the whole reference.\n\n"
		   "examples:\n"
		   "  symphony sim --profile 1.053,5.072 --slo 25 --gpus 8 --rate 5000 --arrival poisson\n"
		   "  symphony goodput --zoo a100 --models all --gpus 64 --policy eager --json -\n");
}

static void print_flag_table(FILE *f, bool (*at)(size_t, struct sym_flag_info *))
{
	struct sym_flag_info fi;
	for (size_t i = 0; at(i, &fi); i++) {
		char left[96];
		snprintf(left, sizeof(left), "--%s %s", fi.flag, fi.arg);
		print_row(f, left, fi.help);
	}
}

void cli_print_help(FILE *f, const struct cli_cmd *cmd)
{
	fprintf(f, "usage: symphony %s%s%s%s\n\n", cmd->name, cmd->args[0] ? " " : "", cmd->args,
		cmd->opts || cmd->groups ? " [OPTIONS]" : "");
	fprintf(f, "%s - %s\n\n", cmd->name, cmd->summary);
	if (!cmd->run)
		fprintf(f, "(Not in this build: the runtime needs %s.)\n\n", SYM_RUNTIME_MISSING);
	if (cmd->text) {
		paragraphs(f, cmd->text, false);
		fputc('\n', f);
	}
	if (cmd->opts && cmd->opts[0]) {
		fprintf(f, "options:\n");
		for (size_t i = 0; cmd->opts[i]; i++) {
			char left[96], help[1024];
			opt_left(cmd->opts[i], left, sizeof(left));
			opt_help(cmd->opts[i], help, sizeof(help));
			print_row(f, left, help);
		}
		print_row(f, "-h, --help", "this text");
	}
#if SYM_HAVE_RUNTIME
	if (cmd->groups & CLI_CLUSTER) {
		fprintf(f, "\ncluster (each also a key of the file's \"runtime\" object):\n");
		print_flag_table(f, sym_cluster_flag_at);
	}
#endif
	if (cmd->groups & (CLI_EXPERIMENT | CLI_CLUSTER)) {
		fprintf(f, "\nconfiguration (each also a key of the experiment file; see symphony help config):\n");
		print_flag_table(f, sym_experiment_flag_at);
		fprintf(f, "\npolicies (--policy NAME or NAME:key=value,...; symphony policies):\n");
		print_policies(f);
	}
	if (cmd->examples)
		fprintf(f, "\nexamples:\n%s", cmd->examples);
}

static const char config_intro[] =
	"An experiment file is a JSON object; every key is optional, and each is also an option of the "
	"simulator's commands (the option overrides the file). A key written with a dot is a member of an "
	"object: network.ctrl_ms is {\"network\": {\"ctrl_ms\": ...}}. A result file is itself an experiment "
	"file: its \"config\" object reruns it. \"-\" reads the file from standard input.";

static const char config_example[] =
	"  {\"zoo\": \"a100\", \"models\": [\"ResNet50\", {\"name\": \"m\", \"alpha_ms\": 1, \"beta_ms\": 5}],\n"
	"   \"slo_ms\": 25, \"gpus\": 8, \"rate\": 5000, \"arrival\": \"gamma:0.5\", \"policy\": \"symphony\",\n"
	"   \"cluster\": [{\"kind\": \"a100\", \"count\": 8}, {\"kind\": \"cpu\", \"count\": 4, \"scale\": 20}],\n"
	"   \"segments\": [{\"duration_s\": 10, \"rate\": 2000}], \"network\": {\"ctrl_ms\": 0.5, \"data_ms\": 0.05}}";

static const char config_models[] =
	"A model object takes name, alpha_ms and beta_ms (linear) or latency_ms (a table l(1), l(2), ...), and "
	"optionally max_batch, slo_ms, static_mb, dynamic_mb, file_mb. A cluster object takes kind, count, and "
	"optionally zoo, scale, memory_mb, cpu.";

void cli_print_config_help(FILE *f)
{
	wrap(f, config_intro, 0, 0);
	fprintf(f, "\nexample:\n%s\n\nkeys (and the option that sets each):\n", config_example);
	struct sym_flag_info fi;
	for (size_t i = 0; sym_experiment_flag_at(i, &fi); i++) {
		char left[96], help[1024];
		if (fi.key)
			snprintf(left, sizeof(left), "\"%s\": %s", fi.key, fi.arg);
		else
			snprintf(left, sizeof(left), "(\"models\")");
		snprintf(help, sizeof(help), "%s [--%s]", fi.help, fi.flag);
		print_row(f, left, help);
	}
	fputc('\n', f);
	wrap(f, config_models, 0, 0);
}

/* ---- the reference, docs/cli.md ---- */

/* s with '|' escaped for a table cell. */
static void md_cell(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void md_flag_table(FILE *f, bool (*at)(size_t, struct sym_flag_info *), const char *key_prefix)
{
	fprintf(f, "| option | key in the file | meaning |\n| --- | --- | --- |\n");
	struct sym_flag_info fi;
	for (size_t i = 0; at(i, &fi); i++) {
		fprintf(f, "| `--%s ", fi.flag);
		md_cell(f, fi.arg);
		fprintf(f, "` | ");
		if (fi.key)
			fprintf(f, "`%s%s`", key_prefix, fi.key);
		else
			fprintf(f, "(sets `models`)");
		fprintf(f, " | ");
		md_cell(f, fi.help);
		fprintf(f, " |\n");
	}
}

static void md_command(FILE *f, const struct cli_cmd *cmd)
{
	fprintf(f, "\n## symphony %s\n\n`symphony %s%s%s%s`\n\n", cmd->name, cmd->name, cmd->args[0] ? " " : "",
		cmd->args, cmd->opts || cmd->groups ? " [OPTIONS]" : "");
	fprintf(f, "%s.\n\n", cmd->summary);
	if (cmd->text) {
		paragraphs(f, cmd->text, true);
		fputc('\n', f);
	}
	if (cmd->opts && cmd->opts[0]) {
		fprintf(f, "| option | meaning | default |\n| --- | --- | --- |\n");
		for (size_t i = 0; cmd->opts[i]; i++) {
			const struct cli_opt *o = cmd->opts[i];
			char left[96];
			opt_left(o, left, sizeof(left));
			fprintf(f, "| `");
			md_cell(f, left);
			fprintf(f, "` | ");
			md_cell(f, o->help);
			fprintf(f, " | ");
			md_cell(f, o->def ? o->def : "");
			fprintf(f, " |\n");
		}
		fputc('\n', f);
	}
	if (cmd->groups & CLI_CLUSTER)
		fprintf(f, "Also every [runtime key](#runtime-keys) and every [configuration key](#configuration-keys) as "
			   "`--OPTION VALUE`.\n\n");
	else if (cmd->groups & CLI_EXPERIMENT)
		fprintf(f, "Also every [configuration key](#configuration-keys) as `--OPTION VALUE`.\n\n");
	if (cmd->examples)
		fprintf(f, "Examples:\n\n```\n%s```\n", cmd->examples);
}

void cli_print_markdown(FILE *f)
{
	fprintf(f, "# Command-line reference\n\n"
		   "*Generated from the command table (`cli/commands.c`) by `symphony help --markdown`; "
		   "`meson test cli-reference` fails when this file and the table differ. The "
		   "[README](../README.md) is the front door.*\n\n"
		   "Exit status: 0 success; 1 a run-time failure (an output cannot be written, a peer failed); "
		   "2 bad input (usage, configuration, profile), with no output file created; 70 an internal error; "
		   "130 and 143 interrupted by SIGINT and SIGTERM.\n");
	size_t n;
	const struct cli_cmd *cmds = cli_commands(&n);
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		fprintf(f, "\n**%s**\n\n| command | what it does |\n| --- | --- |\n", section_titles[s]);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(cmds[i].section, sections[s]))
				fprintf(f, "| [`%s`](#symphony-%s) | %s |\n", cmds[i].name, cmds[i].name, cmds[i].summary);
	}
	for (size_t i = 0; i < n; i++)
		md_command(f, &cmds[i]);
	fprintf(f, "\n## Configuration keys\n\n%s\n\n```\n%s\n```\n\n%s\n\n", config_intro, config_example,
		config_models);
	md_flag_table(f, sym_experiment_flag_at, "");
#if SYM_HAVE_RUNTIME
	fprintf(f, "\n## Runtime keys\n\nThe runtime commands also take these, each a key of the file's "
		   "`\"runtime\"` object.\n\n");
	md_flag_table(f, sym_cluster_flag_at, "runtime.");
#endif
}
