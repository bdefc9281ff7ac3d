/* workloads/workload.c - arrival processes, popularity and rate schedules.
 *
 * See workload.h for the model. The core idea: gaps are drawn in operational
 * time as unit-mean variates, and the real-time position advances by
 * gap / rate(t), walking across the segments of a piecewise-constant rate
 * schedule when a gap does not fit in what is left of the current segment.
 */
#include "workloads/workload.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <gsl/gsl_randist.h>

#include "core/error.h"
#include "core/grow.h"

/* Largest real-time position (ns) we convert back to sym_time; anything
 * beyond is treated as never (keeps the double -> int64 cast defined). */
#define POS_MAX 9.0e18

/* ---- parsing helpers ---------------------------------------------------- */

/* Strictly parses a whole string as a finite double: no leading space, no
 * trailing characters, no overflow/underflow, no inf/nan. */
static int parse_number(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* If text starts with prefix, returns the rest, else NULL. */
static const char *after_prefix(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(text, prefix, n) == 0 ? text + n : NULL;
}

/* ---- arrival specs ------------------------------------------------------ */

int sym_arrival_parse(const char *text, struct sym_arrival_spec *out)
{
	const char *rest;
	double k;

	if (!text || !out)
		return -EINVAL;
	if (strcmp(text, "poisson") == 0) {
		out->kind = SYM_ARRIVAL_POISSON;
		out->shape = 1.0;
		return 0;
	}
	if (strcmp(text, "uniform") == 0) {
		out->kind = SYM_ARRIVAL_UNIFORM;
		out->shape = 1.0;
		return 0;
	}
	rest = after_prefix(text, "gamma:");
	if (!rest || parse_number(rest, &k) < 0 || !(k >= SYM_GAMMA_SHAPE_MIN) || !(k <= SYM_GAMMA_SHAPE_MAX))
		return -EINVAL;
	out->kind = SYM_ARRIVAL_GAMMA;
	out->shape = k;
	return 0;
}

/* The shortest decimal text of v that reads back exactly. */
static const char *exact(double v, char *num, size_t len)
{
	snprintf(num, len, "%.15g", v);
	if (strtod(num, NULL) != v)
		snprintf(num, len, "%.17g", v);
	return num;
}

char *sym_arrival_format(const struct sym_arrival_spec *spec, char *buf, size_t len)
{
	char num[32];
	if (!buf || len == 0)
		return buf;
	switch (spec->kind) {
	case SYM_ARRIVAL_POISSON: snprintf(buf, len, "poisson"); break;
	case SYM_ARRIVAL_UNIFORM: snprintf(buf, len, "uniform"); break;
	case SYM_ARRIVAL_GAMMA: snprintf(buf, len, "gamma:%s", exact(spec->shape, num, sizeof(num))); break;
	default: snprintf(buf, len, "unknown"); break;
	}
	return buf;
}

/* ---- seeding ------------------------------------------------------------ */

#define GOLDEN 0x9e3779b97f4a7c15ULL

/* The splitmix64 finaliser: a bijection on 64-bit values. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t sym_seed_stream(uint64_t seed, uint64_t stream)
{
	/* For a fixed seed, base + (stream + 1) * GOLDEN is injective in stream
	 * (GOLDEN is odd, so invertible mod 2^64) and mix64 is a bijection, so
	 * distinct streams always get distinct seeds. */
	uint64_t base = mix64(seed + GOLDEN);
	return mix64(base + (stream + 1) * GOLDEN);
}

/* GSL's mt19937 uses only the low 32 bits of its seed and replaces 0 by a
 * fixed default; fold the high half in and keep the result non-zero. */
static unsigned long gsl_seed(uint64_t s)
{
	unsigned long v = (unsigned long)((s ^ (s >> 32)) & 0xffffffffULL);
	return v ? v : 1UL;
}

/* ---- arrival generators ------------------------------------------------- */

/* Operational time available in segment i: rate * duration (in seconds). */
static double seg_capacity(const struct sym_arrivals *a, size_t i)
{
	return a->seg[i].rate * a->rate * ((double)a->seg[i].duration / 1e9);
}

int sym_arrivals_init(struct sym_arrivals *a, const struct sym_arrival_spec *spec,
		      double rate, const struct sym_rate_segment *seg, size_t nseg,
		      uint64_t seed, uint64_t stream)
{
	sym_time total = 0;

	memset(a, 0, sizeof(*a));
	if (!spec || !isfinite(rate) || rate < 0 || (nseg > 0 && !seg))
		return -EINVAL;
	switch (spec->kind) {
	case SYM_ARRIVAL_POISSON:
	case SYM_ARRIVAL_UNIFORM:
		break;
	case SYM_ARRIVAL_GAMMA:
		if (!isfinite(spec->shape) || !(spec->shape > 0))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	for (size_t i = 0; i < nseg; i++) {
		if (seg[i].duration <= 0 || !isfinite(seg[i].rate) || seg[i].rate < 0)
			return -EINVAL;
		if (seg[i].duration > INT64_MAX - total)
			return -EINVAL; /* schedule end would overflow sym_time */
		total += seg[i].duration;
	}

	if (nseg > 0) {
		a->seg = malloc(nseg * sizeof(*a->seg));
		if (!a->seg)
			return -ENOMEM;
		memcpy(a->seg, seg, nseg * sizeof(*a->seg));
	}
	a->rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!a->rng) {
		free(a->seg);
		memset(a, 0, sizeof(*a));
		return -ENOMEM;
	}
	gsl_rng_set(a->rng, gsl_seed(sym_seed_stream(seed, stream)));

	a->spec = *spec;
	if (a->spec.kind != SYM_ARRIVAL_GAMMA)
		a->spec.shape = 1.0;
	a->nseg = nseg;
	a->rate = rate;
	a->cur = 0;
	a->cur_start = 0;
	a->op_left = nseg > 0 ? seg_capacity(a, 0) : 0;
	a->last = 0;
	a->pos = 0;
	return 0;
}

/* One unit-mean gap in operational time. */
static double draw_gap(struct sym_arrivals *a)
{
	switch (a->spec.kind) {
	case SYM_ARRIVAL_POISSON:
		return gsl_ran_exponential(a->rng, 1.0);
	case SYM_ARRIVAL_GAMMA:
		return gsl_ran_gamma(a->rng, a->spec.shape, 1.0 / a->spec.shape);
	case SYM_ARRIVAL_UNIFORM:
	default:
		return 1.0;
	}
}

/* Returns the arrival at real position a->pos, or ends the process. */
static sym_time emit(struct sym_arrivals *a)
{
	sym_time t;

	if (!(a->pos < POS_MAX)) {
		a->last = SYM_TIME_NEVER;
		return SYM_TIME_NEVER;
	}
	t = (sym_time)(a->pos + 0.5);
	if (t < a->last) /* floating-point noise at a segment boundary */
		t = a->last;
	a->last = t;
	return t;
}

int sym_arrivals_init_replay(struct sym_arrivals *a, const sym_time *times, const double *sizes, size_t n,
			     sym_time period, double scale, uint64_t seed, uint64_t stream)
{
	memset(a, 0, sizeof(*a));
	if ((n && !times) || !isfinite(scale) || scale < 0 || scale > 1e12 || period <= 0 ||
	    (n && times[n - 1] >= period))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (times[i] < 0 || (i && times[i] < times[i - 1]))
			return -EINVAL;
	a->rtimes = times;
	a->rsizes = sizes;
	a->rn = n;
	a->rperiod = period;
	a->rate = scale;
	a->rseed = sym_seed_stream(seed, stream);
	a->spec.kind = SYM_ARRIVAL_UNIFORM;
	a->spec.shape = 1.0;
	if (!n || !(scale > 0))
		a->last = SYM_TIME_NEVER;
	return 0;
}

double sym_arrivals_size(const struct sym_arrivals *a)
{
	return a->size;
}

/* How many times request `index` (over the repetitions) arrives at the
 * generator's scale: its whole part, and one more below the fraction. */
static uint64_t replay_copies(const struct sym_arrivals *a, uint64_t index)
{
	double whole = floor(a->rate), frac = a->rate - whole;
	double u = (double)(mix64(a->rseed ^ mix64(index)) >> 11) * 0x1.0p-53;
	return (uint64_t)whole + (u < frac);
}

/* The next replayed arrival: the trace from its start again after each
 * period, each request repeated or thinned by the scale. */
static sym_time replay_next(struct sym_arrivals *a)
{
	if (a->last == SYM_TIME_NEVER)
		return SYM_TIME_NEVER;
	if (a->rleft) { /* another copy of the request just given */
		a->rleft--;
		return a->last;
	}
	for (;;) {
		if (a->rloop > (uint64_t)((INT64_MAX - a->rtimes[a->ri]) / a->rperiod)) {
			a->last = SYM_TIME_NEVER;
			return SYM_TIME_NEVER;
		}
		sym_time t = (sym_time)a->rloop * a->rperiod + a->rtimes[a->ri];
		double size = a->rsizes ? a->rsizes[a->ri] : 0;
		uint64_t k = replay_copies(a, a->rloop * a->rn + a->ri);
		if (++a->ri == a->rn) {
			a->ri = 0;
			a->rloop++;
		}
		if (!k)
			continue; /* thinned out */
		a->last = t;
		a->size = size;
		a->rleft = k - 1;
		return t;
	}
}

sym_time sym_arrivals_next(struct sym_arrivals *a)
{
	double need;

	if (a->rperiod > 0)
		return replay_next(a);

	/* last == NEVER marks a process that has ended (schedule over, rate 0
	 * or time overflow); it stays ended. */
	if (!a->rng || a->last == SYM_TIME_NEVER)
		return SYM_TIME_NEVER;

	if (a->nseg == 0) {
		if (!(a->rate > 0)) {
			a->last = SYM_TIME_NEVER;
			return SYM_TIME_NEVER;
		}
		/* Constant rate r: an operational gap g takes g / r seconds.
		 * The position accumulates in a double and is rounded only on
		 * output, so per-gap rounding to whole ns cannot drift. */
		a->pos += draw_gap(a) * 1e9 / a->rate;
		return emit(a);
	}

	/* Schedule: segment i runs at r_i = seg[i].rate * scale and offers
	 * r_i * duration_i units of operational time. Consume the gap from
	 * the current segment's remainder (op_left); if it does not fit, use
	 * up the remainder, jump the real position to the next segment's
	 * start and continue there. Zero-rate segments offer nothing and are
	 * thus crossed in real time without consuming anything. */
	need = draw_gap(a);
	while (a->cur < a->nseg) {
		double r = a->seg[a->cur].rate * a->rate;

		if (r > 0 && need <= a->op_left) {
			/* Fits: within a segment real time = op time / r. */
			a->op_left -= need;
			a->pos += need * 1e9 / r;
			return emit(a);
		}
		if (r > 0)
			need -= a->op_left;
		a->cur_start += a->seg[a->cur].duration;
		a->cur++;
		/* Restart from the exact integer boundary: no drift across
		 * segments. */
		a->pos = (double)a->cur_start;
		if (a->cur < a->nseg)
			a->op_left = seg_capacity(a, a->cur);
	}
	a->op_left = 0;
	a->last = SYM_TIME_NEVER;
	return SYM_TIME_NEVER;
}

void sym_arrivals_finish(struct sym_arrivals *a)
{
	if (!a)
		return;
	if (a->rng)
		gsl_rng_free(a->rng);
	free(a->seg);
	memset(a, 0, sizeof(*a));
}

/* ---- popularity --------------------------------------------------------- */

int sym_popularity_parse(const char *text, struct sym_popularity *out)
{
	const char *rest;
	double s;

	if (!text || !out)
		return -EINVAL;
	if (strcmp(text, "equal") == 0) {
		out->kind = SYM_POP_EQUAL;
		out->s = 0;
		return 0;
	}
	rest = after_prefix(text, "zipf:");
	if (!rest || parse_number(rest, &s) < 0 || !(s >= 0) || !(s <= SYM_ZIPF_MAX))
		return -EINVAL;
	out->kind = SYM_POP_ZIPF;
	out->s = s + 0.0; /* turns -0 into +0 */
	return 0;
}

char *sym_popularity_format(const struct sym_popularity *p, char *buf, size_t len)
{
	char num[32];
	if (!buf || len == 0)
		return buf;
	if (p->kind == SYM_POP_ZIPF)
		snprintf(buf, len, "zipf:%s", exact(p->s, num, sizeof(num)));
	else
		snprintf(buf, len, "equal");
	return buf;
}

void sym_popularity_shares(const struct sym_popularity *p, size_t n, double *shares)
{
	double sum = 0;

	if (n == 0)
		return;
	if (p->kind != SYM_POP_ZIPF) {
		for (size_t i = 0; i < n; i++)
			shares[i] = 1.0 / (double)n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		shares[i] = pow((double)(i + 1), -p->s);
		sum += shares[i];
	}
	for (size_t i = 0; i < n; i++)
		shares[i] /= sum;
}

/* ---- rate tables -------------------------------------------------------- */

#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Trims spaces and tabs at both ends, in place. */
static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = '\0';
	return s;
}

/* Splits line at commas in place into at most max fields (the count is
 * returned even when it exceeds max). */
static size_t split_fields(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *p = line;

	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (n < max)
			fields[n] = trim(p);
		n++;
		if (!comma)
			return n;
		p = comma + 1;
	}
}

static size_t count_fields(const char *line)
{
	size_t n = 1;
	for (; *line; line++)
		n += *line == ',';
	return n;
}

static int is_time_name(const char *s)
{
	return strcmp(s, "second") == 0 || strcmp(s, "t") == 0 || strcmp(s, "time") == 0;
}

/* One CSV file being read: where, and the two parsers of its lines. */
struct csv_src {
	const char *path;
	char *err;
	size_t errlen;
	unsigned long lineno;
	size_t rows;        /* data rows read */
	int (*header)(struct csv_src *src, char *line);
	int (*row)(struct csv_src *src, char *line);
};

/* State of one load, freed as a whole on error. */
struct loader {
	struct csv_src src; /* first: load_lines is given &L->src */
	struct sym_rate_table t;
	size_t cap_rows;
	int has_time;
	size_t nfields; /* fields per line, time column included */
	char **fields;  /* nfields scratch pointers */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Rejects repeated column names: sorts a copy of the names, O(n log n). */
static int check_unique(struct loader *L, size_t n)
{
	char **s = malloc(n * sizeof(*s));

	if (!s)
		return -ENOMEM;
	memcpy(s, L->fields, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_str);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(s[i], s[i - 1]) == 0) {
			set_err(L->src.err, L->src.errlen,
				"%s:%lu: expected unique column names, '%s' is repeated",
				L->src.path, L->src.lineno, s[i]);
			free(s);
			return -EINVAL;
		}
	}
	free(s);
	return 0;
}

/* Parses the header line into the model names. */
static int load_header(struct csv_src *src, char *line)
{
	struct loader *L = (struct loader *)src;
	size_t n = count_fields(line), first;
	int rc;

	L->fields = calloc(n, sizeof(*L->fields));
	if (!L->fields)
		return -ENOMEM;
	L->nfields = split_fields(line, L->fields, n);
	for (size_t i = 0; i < n; i++) {
		if (!*L->fields[i]) {
			set_err(L->src.err, L->src.errlen, "%s:%lu: expected a column name in column %zu",
				L->src.path, L->src.lineno, i + 1);
			return -EINVAL;
		}
	}
	if ((rc = check_unique(L, n)) < 0)
		return rc;
	L->has_time = is_time_name(L->fields[0]);
	first = L->has_time ? 1 : 0;
	if (n <= first) {
		set_err(L->src.err, L->src.errlen, "%s:%lu: expected at least one model column",
			L->src.path, L->src.lineno);
		return -EINVAL;
	}
	L->t.names = calloc(n - first, sizeof(*L->t.names));
	if (!L->t.names)
		return -ENOMEM;
	for (size_t i = first; i < n; i++) {
		L->t.names[i - first] = strdup(L->fields[i]);
		if (!L->t.names[i - first])
			return -ENOMEM;
		L->t.ncols++;
	}
	return 0;
}

/* Parses one data line into the next row of rates. */
static int load_row(struct csv_src *src, char *line)
{
	struct loader *L = (struct loader *)src;
	struct sym_rate_table *t = &L->t;
	size_t n = split_fields(line, L->fields, L->nfields);
	size_t first = L->has_time ? 1 : 0;
	double *row;

	if (n != L->nfields) {
		set_err(L->src.err, L->src.errlen, "%s:%lu: expected %zu fields, found %zu",
			L->src.path, L->src.lineno, L->nfields, n);
		return -EINVAL;
	}
	if (L->has_time) {
		double v;
		if (parse_number(L->fields[0], &v) < 0 || v != (double)t->nrows) {
			set_err(L->src.err, L->src.errlen, "%s:%lu: expected time %zu in column 1, found '%s'",
				L->src.path, L->src.lineno, t->nrows, L->fields[0]);
			return -EINVAL;
		}
	}
	if (t->nrows == SYM_RATE_TABLE_MAX_ROWS) {
		set_err(L->src.err, L->src.errlen, "%s:%lu: more than %d rows (seconds); a run lasts at most that long",
			L->src.path, L->src.lineno, SYM_RATE_TABLE_MAX_ROWS);
		return -EINVAL;
	}
	/* a row is ncols rates: room for one more */
	if (sym_grow(&t->rates, &L->cap_rows, t->nrows + 1, t->ncols * sizeof(double), 64))
		return -ENOMEM;
	row = t->rates + t->nrows * t->ncols;
	for (size_t i = first; i < n; i++) {
		double v;
		if (parse_number(L->fields[i], &v) < 0 || v < 0 || v > SYM_RATE_MAX) {
			set_err(L->src.err, L->src.errlen,
				"%s:%lu: expected a rate from 0 to %g req/s in column %zu, found '%s'",
				L->src.path, L->src.lineno, SYM_RATE_MAX, i + 1, L->fields[i]);
			return -EINVAL;
		}
		row[i - first] = v + 0.0; /* -0 -> +0 */
	}
	t->nrows++;
	return 0;
}

/* Reads the file line by line, giving the first line that is not blank or a
 * comment to src->header and every later one to src->row; returns 0 or a
 * negative code (the message is already written except for -ENOMEM/-EIO,
 * written by the caller). */
static int load_lines(struct csv_src *src, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int rc = 0, have_header = 0;

	while ((got = getline(&line, &cap, f)) >= 0) {
		size_t len = (size_t)got;
		char *s = line;

		src->lineno++;
		if (strlen(line) != len) {
			set_err(src->err, src->errlen, "%s:%lu: expected text, found a NUL byte", src->path, src->lineno);
			rc = -EINVAL;
			break;
		}
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (src->lineno == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
			s += 3; /* UTF-8 byte order mark */
		s = trim(s);
		if (!*s || *s == '#')
			continue;
		rc = have_header ? src->row(src, s) : src->header(src, s);
		if (rc < 0)
			break;
		if (have_header)
			src->rows++;
		have_header = 1;
	}
	free(line);
	if (rc < 0)
		return rc;
	if (ferror(f)) {
		set_err(src->err, src->errlen, "%s:%lu: read error", src->path, src->lineno + 1);
		return -EIO;
	}
	if (!have_header) {
		set_err(src->err, src->errlen, "%s:%lu: expected a header line naming the columns", src->path,
			src->lineno + 1);
		return -EINVAL;
	}
	if (src->rows == 0) {
		set_err(src->err, src->errlen, "%s:%lu: expected at least one data row", src->path, src->lineno + 1);
		return -EINVAL;
	}
	return 0;
}

/* Opens path and reads it with load_lines; -ENOENT / -EIO with a message when it cannot. */
static int load_file(struct csv_src *src)
{
	FILE *f = fopen(src->path, "r");
	if (!f) {
		int e = errno;
		set_err(src->err, src->errlen, "%s: cannot open: %s", src->path, strerror(e));
		return e == ENOENT ? -ENOENT : -EIO;
	}
	int rc = load_lines(src, f);
	fclose(f);
	if (rc == -ENOMEM)
		set_err(src->err, src->errlen, "%s:%lu: out of memory", src->path, src->lineno);
	return rc;
}

int sym_rate_table_load(const char *path, struct sym_rate_table *t, char *err, size_t errlen)
{
	struct loader L = { .src = { .path = path, .err = err, .errlen = errlen, .header = load_header,
				     .row = load_row } };

	memset(t, 0, sizeof(*t));
	if (err && errlen > 0)
		err[0] = '\0';
	int rc = load_file(&L.src);
	free(L.fields);
	if (rc < 0) {
		sym_rate_table_finish(&L.t);
		return rc;
	}
	/* Trim the row buffer to size (a failure just keeps the larger one). */
	{
		double *r = realloc(L.t.rates, L.t.nrows * L.t.ncols * sizeof(double));
		if (r)
			L.t.rates = r;
	}
	*t = L.t;
	return 0;
}

int sym_rate_table_find(const struct sym_rate_table *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->names[i], name) == 0)
			return (int)i;
	return -1;
}

int sym_rate_table_segments(const struct sym_rate_table *t, size_t col,
			    struct sym_rate_segment **out, size_t *nseg)
{
	struct sym_rate_segment *s;

	*out = NULL;
	*nseg = 0;
	if (col >= t->ncols)
		return -EINVAL;
	if (t->nrows == 0)
		return 0;
	s = malloc(t->nrows * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t r = 0; r < t->nrows; r++) {
		s[r].duration = SYM_S;
		s[r].rate = t->rates[r * t->ncols + col];
	}
	*out = s;
	*nseg = t->nrows;
	return 0;
}

void sym_rate_table_finish(struct sym_rate_table *t)
{
	if (!t)
		return;
	if (t->names)
		for (size_t i = 0; i < t->ncols; i++)
			free(t->names[i]);
	free(t->names);
	free(t->rates);
	memset(t, 0, sizeof(*t));
}

/* ---- per-request traces ------------------------------------------------- */

struct trace_row {
	sym_time t;
	double size;
	uint32_t model;
};

/* State of one trace load, freed as a whole on error. */
struct tloader {
	struct csv_src src; /* first: load_lines is given &L->src */
	struct sym_trace t;
	bool has_size;
	size_t cap_names, cap_rows, last; /* last: the previous row's model, looked up first */
	struct trace_row *rows;
};

static int trace_header(struct csv_src *src, char *line)
{
	struct tloader *L = (struct tloader *)src;
	char *f[4];
	size_t n = split_fields(line, f, 4);
	if ((n != 2 && n != 3) || strcmp(f[0], "time_s") || strcmp(f[1], "model") || (n == 3 && strcmp(f[2], "size"))) {
		set_err(src->err, src->errlen, "%s:%lu: expected the header time_s,model or time_s,model,size", src->path,
			src->lineno);
		return -EINVAL;
	}
	L->has_size = n == 3;
	return 0;
}

/* The index of model `name`, added when new; -1 out of memory. */
static long trace_model(struct tloader *L, const char *name)
{
	struct sym_trace *t = &L->t;
	if (L->last < t->nmodels && !strcmp(t->names[L->last], name))
		return (long)L->last;
	for (size_t m = 0; m < t->nmodels; m++)
		if (!strcmp(t->names[m], name))
			return (long)(L->last = m);
	if (sym_grow(&t->names, &L->cap_names, t->nmodels + 1, sizeof(*t->names), 16))
		return -1;
	if (!(t->names[t->nmodels] = strdup(name)))
		return -1;
	return (long)(L->last = t->nmodels++);
}

static int trace_row(struct csv_src *src, char *line)
{
	struct tloader *L = (struct tloader *)src;
	char *f[3];
	size_t want = L->has_size ? 3 : 2, n = split_fields(line, f, 3);
	double v, size = 0;
	if (n != want) {
		set_err(src->err, src->errlen, "%s:%lu: expected %zu fields, found %zu", src->path, src->lineno, want, n);
		return -EINVAL;
	}
	if (parse_number(f[0], &v) < 0 || v < 0 || v >= SYM_TRACE_MAX_S) {
		set_err(src->err, src->errlen,
			"%s:%lu: expected an arrival time from 0 to below %g s in column 1 (a run lasts at most that "
			"long), found '%s'", src->path, src->lineno, SYM_TRACE_MAX_S, f[0]);
		return -EINVAL;
	}
	if (!*f[1] || strlen(f[1]) > 63) {
		set_err(src->err, src->errlen, "%s:%lu: expected a model name of 1 to 63 bytes in column 2, found '%.80s'",
			src->path, src->lineno, f[1]);
		return -EINVAL;
	}
	if (L->has_size && (parse_number(f[2], &size) < 0 || !(size > 0) || size > SYM_TRACE_MAX_SIZE)) {
		set_err(src->err, src->errlen, "%s:%lu: expected a size above 0 and at most %d in column 3, found '%s'",
			src->path, src->lineno, SYM_TRACE_MAX_SIZE, f[2]);
		return -EINVAL;
	}
	if (src->rows == SYM_TRACE_MAX_ROWS) {
		set_err(src->err, src->errlen, "%s:%lu: more than %d requests", src->path, src->lineno, SYM_TRACE_MAX_ROWS);
		return -EINVAL;
	}
	if (sym_grow(&L->rows, &L->cap_rows, src->rows + 1, sizeof(*L->rows), 1024))
		return -ENOMEM;
	long m = trace_model(L, f[1]);
	if (m < 0)
		return -ENOMEM;
	L->rows[src->rows] = (struct trace_row){ .t = (sym_time)llround(v * 1e9), .size = size, .model = (uint32_t)m };
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct trace_row *x = a, *y = b;
	if (x->model != y->model)
		return x->model < y->model ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/* Splits the rows (sorted by model, then time) into the per-model arrays, with the peaks. */
static int trace_split(struct tloader *L)
{
	struct sym_trace *t = &L->t;
	size_t n = L->src.rows, nm = t->nmodels;
	t->n = n;
	t->count = calloc(nm, sizeof(*t->count));
	t->times = calloc(nm, sizeof(*t->times));
	t->peak = calloc(nm, sizeof(*t->peak));
	if (L->has_size)
		t->sizes = calloc(nm, sizeof(*t->sizes));
	if (!t->count || !t->times || !t->peak || (L->has_size && !t->sizes))
		return -ENOMEM;
	sym_time last = 0;
	for (size_t i = 0; i < n; i++) {
		t->count[L->rows[i].model]++;
		last = L->rows[i].t > last ? L->rows[i].t : last;
	}
	t->length = (last / SYM_S + 1) * SYM_S;
	size_t secs = (size_t)(t->length / SYM_S);
	uint32_t *bins = calloc(secs, sizeof(*bins)), *mine = calloc(secs, sizeof(*mine));
	if (!bins || !mine) {
		free(bins);
		free(mine);
		return -ENOMEM;
	}
	int rc = 0;
	for (size_t m = 0, i = 0; m < nm && !rc; m++) {
		size_t c = t->count[m];
		t->times[m] = malloc(c * sizeof(sym_time));
		if (L->has_size)
			t->sizes[m] = malloc(c * sizeof(double));
		if (!t->times[m] || (L->has_size && !t->sizes[m])) {
			rc = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < c; k++, i++) {
			size_t sec = (size_t)(L->rows[i].t / SYM_S);
			t->times[m][k] = L->rows[i].t;
			if (L->has_size)
				t->sizes[m][k] = L->rows[i].size;
			bins[sec]++;
			if (++mine[sec] > t->peak[m])
				t->peak[m] = mine[sec];
		}
		for (size_t k = 0; k < c; k++)
			mine[(size_t)(t->times[m][k] / SYM_S)] = 0;
	}
	for (size_t s = 0; s < secs; s++)
		t->peak_total = bins[s] > t->peak_total ? bins[s] : t->peak_total;
	free(bins);
	free(mine);
	return rc;
}

int sym_trace_load(const char *path, struct sym_trace *t, char *err, size_t errlen)
{
	struct tloader L = { .src = { .path = path, .err = err, .errlen = errlen, .header = trace_header,
				      .row = trace_row } };

	memset(t, 0, sizeof(*t));
	if (err && errlen > 0)
		err[0] = '\0';
	int rc = load_file(&L.src);
	if (!rc) {
		qsort(L.rows, L.src.rows, sizeof(*L.rows), cmp_row);
		if ((rc = trace_split(&L)) == -ENOMEM)
			set_err(err, errlen, "%s: out of memory", path);
	}
	free(L.rows);
	if (rc < 0) {
		sym_trace_finish(&L.t);
		return rc;
	}
	*t = L.t;
	return 0;
}

int sym_trace_find(const struct sym_trace *t, const char *name)
{
	for (size_t m = 0; m < t->nmodels; m++)
		if (!strcmp(t->names[m], name))
			return (int)m;
	return -1;
}

void sym_trace_finish(struct sym_trace *t)
{
	if (!t)
		return;
	for (size_t m = 0; m < t->nmodels; m++) {
		free(t->names[m]);
		if (t->times)
			free(t->times[m]);
		if (t->sizes)
			free(t->sizes[m]);
	}
	free(t->names);
	free(t->count);
	free(t->times);
	free(t->sizes);
	free(t->peak);
	memset(t, 0, sizeof(*t));
}
