#include "core/suggest.h"

#include <ctype.h>
#include <string.h>

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 40 || lb > 40)
		return 99;
	size_t d[41][41];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = d[i - 1][j - 1] +
				     (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	return d[la][lb];
}

void sym_suggest_init(struct sym_suggest *s, const char *name)
{
	s->name = name;
	s->best = NULL;
	s->dist = 99;
}

void sym_suggest_consider(struct sym_suggest *s, const char *cand)
{
	size_t d = edit_distance(s->name, cand);
	if (d > (strlen(s->name) <= 5 ? 1u : 2u))
		return;
	if (d < s->dist)
		s->best = cand, s->dist = d;
}
