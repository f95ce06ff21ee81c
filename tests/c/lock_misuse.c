// lock_misuse.c - releasing what the caller does not hold is reported, naming the call, and
// changes nothing (the fast paths of omp_unset_lock / __kmpc_end_critical fail their CAS and
// the slow paths report):
//  * omp_unset_lock on a free lock; the lock still works afterwards
//  * omp_unset_lock by a thread while another holds the lock: the holder keeps it
//  * __kmpc_end_critical on a name never entered, and on a section another thread holds: the
//    holder keeps it
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: stderr-contains=oxiomp: error: omp_unset_lock: the lock is not held
// oxiomp-test: stderr-contains=oxiomp: error: omp_unset_lock: the lock is held by another thread
// oxiomp-test: stderr-contains=oxiomp: error: __kmpc_end_critical: the calling thread is not inside this critical section
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <stdint.h>

#include "check.h"

#include "kmp_abi.h"
static ident_t loc = {0, 2, 0, 22, ";unknown;unknown;0;0;;"};
typedef int32_t kmp_critical_name[8];
void __kmpc_critical(ident_t *, int32_t, kmp_critical_name *);
void __kmpc_end_critical(ident_t *, int32_t, kmp_critical_name *);

static kmp_critical_name never_entered, held_name;

int main(void) {
  omp_lock_t lock;
  omp_init_lock(&lock);
  omp_unset_lock(&lock); /* not held: reported */
  CHECK_EQ("omp_test_lock after a stray unset", omp_test_lock(&lock) != 0, 1);
  omp_unset_lock(&lock);

  int32_t g = __kmpc_global_thread_num(&loc);
  __kmpc_end_critical(&loc, g, &never_entered); /* reported */
  __kmpc_critical(&loc, g, &never_entered);    /* still usable */
  __kmpc_end_critical(&loc, g, &never_entered);

  int nt = 0, still_held = -1, crit_kept = -1;
  volatile int in_section = 0;
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    int32_t gt = __kmpc_global_thread_num(&loc);
#pragma omp single
    nt = omp_get_num_threads();
    if (t == 0) {
      omp_set_lock(&lock);
      __kmpc_critical(&loc, gt, &held_name);
      in_section = 1;
    }
#pragma omp barrier
    if (t == 1) {
      omp_unset_lock(&lock); /* held by thread 0: reported, not released */
      still_held = omp_test_lock(&lock) == 0;
      __kmpc_end_critical(&loc, gt, &held_name); /* reported, not released */
    }
#pragma omp barrier
    if (t == 0) {
      crit_kept = in_section;
      in_section = 0;
      __kmpc_end_critical(&loc, gt, &held_name);
      omp_unset_lock(&lock);
    }
#pragma omp barrier
    if (t == 1) { /* both free again */
      __kmpc_critical(&loc, gt, &held_name);
      __kmpc_end_critical(&loc, gt, &held_name);
      omp_set_lock(&lock);
      omp_unset_lock(&lock);
    }
  }
  CHECK_EQ("team of two", nt, 2);
  CHECK_EQ("a stray unset by another thread leaves the lock held", still_held, 1);
  CHECK_EQ("thread 0 still inside its section after the stray end", crit_kept, 1);
  omp_destroy_lock(&lock);
  return failures != 0;
}
