#include "experiment/output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sym_outfile_open(struct sym_outfile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (strlen(path) >= sizeof(o->path))
		return snprintf(err, errlen, "%s: path too long", path), -EINVAL;
	snprintf(o->path, sizeof(o->path), "%s", path);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld", path, (long)getpid());
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

int sym_outfile_commit(struct sym_outfile *o, char *err, size_t errlen)
{
	int bad = ferror(o->f);
	bad |= fclose(o->f) != 0;
	o->f = NULL;
	if (bad || rename(o->tmp, o->path)) {
		int e = errno ? errno : EIO;
		unlink(o->tmp);
		snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(e));
		return -e;
	}
	return 0;
}

void sym_outfile_abort(struct sym_outfile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		unlink(o->tmp);
	}
}

int sym_write_json(const char *path, const cJSON *doc, char *err, size_t errlen)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	int rc = 0;
	if (!strcmp(path, "-")) {
		fputs(text, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	} else {
		struct sym_outfile o;
		rc = sym_outfile_open(&o, path, err, errlen);
		if (!rc) {
			fputs(text, o.f);
			fputc('\n', o.f);
			rc = sym_outfile_commit(&o, err, errlen);
		}
	}
	free(text);
	return rc;
}
