/* experiment/output.h - where a command's output options write.
 *
 * Every output option (--json, --trace, --timeline, --model-timeline,
 * --csv, ...) takes a path, or "-" for standard output. A path is written
 * according to what it names:
 *   - nothing yet, or a regular file: a temporary beside it
 *     (NAME.tmp.PID), renamed onto it when complete, so a failed or
 *     interrupted run never leaves a half-written result (an existing file
 *     keeps its permissions);
 *   - a symbolic link: the same, beside the file the link leads to (followed
 *     to the end, even when that file does not exist yet), which is replaced;
 *     the link stays a link;
 *   - a character or block device or a FIFO (/dev/null, /dev/stdout, a named
 *     pipe): opened and written directly, no temporary and no rename;
 *   - a directory or a socket: refused.
 * The temporaries are registered with experiment/interrupt.h, so a signal
 * removes them. Write errors (ENOSPC from /dev/full, a full disk) are
 * reported with the path.
 *
 * A CSV is machine-readable: one header line, then rows, no comments. What
 * describes it (provenance, configuration, units) goes to a sidecar,
 * FILE.meta.json, written beside a CSV written to a file; a CSV written to
 * standard output or a device has none.
 */
#ifndef SYM_OUTPUT_H
#define SYM_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* Whether path is "-", standard output. */
bool sym_output_is_stdout(const char *path);

/* Checks one output path before anything runs: not empty, not a directory
 * or a socket (after following symbolic links), and for a file to create, a
 * directory that exists and can take it. `what` names the option in the
 * message ("option --json"). Returns 0 or -EINVAL with a message in err. */
int sym_output_check(const char *what, const char *path, char *err, size_t errlen);

/* Checks the output options of one command together: each as above, at most
 * one of them on standard output (two would interleave), and no path given
 * to two of them. names[i] names option i ("--json"); a NULL path is an
 * option not given. Returns 0 or -EINVAL with a message in err. */
int sym_outputs_check(const char *const *names, const char *const *paths, size_t n, char *err, size_t errlen);

/* Writes doc to path ("-" = stdout), as above. Returns 0 or -errno with a
 * message in err. */
int sym_write_json(const char *path, const cJSON *doc, char *err, size_t errlen);

enum sym_outfile_kind {
	SYM_OUT_STDOUT, /* "-" */
	SYM_OUT_DIRECT, /* a device or FIFO, written as it is */
	SYM_OUT_ATOMIC, /* a file (or a link's target): a temporary renamed onto it */
};

/* One output: open, write to f, then commit (complete it) or abort (remove
 * the temporary; what went to a device or stdout stays). */
struct sym_outfile {
	FILE *f;
	enum sym_outfile_kind kind;
	int slot;           /* the temporary's slot in experiment/interrupt.h, or -1 */
	char path[1024];    /* as given */
	char target[1024];  /* the file written: path, or where its symbolic links lead */
	char tmp[1100];     /* SYM_OUT_ATOMIC: the temporary */
};
int sym_outfile_open(struct sym_outfile *o, const char *path, char *err, size_t errlen);
int sym_outfile_commit(struct sym_outfile *o, char *err, size_t errlen);
void sym_outfile_abort(struct sym_outfile *o);

/* After a CSV's commit: its sidecar PATH.meta.json, holding meta, when the
 * CSV went to a file (nothing for stdout or a device). Returns 0 or -errno
 * with a message in err. */
int sym_write_sidecar(const struct sym_outfile *csv, const cJSON *meta, char *err, size_t errlen);

#endif
