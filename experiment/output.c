#include "experiment/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiment/interrupt.h"

bool sym_output_is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

/* Follows symbolic links from path to the file they lead to: its name in
 * target and, when it exists, its status in *st (*exists). Returns 0 or
 * -errno (-ELOOP after 40 links). */
static int resolve(const char *path, char *target, size_t len, struct stat *st, bool *exists)
{
	char cur[1024], link[1024];
	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return -ENAMETOOLONG;
	for (int hops = 0; hops < 40; hops++) {
		*exists = lstat(cur, st) == 0;
		if (!*exists && errno != ENOENT)
			return -errno;
		if (!*exists || !S_ISLNK(st->st_mode))
			return snprintf(target, len, "%s", cur) >= (int)len ? -ENAMETOOLONG : 0;
		ssize_t n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		if ((size_t)n >= sizeof(link) - 1)
			return -ENAMETOOLONG;
		link[n] = '\0';
		char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			memcpy(cur, link, (size_t)n + 1);
		} else { /* relative to the link's directory */
			size_t dlen = (size_t)(slash - cur) + 1;
			if (dlen + (size_t)n >= sizeof(cur))
				return -ENAMETOOLONG;
			memcpy(cur + dlen, link, (size_t)n + 1);
		}
	}
	return -ELOOP;
}

/* The directory of file name `path` ("." for a bare name) in dir. */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* What path leads to: its kind and target, or -EINVAL with a message. */
static int classify(const char *what, const char *path, enum sym_outfile_kind *kind, char *target, size_t tlen,
		    struct stat *st, bool *exists, char *err, size_t errlen)
{
	if (!path[0])
		return snprintf(err, errlen, "%s: the output file name is empty (give a file, or - for standard output)",
				what), -EINVAL;
	if (sym_output_is_stdout(path)) {
		*kind = SYM_OUT_STDOUT;
		*exists = false;
		snprintf(target, tlen, "-");
		return 0;
	}
	int rc = resolve(path, target, tlen, st, exists);
	if (rc)
		return snprintf(err, errlen, "%s: %s: %s", what, path, strerror(-rc)), -EINVAL;
	const char *via = strcmp(target, path) ? " (where its symbolic link leads)" : "";
	if (*exists && S_ISDIR(st->st_mode))
		return snprintf(err, errlen, "%s: %s is a directory%s; give a file name, or - for standard output", what,
				target, via), -EINVAL;
	if (*exists && S_ISSOCK(st->st_mode))
		return snprintf(err, errlen, "%s: %s is a socket%s; give a file, a FIFO or - for standard output", what,
				target, via), -EINVAL;
	if (*exists && !S_ISREG(st->st_mode)) {
		*kind = SYM_OUT_DIRECT; /* a device or a FIFO */
		return 0;
	}
	*kind = SYM_OUT_ATOMIC;
	char dir[1024];
	struct stat ds;
	dir_of(target, dir, sizeof(dir));
	if (stat(dir, &ds) || !S_ISDIR(ds.st_mode))
		return snprintf(err, errlen, "%s: cannot write %s%s: no directory %s", what, target, via, dir), -EINVAL;
	if (access(dir, W_OK | X_OK))
		return snprintf(err, errlen, "%s: cannot write %s%s: directory %s: %s", what, target, via, dir,
				strerror(errno)), -EINVAL;
	return 0;
}

int sym_output_check(const char *what, const char *path, char *err, size_t errlen)
{
	enum sym_outfile_kind kind;
	char target[1024];
	struct stat st;
	bool exists;
	return classify(what, path, &kind, target, sizeof(target), &st, &exists, err, errlen);
}

/* Whether a and b (both checked) are the same output; /dev/null is never in the way. */
static bool same_output(const char *a, const char *b)
{
	if (sym_output_is_stdout(a) || sym_output_is_stdout(b))
		return sym_output_is_stdout(a) && sym_output_is_stdout(b);
	char ta[1024], tb[1024];
	struct stat sa, sb, null;
	bool ea, eb;
	if (resolve(a, ta, sizeof(ta), &sa, &ea) || resolve(b, tb, sizeof(tb), &sb, &eb))
		return !strcmp(a, b);
	if (ea && eb) {
		if (S_ISCHR(sa.st_mode) && !stat("/dev/null", &null) && S_ISCHR(null.st_mode) && sa.st_rdev == null.st_rdev)
			return false;
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	}
	return !ea && !eb && !strcmp(ta, tb);
}

int sym_outputs_check(const char *const *names, const char *const *paths, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		char what[96];
		snprintf(what, sizeof(what), "option %s", names[i]);
		if (sym_output_check(what, paths[i], err, errlen))
			return -EINVAL;
		for (size_t j = 0; j < i; j++) {
			if (!paths[j] || !same_output(paths[i], paths[j]))
				continue;
			if (sym_output_is_stdout(paths[i]))
				return snprintf(err, errlen, "options %s and %s both write to standard output (-), where they "
						"would interleave; give one of them a file", names[j], names[i]), -EINVAL;
			bool same_name = !strcmp(paths[i], paths[j]);
			return snprintf(err, errlen, "options %s and %s both write %s%s%s%s; give each its own file", names[j],
					names[i], paths[j], same_name ? "" : " (as ", same_name ? "" : paths[i],
					same_name ? "" : ")"), -EINVAL;
		}
	}
	return 0;
}

int sym_outfile_open(struct sym_outfile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->slot = -1;
	if (strlen(path) >= sizeof(o->path))
		return snprintf(err, errlen, "%s: path too long", path), -ENAMETOOLONG;
	snprintf(o->path, sizeof(o->path), "%s", path);
	struct stat st;
	bool exists;
	char what[1100];
	snprintf(what, sizeof(what), "output %s", path);
	if (classify(what, path, &o->kind, o->target, sizeof(o->target), &st, &exists, err, errlen))
		return -EINVAL;
	if (o->kind == SYM_OUT_STDOUT) {
		o->f = stdout;
		return 0;
	}
	int fd;
	if (o->kind == SYM_OUT_DIRECT) {
		fd = open(o->target, O_WRONLY | O_CLOEXEC);
	} else {
		if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld", o->target, (long)getpid()) >= (int)sizeof(o->tmp))
			return snprintf(err, errlen, "%s: path too long", path), -ENAMETOOLONG;
		/* registered first: a signal from here on removes it */
		o->slot = sym_interrupt_add_temp(o->tmp);
		if (o->slot < 0)
			return snprintf(err, errlen, "%s: %s", path, o->slot == -EMFILE ? "too many outputs at once"
									     : strerror(-o->slot)), o->slot;
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd >= 0 && exists && fchmod(fd, st.st_mode & 07777)) { /* keeps the file's permissions */
			int e = errno;
			close(fd);
			unlink(o->tmp);
			errno = e;
			fd = -1;
		}
	}
	o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o->f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (o->kind == SYM_OUT_ATOMIC)
			unlink(o->tmp);
		sym_interrupt_forget(o->slot);
		o->slot = -1;
		snprintf(err, errlen, "%s: cannot %s: %s", o->kind == SYM_OUT_ATOMIC ? o->tmp : path,
			 o->kind == SYM_OUT_ATOMIC ? "create" : "open", strerror(e));
		return -e;
	}
	return 0;
}

int sym_outfile_commit(struct sym_outfile *o, char *err, size_t errlen)
{
	if (!o->f)
		return snprintf(err, errlen, "%s: internal error: not open", o->path), -EINVAL;
	int e = 0;
	if (fflush(o->f))
		e = errno ? errno : EIO;
	else if (ferror(o->f))
		e = EIO;
	if (o->kind == SYM_OUT_STDOUT) {
		o->f = NULL;
		if (e)
			snprintf(err, errlen, "standard output: cannot write: %s", strerror(e));
		return -e;
	}
	if (fclose(o->f) && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (o->kind == SYM_OUT_ATOMIC && !e && rename(o->tmp, o->target))
		e = errno;
	if (o->kind == SYM_OUT_ATOMIC) {
		if (e) {
			unlink(o->tmp);
			sym_interrupt_forget(o->slot);
		} else {
			sym_interrupt_kept(o->slot, o->path);
		}
		o->slot = -1;
	}
	if (e)
		snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(e));
	return -e;
}

void sym_outfile_abort(struct sym_outfile *o)
{
	if (!o->f)
		return;
	if (o->kind == SYM_OUT_STDOUT) {
		fflush(stdout);
	} else {
		fclose(o->f);
		if (o->kind == SYM_OUT_ATOMIC) {
			unlink(o->tmp);
			sym_interrupt_forget(o->slot);
			o->slot = -1;
		}
	}
	o->f = NULL;
}

int sym_write_json(const char *path, const cJSON *doc, char *err, size_t errlen)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	struct sym_outfile o;
	int rc = sym_outfile_open(&o, path, err, errlen);
	if (!rc) {
		fputs(text, o.f);
		fputc('\n', o.f);
		rc = sym_outfile_commit(&o, err, errlen);
	}
	free(text);
	return rc;
}

int sym_write_sidecar(const struct sym_outfile *csv, const cJSON *meta, char *err, size_t errlen)
{
	if (csv->kind != SYM_OUT_ATOMIC)
		return 0;
	char path[1100];
	if (snprintf(path, sizeof(path), "%s.meta.json", csv->path) >= (int)sizeof(path))
		return snprintf(err, errlen, "%s.meta.json: path too long", csv->path), -ENAMETOOLONG;
	return sym_write_json(path, meta, err, errlen);
}
