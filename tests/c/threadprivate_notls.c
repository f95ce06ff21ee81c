// threadprivate_notls.c - threadprivate.c built with -fnoopenmp-use-tls, so
// every access to a threadprivate variable goes through
// __kmpc_threadprivate_cached (one cache pointer per variable, owned by the
// runtime) and copyin compares the returned pointer with the original's
// address. Same checks as threadprivate.c: per-thread copies, the primary's
// copy is the original, static initial values, persistence across regions,
// copyin.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: cflags=-fnoopenmp-use-tls
// oxiomp-test: gcc=skip: built with a clang-only flag (-fnoopenmp-use-tls)
#define TP_NAME "threadprivate_notls"
#include "threadprivate.c"
