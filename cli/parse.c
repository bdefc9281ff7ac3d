/* cli/parse.c - the one option parser of the symphony command (cli/cli.h). */
#include "cli/cli.h"
#include "core/suggest.h"
#include "experiment/subcluster.h"
#include "experiment/output.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sim/parallel.h"
#include "sym_version.h"
#if SYM_HAVE_RUNTIME
#include "runtime/cluster.h"
#endif

static size_t count_opts(const struct cli_cmd *cmd)
{
	size_t n = 0;
	while (cmd->opts && cmd->opts[n])
		n++;
	return n;
}

static int find_opt(const struct cli_cmd *cmd, const char *name, char shortname)
{
	for (size_t i = 0; cmd->opts && cmd->opts[i]; i++) {
		const struct cli_opt *o = cmd->opts[i];
		if (name ? !strcmp(o->name, name) : (shortname && o->shortname == shortname))
			return (int)i;
	}
	return -1;
}

/* The group flag called name: its help entry, or false. */
static bool group_flag(const struct cli_cmd *cmd, const char *name)
{
	struct sym_flag_info fi;
	if (cmd->groups & (CLI_EXPERIMENT | CLI_CLUSTER))
		for (size_t i = 0; sym_experiment_flag_at(i, &fi); i++)
			if (!strcmp(fi.flag, name))
				return true;
#if SYM_HAVE_RUNTIME
	if (cmd->groups & CLI_CLUSTER)
		for (size_t i = 0; sym_cluster_flag_at(i, &fi); i++)
			if (!strcmp(fi.flag, name))
				return true;
#endif
	return false;
}

/* The known option nearest to name (core/suggest.h), or NULL. */
static const char *suggest(const struct cli_cmd *cmd, const char *name)
{
	struct sym_suggest s;
	sym_suggest_init(&s, name);
	for (size_t i = 0; cmd->opts && cmd->opts[i]; i++)
		sym_suggest_consider(&s, cmd->opts[i]->name);
	struct sym_flag_info fi;
	if (cmd->groups & (CLI_EXPERIMENT | CLI_CLUSTER))
		for (size_t i = 0; sym_experiment_flag_at(i, &fi); i++)
			sym_suggest_consider(&s, fi.flag);
#if SYM_HAVE_RUNTIME
	if (cmd->groups & CLI_CLUSTER)
		for (size_t i = 0; sym_cluster_flag_at(i, &fi); i++)
			sym_suggest_consider(&s, fi.flag);
#endif
	return s.best;
}

int cli_usage_error(const struct cli *c, const char *fmt, ...)
{
	fprintf(stderr, "%s: ", c->who);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

int cli_fail(const struct cli *c, int status, const char *fmt, ...)
{
	fprintf(stderr, "%s: ", c->who);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

int cli_status(int rc)
{
	return rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL || rc == -ENOENT ? EXIT_USAGE : rc ? 1 : 0;
}

/* Checks value against o; 0, or -1 with a message in err. */
static int check_value(const struct cli_opt *o, const char *v, char *err, size_t errlen)
{
	char *end = NULL;
	switch (o->type) {
	case CLI_FLAG:
		return 0;
	case CLI_TEXT:
		if (!*v)
			return snprintf(err, errlen, "--%s: the value is empty", o->name), -1;
		return 0;
	case CLI_OUT:
		if (!*v)
			return snprintf(err, errlen, "--%s: the output file name is empty", o->name), -1;
		return 0;
	case CLI_INT: {
		errno = 0;
		long x = strtol(v, &end, 10);
		if (!*v || *end || errno || x < o->lo || x > o->hi)
			return snprintf(err, errlen, "--%s: expected an integer from %.0f to %.0f, got '%s'", o->name, o->lo,
					o->hi, v), -1;
		return 0;
	}
	case CLI_NUM: {
		double x = strtod(v, &end);
		if (!*v || *end || !isfinite(x) || x < o->lo || x > o->hi)
			return snprintf(err, errlen, "--%s: expected a number from %g to %g, got '%s'", o->name, o->lo, o->hi,
					v), -1;
		return 0;
	}
	case CLI_CHOICE: {
		size_t n = strlen(v);
		for (const char *p = o->choices; *p;) {
			size_t k = strcspn(p, "|");
			if (k == n && !strncmp(p, v, n))
				return 0;
			p += k + (p[k] == '|');
		}
		return snprintf(err, errlen, "--%s: expected %s, got '%s'", o->name, o->choices, v), -1;
	}
	}
	return 0;
}

/* The value of the option at argv[*k] (after '=' when eq, else the next
 * argument). NULL after printing why. */
static const char *take_value(const struct cli *c, int argc, char **argv, int *k, const char *eq, const char *shown)
{
	if (eq)
		return eq + 1;
	if (*k + 1 >= argc || (!strncmp(argv[*k + 1], "--", 2) && argv[*k + 1][2])) {
		cli_usage_error(c, "option %s needs a value (see symphony help %s)", shown, c->cmd->name);
		return NULL;
	}
	return argv[++*k];
}

static int parse_alloc(const struct cli_cmd *cmd, int argc, char **argv, struct cli *c)
{
	size_t nopts = count_opts(cmd), chars = 0;
	for (int k = 0; k < argc; k++)
		chars += strlen(argv[k]) + 1;
	c->val = calloc(nopts + 1, sizeof(*c->val));
	c->given = calloc(nopts + 1, sizeof(*c->given));
	c->args = calloc((size_t)argc + 1, sizeof(*c->args));
	c->flag_name = calloc((size_t)argc + 1, sizeof(*c->flag_name));
	c->flag_val = calloc((size_t)argc + 1, sizeof(*c->flag_val));
	c->names = malloc(chars + 1);
	if (!c->val || !c->given || !c->args || !c->flag_name || !c->flag_val || !c->names)
		return -ENOMEM;
	for (size_t i = 0; i < nopts; i++)
		c->val[i] = cmd->opts[i]->def;
	return 0;
}

/* One option at argv[*k]. Returns 0, -1 for --help, or EXIT_USAGE. */
static int parse_option(struct cli *c, int argc, char **argv, int *k, size_t *names_used)
{
	const struct cli_cmd *cmd = c->cmd;
	const char *a = argv[*k];
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		cli_print_help(stdout, cmd);
		return -1;
	}
	char name[64], shown[80];
	const char *eq = NULL;
	int i;
	if (a[1] != '-') { /* -X, -X VALUE or -XVALUE */
		i = find_opt(cmd, NULL, a[1]);
		snprintf(shown, sizeof(shown), "-%c", a[1]);
		if (i < 0)
			return cli_usage_error(c, "unknown option '%s' (see symphony help %s)", a, cmd->name);
		if (a[2])
			eq = a + 1; /* the value follows the letter */
	} else {
		eq = strchr(a + 2, '=');
		size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (n >= sizeof(name))
			return cli_usage_error(c, "unknown option '%.80s' (see symphony help %s)", a, cmd->name);
		memcpy(name, a + 2, n);
		name[n] = '\0';
		snprintf(shown, sizeof(shown), "--%s", name);
		i = find_opt(cmd, name, 0);
	}
	if (i >= 0) {
		const struct cli_opt *o = cmd->opts[i];
		if (o->type == CLI_FLAG) {
			if (eq)
				return cli_usage_error(c, "option %s takes no value", shown);
			c->given[i] = true;
			c->val[i] = "";
			return 0;
		}
		const char *v = take_value(c, argc, argv, k, eq, shown);
		char err[512];
		if (!v)
			return EXIT_USAGE;
		if (check_value(o, v, err, sizeof(err)))
			return cli_usage_error(c, "%s", err);
		c->val[i] = v;
		c->given[i] = true;
		return 0;
	}
	if (!group_flag(cmd, name)) {
		const char *s = suggest(cmd, name);
		if (s)
			return cli_usage_error(c, "unknown option '--%s': did you mean --%s? (see symphony help %s)", name, s,
					       cmd->name);
		return cli_usage_error(c, "unknown option '--%s' (see symphony help %s)", name, cmd->name);
	}
	const char *v = take_value(c, argc, argv, k, eq, shown);
	if (!v)
		return EXIT_USAGE;
	char *slot = c->names + *names_used;
	memcpy(slot, name, strlen(name) + 1);
	*names_used += strlen(name) + 1;
	c->flag_name[c->nflags] = slot;
	c->flag_val[c->nflags++] = v;
	return 0;
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli *c)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	snprintf(c->who, sizeof(c->who), "symphony %s", cmd->name);
	if (parse_alloc(cmd, argc, argv, c)) {
		fprintf(stderr, "%s: out of memory\n", c->who);
		return 1;
	}
	size_t names_used = 0;
	bool only_args = false;
	for (int k = 0; k < argc; k++) {
		const char *a = argv[k];
		if (!only_args && !strcmp(a, "--")) {
			only_args = true;
		} else if (only_args || a[0] != '-' || !a[1]) {
			if (cmd->max_args >= 0 && c->nargs >= (size_t)cmd->max_args)
				return cmd->max_args ? cli_usage_error(c, "unexpected argument '%s' (usage: symphony %s %s)", a,
								       cmd->name, cmd->args)
						     : cli_usage_error(c, "unexpected argument '%s' (%s takes options only)", a,
								       cmd->name);
			c->args[c->nargs++] = a;
		} else {
			int rc = parse_option(c, argc, argv, &k, &names_used);
			if (rc)
				return rc;
		}
	}
	int ci = find_opt(cmd, "config", 0);
	if (ci >= 0 && c->given[ci] && c->nargs)
		return cli_usage_error(c, "two configuration files: '%s' and --config '%s'", c->args[0], c->val[ci]);
	if (c->nargs < (size_t)cmd->min_args)
		return cli_usage_error(c, "missing argument: give %s (usage: symphony %s %s)", cmd->args, cmd->name,
				       cmd->args);
	return cli_check_outputs(c); /* before anything runs */
}

void cli_free(struct cli *c)
{
	free(c->val);
	free(c->given);
	free(c->args);
	free(c->flag_name);
	free(c->flag_val);
	free(c->names);
	memset(c, 0, sizeof(*c));
}

static int index_of(const struct cli *c, const char *name)
{
	int i = find_opt(c->cmd, name, 0);
	if (i < 0) {
		fprintf(stderr, "symphony: internal error: command %s has no option --%s\n", c->cmd->name, name);
		abort();
	}
	return i;
}

const char *cli_str(const struct cli *c, const char *name)
{
	return c->val[index_of(c, name)];
}

bool cli_given(const struct cli *c, const char *name)
{
	return c->given[index_of(c, name)];
}

bool cli_flag(const struct cli *c, const char *name)
{
	return c->given[index_of(c, name)];
}

double cli_num(const struct cli *c, const char *name)
{
	const char *v = cli_str(c, name);
	return v ? strtod(v, NULL) : 0;
}

long cli_int(const struct cli *c, const char *name)
{
	const char *v = cli_str(c, name);
	return v ? strtol(v, NULL, 10) : 0;
}

int cli_jobs(const struct cli *c)
{
	return cli_given(c, "jobs") ? (int)cli_int(c, "jobs") : sym_ncpus();
}

int cli_check_outputs(const struct cli *c)
{
	/* every output option together: each one writable, at most one on stdout, no file twice */
	const char *names[16], *paths[16];
	char buf[16][40];
	size_t n = 0;
	for (size_t i = 0; c->cmd->opts && c->cmd->opts[i] && n < 16; i++) {
		if (c->cmd->opts[i]->type != CLI_OUT)
			continue;
		snprintf(buf[n], sizeof(buf[n]), "--%s", c->cmd->opts[i]->name);
		names[n] = buf[n];
		paths[n++] = c->val[i];
	}
	char err[1500];
	if (sym_outputs_check(names, paths, n, err, sizeof(err)))
		return cli_usage_error(c, "%s", err);
	return 0;
}

const char *cli_config_path(const struct cli *c)
{
	return c->nargs ? c->args[0] : find_opt(c->cmd, "config", 0) >= 0 ? cli_str(c, "config") : NULL;
}

int cli_experiment(const struct cli *c, struct sym_experiment *e, bool resolve)
{
	char err[1024];
	if (sym_experiment_init(e))
		return cli_fail(c, 1, "out of memory");
	const char *path = cli_config_path(c);
	if (path && sym_experiment_load_file(e, path, err, sizeof(err)))
		return cli_usage_error(c, "%s", err);
	for (size_t i = 0; i < c->nflags; i++) {
		int rc = sym_experiment_apply_flag(e, c->flag_name[i], c->flag_val[i], err, sizeof(err));
		if (rc == 1) /* the parser knew it: a flag of another group */
			return cli_usage_error(c, "unknown option '--%s' (see symphony help %s)", c->flag_name[i],
					       c->cmd->name);
		if (rc)
			return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
	}
	if (resolve && sym_experiment_resolve(e, err, sizeof(err)))
		return cli_usage_error(c, "%s", err);
	/* sub-clusters: solved once here, so that every run (and the echoed
	 * configuration) uses the same assignment */
	int rc;
	if (resolve && (rc = sym_subclusters_solve(e, sym_experiment_scale(e), err, sizeof(err))))
		return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
	return 0;
}
