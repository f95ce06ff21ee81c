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
/* clang's taskloop task: the full 40-byte kmp_task_t header, then the loop bounds (the runtime
   finds lb/ub by their offsets from the task, as clang passes &lb and &ub); privates from 80 */
typedef struct {
  kmp_task_t task;        /* 0: shareds, routine, part_id */
  intptr_t data1, data2;  /* 24, 32 */
  uint64_t lb;            /* 40 */
  uint64_t ub;            /* 48 */
  int64_t st;             /* 56 */
  int32_t liter;          /* 64 */
  void *reductions;       /* 72 */
} kmp_taskloop_t;
_Static_assert(sizeof(kmp_taskloop_t) == 80, "clang's taskloop header is 80 bytes");
_Static_assert(offsetof(kmp_taskloop_t, lb) == 40 && offsetof(kmp_taskloop_t, liter) == 64,
               "clang's taskloop header layout");
typedef void (*kmp_task_dup_t)(kmp_task_t *dst, kmp_task_t *src, int32_t lastpriv);

int32_t __kmpc_global_thread_num(ident_t *);
kmp_task_t *__kmpc_omp_task_alloc(ident_t *, int32_t, int32_t, size_t, size_t,
                                  int32_t (*)(int32_t, kmp_task_t *));
int32_t __kmpc_omp_task_with_deps(ident_t *, int32_t, kmp_task_t *, int32_t,
                                  kmp_depend_info_t *, int32_t, kmp_depend_info_t *);
/* __kmpc_taskloop plus the modifier; sched: 0 none, 1 grainsize, 2 num_tasks (the value in
   `grainsize`); modifier 1 = strict (clang-19 never emits _5: it drops `strict`) */
void __kmpc_taskloop_5(ident_t *, int32_t, kmp_task_t *, int32_t if_val, uint64_t *lb,
                       uint64_t *ub, int64_t st, int32_t nogroup, int32_t sched,
                       uint64_t grainsize, int32_t modifier, kmp_task_dup_t task_dup);
void __kmpc_threadprivate_register(ident_t *, void *, void *(*)(void *),
                                   void *(*)(void *, void *), void (*)(void *));
void *__kmpc_threadprivate_cached(ident_t *, int32_t, void *, size_t, void ***);
#endif
