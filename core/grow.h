/* core/grow.h - room in an array that grows by doubling: the one way the
 * project's growing arrays make room (a heap, a ring's backlog, a list of
 * requests, a table's rows). */
#ifndef SYM_GROW_H
#define SYM_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes the array at *arr (arr is the address of its pointer, a T **, or of
 * a NULL one) of *cap elements of `size` bytes hold at least `need`: when it
 * does not, its capacity doubles, from `first` when it is 0, until it does,
 * the array is reallocated, and the elements past the old capacity are
 * zeroed. Returns 0, or -ENOMEM (no memory, or a size past SIZE_MAX) with
 * the array and *cap as they were. */
static inline int sym_grow(void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : first ? first : 1;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (!size || n > SIZE_MAX / size)
		return -ENOMEM;
	void *old;
	memcpy(&old, arr, sizeof(old)); /* the pointer, whatever its type (object pointers share one form) */
	unsigned char *p = realloc(old, n * size);
	if (!p)
		return -ENOMEM;
	memset(p + *cap * size, 0, (n - *cap) * size);
	memcpy(arr, &p, sizeof(p));
	*cap = n;
	return 0;
}

#endif
