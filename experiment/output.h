/* experiment/output.h - result files written whole or not at all.
 *
 * A regular file is written to a temporary beside it and renamed into place,
 * so a failed or interrupted run never leaves a half-written result.
 */
#ifndef SYM_OUTPUT_H
#define SYM_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* Writes doc to path ("-" = stdout) atomically. Returns 0 or -errno with a
 * message in err. */
int sym_write_json(const char *path, const cJSON *doc, char *err, size_t errlen);

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
