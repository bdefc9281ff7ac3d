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

/* The result object of one run (command: "sim", "goodput", ...). */
cJSON *sym_result_json(const char *command, const struct sym_experiment *e, const struct sym_run_result *r);

/* Adds a goodput search's goodput_rps, upper_bound_rps and steps ("search") to obj. */
void sym_goodput_add_json(cJSON *obj, const struct sym_goodput *g);

/* The human-readable table of one run. */
void sym_result_print(FILE *f, const char *command, const struct sym_experiment *e,
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
