// abi_direct.c - entry points libomp exports but clang-19 does not emit, called directly with
// oxiomp's contract (so this runs on oxiomp only):
//  * __kmpc_sections_init / __kmpc_next_section / __kmpc_end_sections: every section once
//  * __kmpc_barrier_master / __kmpc_end_barrier_master: the others wait for the primary's block;
//    __kmpc_barrier_master_nowait: only the primary gets 1
//  * __kmpc_copyprivate_light: every thread gets the single thread's pointer
//  * __kmpc_*_lock and __kmpc_*_nest_lock on user storage; __kmpc_init_lock_with_hint and
//    __kmpc_init_nest_lock_with_hint (each hint): mutual exclusion, nesting counts, and
//    __kmpc_test_lock / __kmpc_test_nest_lock fail on a lock another thread holds
//  * __kmpc_threadprivate_register / _cached: a constructor that itself uses another
//    threadprivate variable (the registry's lock was held around constructors: a deadlock)
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "kmp_abi.h"
static ident_t loc = {0, 2, 0, 22, ";unknown;unknown;0;0;;"};

int32_t __kmpc_sections_init(ident_t *, int32_t);
int32_t __kmpc_next_section(ident_t *, int32_t, int32_t);
void __kmpc_end_sections(ident_t *, int32_t);
int32_t __kmpc_barrier_master(ident_t *, int32_t);
void __kmpc_end_barrier_master(ident_t *, int32_t);
int32_t __kmpc_barrier_master_nowait(ident_t *, int32_t);
void __kmpc_barrier(ident_t *, int32_t);
void *__kmpc_copyprivate_light(ident_t *, int32_t, void *);
void __kmpc_init_lock(ident_t *, int32_t, void **);
void __kmpc_set_lock(ident_t *, int32_t, void **);
void __kmpc_unset_lock(ident_t *, int32_t, void **);
int __kmpc_test_lock(ident_t *, int32_t, void **);
void __kmpc_destroy_lock(ident_t *, int32_t, void **);
void __kmpc_init_nest_lock(ident_t *, int32_t, void **);
void __kmpc_set_nest_lock(ident_t *, int32_t, void **);
void __kmpc_unset_nest_lock(ident_t *, int32_t, void **);
int __kmpc_test_nest_lock(ident_t *, int32_t, void **);
void __kmpc_destroy_nest_lock(ident_t *, int32_t, void **);
void __kmpc_init_lock_with_hint(ident_t *, int32_t, void **, uintptr_t);
void __kmpc_init_nest_lock_with_hint(ident_t *, int32_t, void **, uintptr_t);


#include "check.h"

static int tp_b = 5, tp_a = 0;
static void **cache_a, **cache_b;

// A's constructor reads the calling thread's copy of B.
static void *ctor_a(void *p) {
  int *b = __kmpc_threadprivate_cached(&loc, __kmpc_global_thread_num(&loc), &tp_b,
                                       sizeof tp_b, &cache_b);
  *(int *)p = *b + 1;
  return p;
}

// Workers' copies of A: B's value (5, copied from the original) plus 1.
static void nested_constructors(void) {
  __kmpc_threadprivate_register(&loc, &tp_a, ctor_a, NULL, NULL);
  int bad = 0;
#pragma omp parallel num_threads(3) reduction(+ : bad)
  {
    int32_t g = __kmpc_global_thread_num(&loc);
    int *a = __kmpc_threadprivate_cached(&loc, g, &tp_a, sizeof tp_a, &cache_a);
    if (a != &tp_a) bad += *a != 6;
  }
  CHECK_EQ("a constructor using another threadprivate variable", bad, 0);
}

// Locks made with each hint: a counter under the lock, a nest lock's counts, and test_lock
// on a lock the other thread of a pair holds.
static void hinted_locks(void) {
  static const uintptr_t hints[] = {0, 1, 2, 4, 8, 1 | 4, 2 | 8};
  for (int h = 0; h < (int)(sizeof hints / sizeof hints[0]); h++) {
    void *lock, *nest;
    int32_t g0 = __kmpc_global_thread_num(&loc);
    __kmpc_init_lock_with_hint(&loc, g0, &lock, hints[h]);
    __kmpc_init_nest_lock_with_hint(&loc, g0, &nest, hints[h]);
    int counter = 0, nth = 0, test_free = -1, test_held = -1, nest_held = -1, nest_counts = 1;
#pragma omp parallel
    {
      int32_t g = __kmpc_global_thread_num(&loc);
#pragma omp single
      nth = omp_get_num_threads();
      for (int i = 0; i < 500; i++) {
        __kmpc_set_lock(&loc, g, &lock);
        int v = counter;
        counter = v + 1;
        __kmpc_unset_lock(&loc, g, &lock);
        __kmpc_set_nest_lock(&loc, g, &nest);
        if (__kmpc_test_nest_lock(&loc, g, &nest) != 2) nest_counts = 0;
        __kmpc_unset_nest_lock(&loc, g, &nest);
        __kmpc_unset_nest_lock(&loc, g, &nest);
      }
    }
#pragma omp parallel num_threads(2)
    {
      int32_t g = __kmpc_global_thread_num(&loc);
      int me = omp_get_thread_num();
      if (omp_get_num_threads() < 2) { /* a team of one (a thread limit): nothing to test */
        test_held = nest_held = 0;
        test_free = 1;
        me = -1;
      }
      if (me == 0) {
        __kmpc_set_lock(&loc, g, &lock);
        __kmpc_set_nest_lock(&loc, g, &nest);
      }
#pragma omp barrier
      if (me == 1) {
        test_held = __kmpc_test_lock(&loc, g, &lock);
        nest_held = __kmpc_test_nest_lock(&loc, g, &nest);
      }
#pragma omp barrier
      if (me == 0) {
        __kmpc_unset_nest_lock(&loc, g, &nest);
        __kmpc_unset_lock(&loc, g, &lock);
      }
#pragma omp barrier
      if (me == 1) {
        test_free = __kmpc_test_lock(&loc, g, &lock);
        if (test_free) __kmpc_unset_lock(&loc, g, &lock);
      }
    }
    CHECK_EQ("hinted lock: mutual exclusion", counter, 500 * nth);
    CHECK_EQ("hinted nest lock: count 2 when re-entered", nest_counts, 1);
    CHECK_EQ("hinted lock: test_lock fails while another thread holds it", test_held, 0);
    CHECK_EQ("hinted nest lock: test fails while another thread holds it", nest_held, 0);
    CHECK_EQ("hinted lock: test_lock takes it once free", test_free, 1);
    __kmpc_destroy_lock(&loc, g0, &lock);
    __kmpc_destroy_nest_lock(&loc, g0, &nest);
  }
}

int main(void) {
  nested_constructors();
  hinted_locks();
  enum { NSEC = 37 };
  int ran[NSEC] = {0};
  int block_done = 0, after_block_ok = 1, nowait_ones = 0, light_ok = 1, counter = 0;
  void *lock, *nest;
  int32_t g0 = __kmpc_global_thread_num(&loc);
  __kmpc_init_lock(&loc, g0, &lock);
  __kmpc_init_nest_lock(&loc, g0, &nest);
#pragma omp parallel
  {
    int32_t g = __kmpc_global_thread_num(&loc);
    for (int rep = 0; rep < 3; rep++) {
      __kmpc_sections_init(&loc, g);
      for (int s; (s = __kmpc_next_section(&loc, g, NSEC)) < NSEC;) __atomic_fetch_add(&ran[s], 1, __ATOMIC_RELAXED);
      __kmpc_end_sections(&loc, g);
      __kmpc_barrier(&loc, g);
    }
    if (__kmpc_barrier_master(&loc, g)) {
      __atomic_store_n(&block_done, 1, __ATOMIC_RELAXED);
      __kmpc_end_barrier_master(&loc, g);
    } else if (!__atomic_load_n(&block_done, __ATOMIC_RELAXED)) {
      after_block_ok = 0;
    }
    if (__kmpc_barrier_master_nowait(&loc, g)) __atomic_fetch_add(&nowait_ones, 1, __ATOMIC_RELAXED);
    static int source = 1234;
    int *got = __kmpc_copyprivate_light(&loc, g, omp_get_thread_num() == 0 ? &source : NULL);
    if (got != &source) light_ok = 0;
    __kmpc_barrier(&loc, g);
    for (int i = 0; i < 1000; i++) {
      __kmpc_set_lock(&loc, g, &lock);
      int v = counter;
      counter = v + 1;
      __kmpc_unset_lock(&loc, g, &lock);
    }
    __kmpc_set_nest_lock(&loc, g, &nest);
    CHECK("nest lock re-entry count", __kmpc_test_nest_lock(&loc, g, &nest) == 2);
    __kmpc_unset_nest_lock(&loc, g, &nest);
    __kmpc_unset_nest_lock(&loc, g, &nest);
  }
  int nth = omp_get_max_threads();
  for (int s = 0; s < NSEC; s++) CHECK("every section three times", ran[s] == 3);
  CHECK("barrier_master: others waited for the primary's block", after_block_ok);
  CHECK("barrier_master_nowait: one primary", nowait_ones == 1);
  CHECK("copyprivate_light: everybody got the source", light_ok);
  CHECK("__kmpc_set_lock: mutual exclusion", counter == 1000 * nth);
  CHECK("__kmpc_test_lock on a free lock", __kmpc_test_lock(&loc, g0, &lock) == 1);
  __kmpc_unset_lock(&loc, g0, &lock);
  __kmpc_destroy_lock(&loc, g0, &lock);
  __kmpc_destroy_nest_lock(&loc, g0, &nest);
  if (failures) return 1;
  printf("ok abi_direct\n");
  return 0;
}
