// lock_sleepers.c - critical sections and omp_lock_t with waiters that go to sleep at once
// (KMP_BLOCKTIME=0): a release that finds a sleeper must wake it (the frame-less fast path of
// __kmpc_end_critical / omp_unset_lock fails its CAS then and the slow path wakes).
//  * unnamed critical around a read / yield / write increment: exact total
//  * omp_set_lock / omp_unset_lock around the same pattern: exact total
//  * a named critical used for the first time by every thread at once (its lock is installed
//    by whichever thread comes first): exact total
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: env=KMP_BLOCKTIME=0
#include <omp.h>
#include <sched.h>

#include "check.h"

#define PER_THREAD 3000

static volatile long c_crit, c_lock, c_first;

static void slow_increment(volatile long *p, int i) {
  long v = *p;
  if (i % 7 == 0) sched_yield(); /* the holder sleeps a little: waiters park */
  *p = v + 1;
}

int main(void) {
  omp_lock_t lock;
  omp_init_lock(&lock);
  int nt = 0;
#pragma omp parallel
  {
#pragma omp single
    nt = omp_get_num_threads();
#pragma omp critical(first_use)
    slow_increment(&c_first, 0);
    for (int i = 0; i < PER_THREAD; i++) {
#pragma omp critical
      slow_increment(&c_crit, i);
      omp_set_lock(&lock);
      slow_increment(&c_lock, i);
      omp_unset_lock(&lock);
    }
  }
  omp_destroy_lock(&lock);
  CHECK_EQ("critical with sleeping waiters: lost updates", c_crit, (long)nt * PER_THREAD);
  CHECK_EQ("omp_lock_t with sleeping waiters: lost updates", c_lock, (long)nt * PER_THREAD);
  CHECK_EQ("first use of a named critical by every thread", c_first, nt);
  return failures != 0;
}
