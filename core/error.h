/* core/error.h - error codes.
 *
 * Functions that can fail return 0 on success or a negative errno-style code
 * (-EINVAL for bad input, -ENOMEM for allocation failure, -ENOENT for an
 * unknown name, -ERANGE for a value out of range). sym_strerror() turns a code
 * into a short English phrase. A function that fails calls no callback and
 * leaves its outputs unspecified unless its header says otherwise.
 */
#ifndef SYM_ERROR_H
#define SYM_ERROR_H

#include <errno.h>

const char *sym_strerror(int err);

#endif
