/* core/suggest.h - "did you mean ...?": the known name nearest to a mistyped one.
 *
 * Nearness is the edit distance (insertions, deletions, substitutions),
 * ignoring case: at most 1 edit for a name of up to 5 characters ("trace"
 * is not a typo of "rate"), 2 for longer ones. Options, commands and model
 * names all suggest through it, so that they agree on what a typo is.
 */
#ifndef SYM_SUGGEST_H
#define SYM_SUGGEST_H

#include <stddef.h>

struct sym_suggest {
	const char *name; /* what was typed */
	const char *best; /* the nearest candidate so far, or NULL */
	size_t dist;
};

void sym_suggest_init(struct sym_suggest *s, const char *name);

/* Considers one candidate (the first of equally near ones wins). */
void sym_suggest_consider(struct sym_suggest *s, const char *cand);

#endif
