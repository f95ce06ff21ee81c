/* The library's own `ompt_start_tool`, weak, as libomp has one: a program linked against the
 * library then exports its own definition (the linker exports a symbol a shared library it
 * links with defines), so that the runtime's tool search finds the program's tool in the
 * process. When the program has none, the search finds this one, which passes the call on to
 * the next library in the process that defines one (a tool loaded with the program), if any. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef void *(*oxiomp_start_tool_fn)(unsigned int, const char *);

__attribute__((weak, visibility("default"))) void *ompt_start_tool(unsigned int version,
                                                                    const char *runtime_version) {
    oxiomp_start_tool_fn next = (oxiomp_start_tool_fn)dlsym(RTLD_NEXT, "ompt_start_tool");
    return next ? next(version, runtime_version) : NULL;
}
