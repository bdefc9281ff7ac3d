/* sim/report.h - results as JSON, tables and CSV files.
 *
 * Every JSON result carries the program version, the seed and the full
 * resolved configuration, so the run can be repeated from the file alone
 * (`symphony sim --config RESULT.json`). Files are written to a temporary
 * name and renamed into place, so a failed run never leaves a half-written
 * result.
 */
#ifndef SYM_REPORT_H
#define SYM_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "sim/config.h"
#include "sim/engine.h"
#include "sim/goodput.h"

/* The result object of one run (command: "sim", "goodput", ...), with
 * "replications": 1, the criterion and the run's verdict under it
 * (meets_criterion, worst_model, worst_model_bad_rate, failing_models,
 * few_request_models). */
cJSON *sym_result_json(const char *command, const struct sym_experiment *e, const struct sym_run_result *r);

/* The result object of replicated goodput searches: the result of run r (the
 * first seed's run at its goodput, g->by_seed[0].run, or a rerun of it) with
 * a config that reruns r (its rate, or its segments, scaled to g->run_scale;
 * a rate_csv schedule is echoed unscaled), then goodput_rps (the mean over
 * the seeds), goodput_ci95 ([low, high], null for one seed), replications,
 * goodput_by_seed, metrics_from ({seed, rate_rps}: the run the metrics are
 * from), rate_scale, upper_bound_rps and the first seed's bisection steps
 * ("search"). NULL on ENOMEM. */
cJSON *sym_goodput_result_json(const struct sym_experiment *e, const struct sym_goodput_reps *g,
			       const struct sym_run_result *r);

/* [low, high], the 95% interval of the mean of x[0..n), or null for n < 2. */
cJSON *sym_ci95_json(const double *x, size_t n);

/* "MEAN" (n = 1) or "MEAN ± HALF" (the 95% interval's half-width), each
 * printed with fmt (e.g. "%.1f"), into buf. Returns buf. */
const char *sym_format_pm(char *buf, size_t len, const char *fmt, const double *x, size_t n);

/* The human-readable table of one run, with its worst model and verdict. */
void sym_result_print(FILE *f, const char *command, const struct sym_experiment *e,
		      const struct sym_run_result *r);

/* When some models of r had fewer than sym_min_requests() measured
 * requests, a warning on f naming them (`what` says where: "", "at the
 * goodput", ...). Returns their number. */
size_t sym_warn_few_requests(FILE *f, const char *what, const struct sym_experiment *e,
			     const struct sym_run_result *r);

/* Writes doc to path ("-" = stdout) atomically. Returns 0 or -errno with a
 * message in err. */
int sym_write_json(const char *path, const cJSON *doc, char *err, size_t errlen);

/* Writes the timeline CSV: per interval, offered, good, bad, busy GPUs, GPUs in
 * use and the autoscaling advice. */
int sym_write_timeline(const char *path, const struct sym_experiment *e, const struct sym_run_result *r,
		       char *err, size_t errlen);

/* Writes the per-model timeline CSV (the run must have counted it): per
 * interval and model, offered, good and bad. */
int sym_write_model_timeline(const char *path, const struct sym_experiment *e, const struct sym_run_result *r,
			     char *err, size_t errlen);

/* Atomic file output: open a temporary beside path, then commit (rename) or
 * abort (unlink). */
struct sym_outfile {
	FILE *f;
	char path[1024];
	char tmp[1100];
};
int sym_outfile_open(struct sym_outfile *o, const char *path, char *err, size_t errlen);
int sym_outfile_commit(struct sym_outfile *o, char *err, size_t errlen);
void sym_outfile_abort(struct sym_outfile *o);

#endif
