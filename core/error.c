#include "core/error.h"

#include <string.h>

const char *sym_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case -EINVAL: return "invalid argument";
	case -ENOMEM: return "out of memory";
	case -ENOENT: return "no such entry";
	case -ERANGE: return "value out of range";
	case -EEXIST: return "already exists";
	case -EIO: return "input/output error";
	default: return err < 0 ? strerror(-err) : "unknown error";
	}
}
