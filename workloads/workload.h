/* workloads/workload.h - arrival processes, popularity and rate schedules.
 *
 * An arrival process produces the arrival times of one model's requests. It is
 * a renewal process (gamma, Poisson or uniform gaps) run in *operational time*:
 * a unit-rate process whose clock advances by rate(t) dt. Mapping it back to
 * real time through a piecewise-constant rate schedule gives a process whose
 * instantaneous rate follows the schedule while keeping the gap distribution's
 * shape (the coefficient of variation of a gamma:K process is 1/sqrt(K)).
 *
 * Every generator owns its own GSL random stream seeded from (seed, stream
 * id), so models draw independent, reproducible sequences: the same seed gives
 * the same arrival times whatever else the run contains. Gaps are drawn as
 * unit-mean variates and scaled by 1/rate, so at a fixed seed a higher rate
 * gives the same pattern compressed (common random numbers for searches).
 *
 * Not thread-safe per object; distinct objects may be used from distinct
 * threads.
 */
#ifndef SYM_WORKLOAD_H
#define SYM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "core/time.h"

enum sym_arrival_kind {
	SYM_ARRIVAL_POISSON, /* exponential gaps (gamma with shape 1) */
	SYM_ARRIVAL_GAMMA,   /* gamma gaps with the given shape; < 1 is burstier */
	SYM_ARRIVAL_UNIFORM, /* constant gaps 1/rate */
};

struct sym_arrival_spec {
	enum sym_arrival_kind kind;
	double shape; /* gamma shape K > 0; 1 for poisson; unused for uniform */
};

/* The gamma shapes the simulator honours. Gaps are Gamma(K, 1/K): as K
 * falls, they are almost all ~0 with a rare long one, so arrivals come in
 * bursts of about 1/K requests at one instant, and a run of N requests per
 * model sees about N*K bursts: its offered load is then mostly chance (the
 * relative spread of its request count is 1/sqrt(N*K)). Below 0.001 a run
 * of a million requests holds fewer than a thousand bursts, and GSL's
 * sampler (Gamma(1+K) * U^(1/K)) returns exactly 0 for most draws (for
 * U < e^(-708 K): half of them at K = 0.001, every one at 1e-300, when a
 * whole run arrives in one instant). Above 1e6 the gaps differ from
 * uniform by less than 0.1% (CV 1/sqrt(K)): use uniform. */
#define SYM_GAMMA_SHAPE_MIN 0.001
#define SYM_GAMMA_SHAPE_MAX 1e6

/* Parses "poisson", "uniform" or "gamma:K" (K a finite number from
 * SYM_GAMMA_SHAPE_MIN to SYM_GAMMA_SHAPE_MAX).
 * Returns 0, or -EINVAL for anything else (out is then untouched). */
int sym_arrival_parse(const char *text, struct sym_arrival_spec *out);

/* Writes the canonical text of spec ("poisson", "uniform", "gamma:0.5") into
 * buf (NUL-terminated, truncated to len). Returns buf. */
char *sym_arrival_format(const struct sym_arrival_spec *spec, char *buf, size_t len);

/* One piece of a rate schedule: `rate` requests per second for `duration`. */
struct sym_rate_segment {
	sym_time duration; /* > 0 */
	double rate;       /* >= 0, finite */
};

/* An arrival generator for one model.
 *
 * With nseg == 0 the rate is the constant `rate` forever. With nseg > 0 the
 * schedule is seg[0], seg[1], ... starting at time 0, each rate multiplied by
 * `scale` (so a schedule of total rates times a model's popularity share gives
 * that model's schedule); after the last segment the rate is 0 and no further
 * arrivals come. The segments are copied. */
struct sym_arrivals {
	struct sym_arrival_spec spec;
	gsl_rng *rng;
	struct sym_rate_segment *seg; /* owned copy, NULL when constant */
	size_t nseg;
	double rate;     /* constant rate, or the scale for a schedule */
	size_t cur;      /* index of the current segment */
	sym_time cur_start;  /* real time at which segment cur started */
	double op_left;  /* operational time not yet consumed in segment cur */
	sym_time last;   /* the last arrival returned, or 0 */
	double pos;      /* real time of the last arrival as a double, in ns */
	/* replay (sym_arrivals_init_replay): borrowed times and sizes */
	const sym_time *rtimes;
	const double *rsizes;
	size_t rn, ri;   /* times, and the next one's index */
	uint64_t rloop;  /* repetitions done */
	sym_time rperiod;
	uint64_t rseed;  /* the thinning's random stream */
	uint64_t rleft;  /* copies of the current request still to come */
	double size;     /* the last arrival's size, 0: none */
};

/* A replaying generator: the n arrival times times[0..n) (sorted, >= 0;
 * borrowed, they must outlive it), repeated every `period` (> the last
 * time), so that the stream never ends: times[i], then period + times[i],
 * ... The time axis stays; `scale` multiplies the rate by repeating or
 * thinning requests in place: each request arrives floor(scale) times, plus
 * once more with probability frac(scale), drawn from (seed, stream) and its
 * position, so that the requests kept at a scale are kept at every larger
 * one (common random numbers for searches). At scale 1 exactly the trace.
 * sizes[0..n) (borrowed, or NULL) are the requests' sizes
 * (sym_arrivals_size). scale 0 or n 0: no arrivals. Returns 0 or -EINVAL. */
int sym_arrivals_init_replay(struct sym_arrivals *a, const sym_time *times, const double *sizes, size_t n,
			     sym_time period, double scale, uint64_t seed, uint64_t stream);

/* The size of the arrival sym_arrivals_next last returned, relative to the
 * model's profiled request (1), or 0 when the generator gives none (drawn
 * processes; a trace without a size column). */
double sym_arrivals_size(const struct sym_arrivals *a);

/* Initialises a generator. rate must be finite and >= 0 (0 means no arrivals),
 * seg may be NULL when nseg is 0. seed and stream select the random stream
 * (see sym_seed_stream). Returns 0, -EINVAL for a bad rate, shape or segment,
 * or -ENOMEM. */
int sym_arrivals_init(struct sym_arrivals *a, const struct sym_arrival_spec *spec,
		      double rate, const struct sym_rate_segment *seg, size_t nseg,
		      uint64_t seed, uint64_t stream);

/* The next arrival time (strictly non-decreasing; the first is > 0 unless the
 * first gap is 0), or SYM_TIME_NEVER when the schedule has ended or the rate
 * is 0. */
sym_time sym_arrivals_next(struct sym_arrivals *a);

/* Releases the generator's memory. Accepts NULL and a zeroed object. */
void sym_arrivals_finish(struct sym_arrivals *a);

/* Derives an independent 64-bit seed for stream `stream` of a run seeded with
 * `seed` (splitmix64 of both); used to seed GSL generators. */
uint64_t sym_seed_stream(uint64_t seed, uint64_t stream);

/* Popularity across models: each model's share of the total rate. */
enum sym_popularity_kind { SYM_POP_EQUAL, SYM_POP_ZIPF };
struct sym_popularity {
	enum sym_popularity_kind kind;
	double s; /* zipf exponent >= 0 (0 is equal) */
};

/* Parses "equal" or "zipf:S" (0 <= S <= SYM_ZIPF_MAX: beyond, every model
 * but the first has a share below 2^-100, no requests). Returns 0 or
 * -EINVAL. */
#define SYM_ZIPF_MAX 100
int sym_popularity_parse(const char *text, struct sym_popularity *out);
char *sym_popularity_format(const struct sym_popularity *p, char *buf, size_t len);

/* Fills shares[0..n) with the popularity shares, summing to 1: equal gives
 * 1/n each; zipf gives share_i proportional to 1/(i+1)^s (model i in order). */
void sym_popularity_shares(const struct sym_popularity *p, size_t n, double *shares);

/* The bounds of a rate table: rows (seconds) and a rate. */
#define SYM_RATE_TABLE_MAX_ROWS 10000000
#define SYM_RATE_MAX 1e9

/* A per-second rate table read from CSV, for replaying a trace.
 *
 * File format: a header line naming the columns, then one line per second.
 * An optional first column named "second", "t" or "time" is ignored (its
 * values must then be 0, 1, 2, ... in order). Every other column is a model
 * name and its values are that model's rate in requests per second (from 0
 * to SYM_RATE_MAX); at most SYM_RATE_TABLE_MAX_ROWS rows. Blank lines and lines starting with '#' are skipped. */
struct sym_rate_table {
	size_t ncols;    /* number of model columns */
	char **names;    /* ncols model names, owned */
	size_t nrows;    /* number of seconds */
	double *rates;   /* nrows * ncols, row-major: rates[row * ncols + col] */
};

/* Loads a rate table. On error returns -EINVAL (malformed content), -ENOENT
 * or -EIO (cannot read) or -ENOMEM, writes a one-line message naming the file,
 * the line and what was expected into err (if errlen > 0) and leaves t zeroed. */
int sym_rate_table_load(const char *path, struct sym_rate_table *t, char *err, size_t errlen);

/* Index of the column named `name`, or -1. */
int sym_rate_table_find(const struct sym_rate_table *t, const char *name);

/* Builds the schedule of column col: one 1-second segment per row. *out is
 * malloc'ed (caller frees) with t->nrows entries. Returns 0 or -ENOMEM. */
int sym_rate_table_segments(const struct sym_rate_table *t, size_t col,
			    struct sym_rate_segment **out, size_t *nseg);

void sym_rate_table_finish(struct sym_rate_table *t);

/* A per-request arrival trace read from CSV (what an experiment's
 * `arrival_trace` replays).
 *
 * File format: a header line, "time_s,model" or "time_s,model,size", then one
 * line per request: its arrival time in seconds from the trace's start (from
 * 0 to below SYM_TRACE_MAX_S, in any order), its model's name (at most 63 bytes)
 * and, with the third column, its size relative to the model's profiled
 * request (above 0, at most 1000; 1 is the profile's). Blank lines and lines
 * starting with '#' are skipped; at most SYM_TRACE_MAX_ROWS requests. Its
 * length is its last arrival's second rounded up (a trace whose last request
 * arrives at 59.2 s is 60 s long; one at exactly 60 s is 61 s long), at
 * least 1 s. */
#define SYM_TRACE_MAX_ROWS 50000000
#define SYM_TRACE_MAX_S 1e7
#define SYM_TRACE_MAX_SIZE 1000
struct sym_trace {
	size_t nmodels;       /* distinct model names, in order of first appearance */
	char **names;
	size_t *count;        /* requests per model */
	sym_time **times;     /* per model, count[m] times, sorted */
	double **sizes;       /* per model, count[m] sizes; NULL without a size column */
	double *peak;         /* per model: the most requests that arrive in one second */
	double peak_total;    /* the most requests of all models together in one second */
	sym_time length;      /* whole seconds, > every arrival */
	size_t n;             /* requests */
};

/* Loads a trace; errors as sym_rate_table_load's (the message names the file,
 * the line and what was expected); t is zeroed on error. */
int sym_trace_load(const char *path, struct sym_trace *t, char *err, size_t errlen);

/* Index of the model named `name`, or -1. */
int sym_trace_find(const struct sym_trace *t, const char *name);

void sym_trace_finish(struct sym_trace *t);

#endif
