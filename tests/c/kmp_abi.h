// kmp_abi.h - the kmp ABI's types and the entries that several test programs call directly
// (clang-19's layouts: ../../../shared/notes/kmpc-abi.md); a test declares the entries only
// it uses itself.
#ifndef OXIOMP_TEST_KMP_ABI_H
#define OXIOMP_TEST_KMP_ABI_H
#include <stddef.h>
#include <stdint.h>

typedef struct { int32_t r1, flags, r2, r3; const char *psource; } ident_t;
typedef struct kmp_task {
  void *shareds;
  int32_t (*routine)(int32_t, struct kmp_task *);
  int32_t part_id;
} kmp_task_t;
typedef struct { intptr_t base_addr; size_t len; uint8_t flags; } kmp_depend_info_t;

int32_t __kmpc_global_thread_num(ident_t *);
kmp_task_t *__kmpc_omp_task_alloc(ident_t *, int32_t, int32_t, size_t, size_t,
                                  int32_t (*)(int32_t, kmp_task_t *));
int32_t __kmpc_omp_task_with_deps(ident_t *, int32_t, kmp_task_t *, int32_t,
                                  kmp_depend_info_t *, int32_t, kmp_depend_info_t *);
void __kmpc_threadprivate_register(ident_t *, void *, void *(*)(void *),
                                   void *(*)(void *, void *), void (*)(void *));
void *__kmpc_threadprivate_cached(ident_t *, int32_t, void *, size_t, void ***);
#endif
