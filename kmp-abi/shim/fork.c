/* The variadic entry points of the kmpc ABI. Rust cannot define C-variadic functions on stable,
 * so these collect the pointer-sized arguments into an array and hand them to the Rust layer.
 * clang passes every fork argument as one 8-byte INTEGER-class value (pointers, or scalars
 * bit-copied into 64 bits), so reading them as void * is exact. */
#include <stdarg.h>
#include <stdint.h>

typedef struct ident ident_t;
typedef void (*kmpc_micro)(int32_t *gtid, int32_t *btid, ...);

void oxiomp_fork_call_args(ident_t *loc, int32_t argc, kmpc_micro fn, void **argv);
void oxiomp_fork_teams_args(ident_t *loc, int32_t argc, kmpc_micro fn, void **argv);

#define COLLECT_AND_CALL(target)                                   \
  int32_t n = argc > 0 ? argc : 0;                                 \
  void *argv[n > 0 ? n : 1];                                       \
  va_list ap;                                                      \
  va_start(ap, fn);                                                \
  for (int32_t i = 0; i < n; i++) argv[i] = va_arg(ap, void *);    \
  va_end(ap);                                                      \
  target(loc, n, fn, argv);

__attribute__((visibility("default"))) void __kmpc_fork_call(ident_t *loc, int32_t argc, kmpc_micro fn, ...) {
  COLLECT_AND_CALL(oxiomp_fork_call_args)
}

__attribute__((visibility("default"))) void __kmpc_fork_teams(ident_t *loc, int32_t argc, kmpc_micro fn, ...) {
  COLLECT_AND_CALL(oxiomp_fork_teams_args)
}
