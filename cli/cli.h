/* cli/cli.h - the `symphony` command line: one table of commands
 * (cli/commands.c), one option parser (cli/parse.c), and the help, the
 * configuration reference and docs/cli.md generated from them (cli/help.c).
 *
 * A command is described once: its name, summary, positional arguments,
 * description, options (each with its type, range, default and help) and the
 * option groups it takes (the experiment's configuration flags, the runtime
 * cluster's). The parser checks every option against that description before
 * the command runs: an unknown option, a missing or malformed value, a value
 * out of range or too many arguments is refused with exit status 2, naming
 * what was wrong. The command then reads typed values (cli_num, cli_int, ...)
 * that are known to be valid.
 *
 * Exit statuses: 0 success; 1 a run-time failure (an output cannot be
 * written, a peer failed); 2 bad input (usage, configuration, profile), with
 * no output file created; 70 an internal error (conservation violated);
 * 130 and 143 interrupted by SIGINT and SIGTERM.
 */
#ifndef SYM_CLI_H
#define SYM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "experiment/config.h"

#define EXIT_USAGE 2
#define EXIT_INTERNAL 70

enum cli_type {
	CLI_FLAG,   /* no value: given or not */
	CLI_TEXT,   /* any non-empty text */
	CLI_INT,    /* an integer in [lo, hi] */
	CLI_NUM,    /* a finite number in [lo, hi] */
	CLI_CHOICE, /* one of choices ("a|b|c") */
	CLI_OUT,    /* an output file; "-" is standard output */
};

struct cli_opt {
	const char *name;    /* the long name, without "--" */
	char shortname;      /* -X, or 0 */
	enum cli_type type;
	const char *arg;     /* the value's placeholder in help ("N", "FILE|-"); NULL for a flag */
	const char *help;
	const char *def;     /* the default, as text: checked like a given value and shown in help; NULL: none */
	double lo, hi;       /* CLI_INT, CLI_NUM: the accepted range */
	const char *choices; /* CLI_CHOICE */
};

/* Option groups a command may take besides its own options. */
enum {
	CLI_EXPERIMENT = 1, /* the experiment's configuration flags (experiment/config.h) */
	CLI_CLUSTER = 2,    /* the runtime cluster's flags (runtime/cluster.h), then the experiment's */
};

struct cli;

struct cli_cmd {
	const char *name;
	const char *section;  /* "simulator", "runtime" or "information": the groups of `symphony help` */
	const char *summary;  /* one line */
	const char *args;     /* the positional arguments in the synopsis ("[CONFIG.json|-]"), or "" */
	int min_args, max_args; /* how many positional arguments it takes (max -1: any number) */
	const char *text;     /* the description: paragraphs separated by blank lines */
	const struct cli_opt *const *opts; /* its options, NULL-terminated */
	unsigned groups;
	int (*run)(struct cli *c); /* the exit status; NULL: not in this build (say why) */
	const char *examples; /* lines of examples, or NULL */
};

/* A parsed command line. */
struct cli {
	const struct cli_cmd *cmd;
	char who[48];               /* "symphony CMD", for messages */
	const char **args;          /* the positional arguments */
	size_t nargs;
	const char **val;           /* per option of cmd->opts: the value given, else its default, else NULL */
	bool *given;
	/* the group flags (CLI_EXPERIMENT, CLI_CLUSTER), in command-line order */
	const char **flag_name, **flag_val;
	size_t nflags;
	char *names;                /* storage of flag names split from --name=value */
};

/* The command table. */
const struct cli_cmd *cli_commands(size_t *n);
const struct cli_cmd *cli_find(const char *name);

/* Parses argv (after the command name). Returns 0, -1 when --help was given
 * (the help is printed; exit 0), or EXIT_USAGE after printing why. c must be
 * released with cli_free whatever the result. */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli *c);
void cli_free(struct cli *c);

/* The value of option `name` of the command (given, or its default), or NULL.
 * Naming an option the command does not have is a programming error: it
 * aborts. */
const char *cli_str(const struct cli *c, const char *name);
bool cli_given(const struct cli *c, const char *name);
bool cli_flag(const struct cli *c, const char *name);
double cli_num(const struct cli *c, const char *name);
long cli_int(const struct cli *c, const char *name);
/* --jobs: its value, or every core when not given. */
int cli_jobs(const struct cli *c);

/* Prints "symphony CMD: MESSAGE" on stderr and returns EXIT_USAGE. */
int cli_usage_error(const struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "symphony CMD: MESSAGE" on stderr and returns status. */
int cli_fail(const struct cli *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The exit status for an error code of the experiment, simulator or runtime:
 * -EINVAL bad input (2), -EPROTO internal (70), else 1. */
int cli_status(int rc);

/* The configuration file: the first positional argument or --config; NULL
 * when neither is given. */
const char *cli_config_path(const struct cli *c);

/* The experiment of a CLI_EXPERIMENT command: defaults, then the
 * configuration file (cli_config_path; "-" is standard input), then the flags in order; resolved and checked against the policy
 * when `resolve`. e needs no init; finish it whatever the result. Returns 0
 * or EXIT_USAGE (or 1: out of memory) after printing why. */
int cli_experiment(const struct cli *c, struct sym_experiment *e, bool resolve);

/* Checks c's output options together before anything runs (cli_parse
 * does): each writable (experiment/output.h), at most one on standard
 * output, no file under two options. Prints why and returns EXIT_USAGE, else 0. */
int cli_check_outputs(const struct cli *c);

#define MAX_POLICIES 16

/* The policies of --policies (';'-separated, at most MAX_POLICIES), else
 * the experiment's. Returns 0 or EXIT_USAGE after printing why. */
int cli_policy_list(const struct cli *c, const struct sym_experiment *e, struct sym_policy *pols, int *npol);

/* Where a command's table goes: stdout, unless one of its outputs is "-". */
FILE *cli_table_stream(const struct cli *c);

/* Help. */
void cli_print_usage(FILE *f);                               /* the command list */
void cli_print_help(FILE *f, const struct cli_cmd *cmd);     /* one command */
void cli_print_config_help(FILE *f);                         /* the experiment file's keys */
void cli_print_markdown(FILE *f);                            /* docs/cli.md */

/* The commands (cli/run.c, plan.c, loadcurve.c, sweep.c, info.c, runtime.c). */
int cli_cmd_sim(struct cli *c);
int cli_cmd_goodput(struct cli *c);
int cli_cmd_plan(struct cli *c);
int cli_cmd_partition(struct cli *c);
int cli_cmd_split(struct cli *c);
int cli_cmd_loadcurve(struct cli *c);
int cli_cmd_sweep(struct cli *c);
int cli_cmd_merge(struct cli *c);
int cli_cmd_models(struct cli *c);
int cli_cmd_policies(struct cli *c);
int cli_cmd_help(struct cli *c);
int cli_cmd_version(struct cli *c);
/* The runtime's commands (schedd, frontend, backend, loadgen, profile,
 * bench-sched, fabbench): cli_cmd_runtime (cli/rtmodule.c) loads the module
 * symphony-runtime.so and calls its cli_runtime_main (cli/runtime.c). */
int cli_cmd_runtime(struct cli *c);
int cli_runtime_main(struct cli *c);

#endif
