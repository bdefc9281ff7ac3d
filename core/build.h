/* core/build.h - which build this is: the program's version and the git
 * commit it was built from, for every result to echo. */
#ifndef SYM_BUILD_H
#define SYM_BUILD_H

/* The project version ("0.1.0"). */
const char *sym_build_version(void);

/* `git describe --always --dirty` of the source tree at build time (a commit
 * hash, with "-dirty" when the tree had uncommitted changes), or "unknown"
 * when built outside a git checkout. */
const char *sym_build_commit(void);

/* The meson build type of this binary ("release", "debug", ...). */
const char *sym_build_type(void);

#endif
