#include "core/build.h"

#include "sym_commit.h"
#include "sym_version.h"

const char *sym_build_version(void) { return SYM_VERSION; }

const char *sym_build_commit(void) { return SYM_COMMIT; }

const char *sym_build_type(void) { return SYM_BUILD_TYPE; }
