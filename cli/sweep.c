/* cli/sweep.c - the sweep and merge commands. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "core/error.h"
#include "experiment/estimate.h"
#include "experiment/interrupt.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "profiles/zoo.h"
#include "sim/goodput.h"
#include "sim/parallel.h"
#include "sim/sweep.h"
#include "sym_version.h"


/* mkdir -p */
/* What of the command line's overrides (--seeds, --criterion) differs
 * between a results file's lines (theirs) and this run (ours), as a hint
 * ("the lines ran with --seeds 5, this run has none: add --seeds 5"); ""
 * when they agree or the lines do not say. */
static void over_differs(const cJSON *theirs, const cJSON *ours, char *why, size_t len)
{
	why[0] = '\0';
	if (!cJSON_IsObject(theirs))
		return;
	static const struct {
		const char *key, *flag;
	} keys[] = { { "replications", "--seeds" }, { "criterion", "--criterion" } };
	for (size_t k = 0; k < 2; k++) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(theirs, keys[k].key);
		const cJSON *b = ours ? cJSON_GetObjectItemCaseSensitive(ours, keys[k].key) : NULL;
		char av[64] = "", bv[64] = "";
		if (cJSON_IsNumber(a))
			snprintf(av, sizeof(av), "%g", a->valuedouble);
		else if (cJSON_IsString(a))
			snprintf(av, sizeof(av), "%s", a->valuestring);
		if (cJSON_IsNumber(b))
			snprintf(bv, sizeof(bv), "%g", b->valuedouble);
		else if (cJSON_IsString(b))
			snprintf(bv, sizeof(bv), "%s", b->valuestring);
		if (!strcmp(av, bv))
			continue;
		size_t l = strlen(why);
		if (av[0] && bv[0])
			snprintf(why + l, len - l, "%sits lines ran with %s %s, this run has %s %s", l ? "; " : "", keys[k].flag,
				 av, keys[k].flag, bv);
		else if (av[0])
			snprintf(why + l, len - l, "%sits lines ran with %s %s, this run has none: add %s %s", l ? "; " : "",
				 keys[k].flag, av, keys[k].flag, av);
		else
			snprintf(why + l, len - l, "%sits lines ran without %s, this run has %s %s: drop it", l ? "; " : "",
				 keys[k].flag, keys[k].flag, bv);
	}
}

static int make_dirs(const char *path, char *err, size_t errlen)
{
	char p[1024];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return snprintf(err, errlen, "%s: path too long", path), -ENAMETOOLONG;
	for (char *s = p + 1;; s++) {
		bool end = !*s;
		if (*s == '/' || end) {
			*s = 0;
			if (mkdir(p, 0777) && errno != EEXIST)
				return snprintf(err, errlen, "cannot create directory %s: %s", p, strerror(errno)), -errno;
			if (end)
				break;
			*s = '/';
		}
	}
	struct stat st;
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return snprintf(err, errlen, "%s exists and is not a directory", path), -ENOTDIR;
	return 0;
}

struct sweep {
	const struct sym_grid *g;
	size_t *todo;
	size_t ntodo;
	bool per_model;
	bool progress, tty;
	FILE *out;
	const char *out_path;
	pthread_mutex_t mu;
	size_t done;
	size_t few;  /* points whose line counts models with too few measured requests */
	double t0, last_print;
	char err[2048];
	int status; /* exit status of the first failure */
};

static void progress_line(struct sweep *s, bool final)
{
	double t = cli_now(), el = t - s->t0;
	double rate = el > 0 ? (double)s->done / el : 0;
	char eta[32], ela[32];
	cli_fmt_duration(rate > 0 ? (double)(s->ntodo - s->done) / rate : -1, eta, sizeof(eta));
	cli_fmt_duration(el, ela, sizeof(ela));
	if (s->tty)
		fprintf(stderr, "\r  %zu/%zu points  %.2f points/s  elapsed %s  ETA %s   %s", s->done, s->ntodo,
			rate, ela, final ? "0s" : eta, final ? "\n" : "");
	else
		fprintf(stderr, "  %zu/%zu points  %.2f points/s  elapsed %s  ETA %s\n", s->done, s->ntodo, rate,
			ela, final ? "0s" : eta);
	s->last_print = t;
}

static int sweep_one(void *ctx, size_t k)
{
	struct sweep *s = ctx;
	size_t i = s->todo[k];
	cJSON *line = NULL;
	char err[1024];
	int rc = sym_grid_run_point(s->g, i, s->per_model, &line, err, sizeof(err));
	char *text = line ? cJSON_PrintUnformatted(line) : NULL;
	const cJSON *few = line ? cJSON_GetObjectItemCaseSensitive(line, "few_request_models") : NULL;
	bool has_few = cJSON_IsNumber(few) && few->valuedouble > 0;
	cJSON_Delete(line);
	pthread_mutex_lock(&s->mu);
	if (s->status) { /* after a failure: no more lines (one could be half-written) */
		pthread_mutex_unlock(&s->mu);
		free(text);
		return 1;
	}
	if (rc || !text) {
		if (!s->status) {
			snprintf(s->err, sizeof(s->err), "%s", rc ? err : "out of memory");
			s->status = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		}
		pthread_mutex_unlock(&s->mu);
		free(text);
		return 1;
	}
	/* one write per line, flushed at once: an interrupted sweep loses at most the lines in flight */
	size_t len = strlen(text);
	text[len] = '\n';
	if (fwrite(text, 1, len + 1, s->out) != len + 1 || fflush(s->out)) {
		if (!s->status) {
			snprintf(s->err, sizeof(s->err), "%s: cannot write: %s", s->out_path, strerror(errno));
			s->status = 1;
		}
		pthread_mutex_unlock(&s->mu);
		free(text);
		return 1;
	}
	free(text);
	s->done++;
	sym_interrupt_progress_step();
	s->few += has_few;
	if (s->progress && (s->tty ? cli_now() - s->last_print >= 0.5 : cli_now() - s->last_print >= 30))
		progress_line(s, false);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* Reads an existing results file for --resume: marks the points present in
 * done[], checks that each is this grid's point under this version, and cuts
 * an incomplete last line. Returns 0 or an exit status after printing why. */
static int resume_read(const char *path, const struct sym_grid *g, bool *done, size_t *ndone)
{
	char *text = NULL;
	int rc = sym_read_file(path, &text);
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		fprintf(stderr, "symphony sweep: %s: cannot read: %s\n", path, sym_strerror(rc));
		return 1;
	}
	size_t lineno = 0, good_end = 0;
	int status = 0;
	for (char *p = text, *nl; *p && !status; p = nl + 1) {
		lineno++;
		nl = strchr(p, '\n');
		if (!nl) {
			fprintf(stderr, "symphony sweep: %s:%zu: incomplete last line (interrupted); it is removed and "
					"its point runs again\n", path, lineno);
			break;
		}
		*nl = 0;
		struct sym_result_line l;
		if (sym_result_line_parse(p, &l) || l.point >= g->npoints) {
			fprintf(stderr, "symphony sweep: %s:%zu: not a sweep result line of this grid; refusing to resume "
					"into it\n", path, lineno);
			status = EXIT_USAGE;
		} else if (strcmp(l.version, SYM_VERSION)) {
			fprintf(stderr, "symphony sweep: %s:%zu: written by symphony %s, this is %s; resume with the same "
					"version or use another --out\n", path, lineno, l.version, SYM_VERSION);
			status = EXIT_USAGE;
		} else if (strcmp(l.grid, g->name)) {
			fprintf(stderr, "symphony sweep: %s:%zu: a point of grid '%s', not '%s'; use another --out\n", path,
				lineno, l.grid, g->name);
			status = EXIT_USAGE;
		} else if (l.grid_id && strcmp(l.grid_id, g->id)) {
			char why[400];
			over_differs(cJSON_GetObjectItemCaseSensitive(l.obj, "grid_over"), g->over, why, sizeof(why));
			fprintf(stderr, "symphony sweep: %s:%zu: written by another version of grid '%s' (%s); %s\n", path,
				lineno, g->name, why[0] ? why : "its base, compute or axes changed since",
				why[0] ? "resume with the same options" : "use another --out");
			status = EXIT_USAGE;
		} else {
			size_t i = l.point;
			char *have = cJSON_PrintUnformatted(l.key);
			char *want = sym_grid_point_id(g, i);
			if (!have || !want || strcmp(have, want)) {
				fprintf(stderr, "symphony sweep: %s:%zu: point %zu is %s there but %s in the grid: the grid "
						"changed; use another --out\n", path, lineno, i, have ? have : "?",
					want ? want : "(none)");
				status = EXIT_USAGE;
			} else if (!done[i]) {
				done[i] = true;
				++*ndone;
			}
			free(have);
			free(want);
		}
		cJSON_Delete(l.obj);
		good_end = (size_t)(nl + 1 - text);
	}
	free(text);
	if (!status && truncate(path, (off_t)good_end)) {
		fprintf(stderr, "symphony sweep: %s: cannot cut the incomplete line: %s\n", path, strerror(errno));
		status = 1;
	}
	return status;
}

/* The grid of GRID.json with --seeds and --criterion applied to every point
 * (configuration keys, checked as options). Prints why and returns the exit
 * status on failure. */
static int load_grid(const struct cli *c, struct sym_grid *g)
{
	const char *seeds = cli_str(c, "seeds"), *criterion = cli_str(c, "criterion");
	char err[1024];
	cJSON *over_seeds = NULL, *over_crit = NULL;
	if (seeds || criterion) {
		struct sym_experiment x;
		int rc = sym_experiment_init(&x);
		if (!rc && seeds && (rc = sym_experiment_apply_flag(&x, "seeds", seeds, err, sizeof(err))) == 0)
			over_seeds = cJSON_CreateNumber(x.replications);
		if (!rc && criterion && (rc = sym_experiment_apply_flag(&x, "criterion", criterion, err, sizeof(err))) == 0)
			over_crit = cJSON_CreateString(sym_criterion_name(x.criterion));
		sym_experiment_finish(&x);
		if (rc) {
			cJSON_Delete(over_seeds);
			fprintf(stderr, "symphony sweep: %s\n", rc == -ENOMEM ? "out of memory" : err);
			return rc == -ENOMEM ? 1 : EXIT_USAGE;
		}
	}
	if (sym_grid_load(c->args[0], g, err, sizeof(err))) {
		cJSON_Delete(over_seeds);
		cJSON_Delete(over_crit);
		fprintf(stderr, "symphony sweep: %s\n", err);
		return EXIT_USAGE;
	}
	int orc = 0;
	if (over_seeds)
		orc = sym_grid_override(g, "replications", over_seeds);
	if (over_crit && !orc)
		orc = sym_grid_override(g, "criterion", over_crit);
	else
		cJSON_Delete(over_crit);
	if (orc) {
		fprintf(stderr, "symphony sweep: out of memory\n");
		sym_grid_finish(g);
		return 1;
	}
	return 0;
}

/* Checks every point of the shard before any runs: its experiment, and that
 * `at_once` points of its size fit in memory. Returns the exit status. */
static int check_points(const char *grid_path, const struct sym_grid *g, int sidx, int scount, int at_once)
{
	char err[1024];
	for (size_t i = 0; i < g->npoints; i++) {
		if (!sym_slice_has(i, sidx, scount))
			continue;
		struct sym_experiment e;
		int rc = sym_grid_point_experiment(g, i, &e, err, sizeof(err));
		if (!rc) {
			double rate = g->compute == SYM_COMPUTE_GOODPUT ? sym_goodput_upper_bound(&e) / sym_schedule_mean_rate(&e)
									  : sym_experiment_scale(&e);
			char msg[900];
			if (sym_estimate_check(&e, rate, 0, false, at_once, msg, sizeof(msg))) {
				snprintf(err, sizeof(err), "point %zu: %s", i, msg);
				rc = -EINVAL;
			}
		}
		sym_experiment_finish(&e);
		if (rc) {
			fprintf(stderr, "symphony sweep: %s: %s\n", grid_path, err);
			return rc == -ENOMEM ? 1 : EXIT_USAGE;
		}
	}
	return 0;
}

/* Opens path (DIR/results.jsonl) for appending, locked: one writer per
 * results file, so a second sweep into the same directory (two shards given
 * the same --out) is refused rather than interleaving lines. An existing
 * file is refused without --resume; with it, the points it holds are marked
 * in done. Returns the exit status. */
static int open_results(const char *path, const struct sym_grid *g, bool resume, bool *done, FILE **out)
{
	FILE *f = fopen(path, "a");
	if (!f) {
		fprintf(stderr, "symphony sweep: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	int status = 0;
	struct stat st;
	size_t ndone = 0;
	if (flock(fileno(f), LOCK_EX | LOCK_NB)) {
		fprintf(stderr, "symphony sweep: %s is being written by another sweep (shards need their own "
				"--out directories)\n", path);
		status = EXIT_USAGE;
	} else if (!fstat(fileno(f), &st) && st.st_size > 0) {
		if (!resume) {
			fprintf(stderr, "symphony sweep: %s already holds results: --resume to continue it, or choose "
					"another --out\n", path);
			status = EXIT_USAGE;
		} else {
			status = resume_read(path, g, done, &ndone);
		}
	}
	if (status)
		fclose(f);
	else
		*out = f;
	return status;
}

/* DIR/results.jsonl.meta.json: where the lines come from and when (the lines
 * themselves carry no date). Returns the exit status. */
static int write_sidecar(const char *path, const char *grid_path, const struct sym_grid *g, int sidx, int scount,
			 size_t nshard, size_t skipped)
{
	char meta_path[1200], err[1300];
	snprintf(meta_path, sizeof(meta_path), "%s.meta.json", path);
	cJSON *meta = sym_result_head("sweep");
	cJSON_AddStringToObject(meta, "grid", g->name);
	cJSON_AddStringToObject(meta, "grid_id", g->id);
	cJSON_AddStringToObject(meta, "grid_file", grid_path);
	cJSON_AddStringToObject(meta, "compute", g->compute == SYM_COMPUTE_SIM ? "sim" : "goodput");
	cJSON_AddNumberToObject(meta, "npoints", (double)g->npoints);
	cJSON *sh = cJSON_AddObjectToObject(meta, "shard");
	cJSON_AddNumberToObject(sh, "index", sidx);
	cJSON_AddNumberToObject(sh, "count", scount);
	cJSON_AddNumberToObject(sh, "points", (double)nshard);
	cJSON_AddNumberToObject(meta, "points_done_before", (double)skipped);
	int rc = sym_write_json(meta_path, meta, err, sizeof(err));
	cJSON_Delete(meta);
	if (rc)
		fprintf(stderr, "symphony sweep: %s\n", err);
	return rc ? 1 : 0;
}

/* Shuffles the points to run into a fixed order: the grid's big points (the
 * last values of an axis, often) spread over the run, so the rate and ETA
 * shown are representative early and no thread is left alone with them at
 * the end. Lines carry their point index; merge sorts them. */
static void shuffle(size_t *todo, size_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t k = n; k > 1; k--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t j = (size_t)(x % k), t = todo[k - 1];
		todo[k - 1] = todo[j];
		todo[j] = t;
	}
}

/* Runs s's points on `jobs` threads into f (closed here). Returns the exit status. */
static int run_points(const struct cli *c, struct sweep *s, FILE *f, int jobs, size_t nshard, size_t skipped)
{
	const struct sym_grid *g = s->g;
	bool quiet = cli_flag(c, "quiet");
	s->t0 = s->last_print = cli_now();
	pthread_mutex_init(&s->mu, NULL);
	/* a signal from here on says how far the sweep got (experiment/interrupt.h) */
	sym_interrupt_progress(s->out_path, nshard, skipped);
	sym_parallel_for(s->ntodo, jobs, sweep_one, s);
	sym_interrupt_progress_end();
	pthread_mutex_destroy(&s->mu);
	if (fclose(f) && !s->status) {
		snprintf(s->err, sizeof(s->err), "%s: cannot write: %s", s->out_path, strerror(errno));
		s->status = 1;
	}
	if (s->status) {
		if (s->progress && s->tty)
			fprintf(stderr, "\n");
		fprintf(stderr, "symphony sweep: %s\n", s->err);
		fprintf(stderr, "symphony sweep: %zu of %zu points written to %s; fix the cause and run again with "
				"--resume\n", s->done, s->ntodo, s->out_path);
		return s->status;
	}
	if (!quiet) {
		progress_line(s, true);
		fprintf(stderr, "sweep '%s': %zu points in %.1f s -> %s\n", g->name, s->done, cli_now() - s->t0,
			s->out_path);
	}
	if (s->few)
		fprintf(stderr, "symphony sweep: warning: at %zu of %zu points some model had fewer measured requests than "
				"1/max_bad_rate, too few for the bad rate to mean much (few_request_models in their lines)\n",
			s->few, s->done);
	return 0;
}

/* --list: the shard's manifest (index, key). */
static int list_points(const struct sym_grid *g, int sidx, int scount)
{
	int status = 0;
	for (size_t i = 0; i < g->npoints && !status; i++) {
		if (!sym_slice_has(i, sidx, scount))
			continue;
		char *id = sym_grid_point_id(g, i);
		if (!id || printf("%zu\t%s\n", i, id) < 0)
			status = 1;
		free(id);
	}
	return status;
}

int cli_cmd_sweep(struct cli *c)
{
	const char *grid_path = c->args[0], *out = cli_str(c, "out"), *shard = cli_str(c, "shard");
	int jobs = cli_jobs(c);
	char err[1024];
	int sidx = 0, scount = 1;
	if (sym_output_is_stdout(out)) {
		fprintf(stderr, "symphony sweep: --out -: a sweep writes a directory (results.jsonl, appended point by "
				"point and resumable), not standard output; give a directory, and `symphony merge DIR` "
				"prints the results\n");
		return EXIT_USAGE;
	}
	if (shard ? sym_slice_parse(shard, &sidx, &scount, err, sizeof(err))
		  : sym_slice_from_env(&sidx, &scount, err, sizeof(err)) < 0) {
		fprintf(stderr, "symphony sweep: %s\n", err);
		return EXIT_USAGE;
	}
	struct sym_grid g;
	int status = load_grid(c, &g);
	if (status)
		return status;
	size_t nshard = 0;
	for (size_t i = 0; i < g.npoints; i++)
		nshard += sym_slice_has(i, sidx, scount);
	if (cli_flag(c, "list")) {
		status = list_points(&g, sidx, scount);
		sym_grid_finish(&g);
		return status;
	}
	if (jobs < 1)
		jobs = sym_ncpus();
	char dir[1024], path[1100];
	if (out)
		snprintf(dir, sizeof(dir), "%s", out);
	else if (scount > 1)
		snprintf(dir, sizeof(dir), "sweep-%s/shard-%d-of-%d", g.name, sidx, scount);
	else
		snprintf(dir, sizeof(dir), "sweep-%s", g.name);
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	bool *done = calloc(g.npoints, sizeof(bool));
	size_t *todo = calloc(nshard ? nshard : 1, sizeof(size_t));
	FILE *f = NULL;
	if (!done || !todo)
		status = 1, fprintf(stderr, "symphony sweep: out of memory\n");
	if (!status)
		status = check_points(grid_path, &g, sidx, scount, (size_t)jobs < nshard ? jobs : (int)nshard);
	if (!status && make_dirs(dir, err, sizeof(err)))
		status = 1, fprintf(stderr, "symphony sweep: %s\n", err);
	if (!status)
		status = open_results(path, &g, cli_flag(c, "resume"), done, &f);
	size_t ntodo = 0, skipped = 0;
	for (size_t i = 0; !status && i < g.npoints; i++) {
		if (sym_slice_has(i, sidx, scount) && done[i])
			skipped++;
		else if (sym_slice_has(i, sidx, scount))
			todo[ntodo++] = i;
	}
	if (!status && (status = write_sidecar(path, grid_path, &g, sidx, scount, nshard, skipped)))
		fclose(f);
	if (!status) {
		shuffle(todo, ntodo);
		struct sweep s = { .g = &g, .todo = todo, .ntodo = ntodo, .per_model = cli_flag(c, "per-model"),
				   .progress = !cli_flag(c, "quiet"), .tty = isatty(2), .out = f, .out_path = path };
		if (s.progress) {
			fprintf(stderr, "symphony %s sweep '%s': %zu points", SYM_VERSION, g.name, g.npoints);
			if (scount > 1)
				fprintf(stderr, ", shard %d/%d: %zu", sidx, scount, nshard);
			if (skipped)
				fprintf(stderr, ", %zu already done", skipped);
			fprintf(stderr, "; running %zu on %d thread%s -> %s\n", ntodo, jobs, jobs == 1 ? "" : "s", path);
		}
		status = run_points(c, &s, f, jobs, nshard, skipped);
	}
	free(done);
	free(todo);
	sym_grid_finish(&g);
	return status;
}

/* The results files of merge's arguments: a directory's results.jsonl, or
 * the file itself (into paths, with bufs holding the built names). Returns
 * how many, or -1 after saying why. */
static long merge_inputs(const struct cli *c, const char **paths, char (*bufs)[1100])
{
	size_t n = 0;
	for (size_t i = 0; i < c->nargs; i++) {
		const char *a = c->args[i];
		struct stat st;
		if (stat(a, &st)) {
			fprintf(stderr, "symphony merge: %s: %s\n", a, strerror(errno));
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(bufs[n], sizeof(bufs[n]), "%s/results.jsonl", a);
			paths[n] = bufs[n];
			n++;
		} else {
			paths[n++] = a;
		}
	}
	if (!n)
		fprintf(stderr, "symphony merge: give the shard directories or results files to merge\n");
	return n ? (long)n : -1;
}

int cli_cmd_merge(struct cli *c)
{
	const char *out = cli_str(c, "out");
	if (sym_output_is_stdout(out))
		out = NULL; /* "-": standard output, as without --out */
	const char **paths = calloc(c->nargs + 1, sizeof(char *));
	char (*bufs)[1100] = calloc(c->nargs + 1, sizeof(*bufs));
	int status = 0;
	long ni = -1;
	if (!paths || !bufs)
		status = 1, fprintf(stderr, "symphony merge: out of memory\n");
	else if ((ni = merge_inputs(c, paths, bufs)) < 0)
		status = EXIT_USAGE;
	if (status)
		goto done;
	size_t n = (size_t)ni;
	char err[2048];
	cJSON *lines = NULL;
	size_t npoints = 0;
	if (sym_results_merge(paths, n, &lines, &npoints, err, sizeof(err))) {
		fprintf(stderr, "symphony merge: %s\n", err);
		status = EXIT_USAGE;
		goto done;
	}
	struct sym_outfile of = { 0 };
	FILE *f = stdout;
	char path[1100];
	if (out) {
		snprintf(path, sizeof(path), "%s/results.jsonl", out);
		if (make_dirs(out, err, sizeof(err)) || sym_outfile_open(&of, path, err, sizeof(err))) {
			fprintf(stderr, "symphony merge: %s\n", err);
			cJSON_Delete(lines);
			status = 1;
			goto done;
		}
		f = of.f;
	}
	size_t count = 0;
	for (const cJSON *it = lines->child; it; it = it->next, count++) {
		char *t = cJSON_PrintUnformatted(it);
		if (!t || fprintf(f, "%s\n", t) < 0)
			status = 1;
		free(t);
	}
	cJSON_Delete(lines);
	if (out) {
		if (status)
			sym_outfile_abort(&of);
		else if (sym_outfile_commit(&of, err, sizeof(err)))
			status = 1, fprintf(stderr, "symphony merge: %s\n", err);
	} else if (fflush(stdout)) {
		status = 1;
	}
	if (status) {
		fprintf(stderr, "symphony merge: cannot write the merged results\n");
		goto done;
	}
	if (!npoints)
		fprintf(stderr, "merged %zu points from %zu file(s)%s%s\n", count, n, out ? " -> " : "", out ? path : "");
	else if (count < npoints)
		fprintf(stderr, "merged %zu of the grid's %zu points from %zu file(s); %zu missing (a shard not run "
				"or not finished?)%s%s\n", count, npoints, n, npoints - count, out ? " -> " : "",
			out ? path : "");
	else
		fprintf(stderr, "merged %zu points (all of the grid's) from %zu file(s)%s%s\n", count, n,
			out ? " -> " : "", out ? path : "");
done:
	free(paths);
	free(bufs);
	return status;
}
