// critical.c - critical sections (__kmpc_critical / __kmpc_end_critical /
// __kmpc_critical_with_hint on a zeroed 32-byte kmp_critical_name):
//  * unnamed critical protecting a non-atomic counter updated with a
//    read / yield / write pattern: 2000 increments per thread, exact total
//  * two different named criticals protecting two counters, used by all
//    threads interleaved: both totals exact
//  * different names are different locks: a thread holding critical(alpha)
//    waits until another thread has been through critical(beta)
//  * critical(name) hint(omp_sync_hint_contended), hint(omp_sync_hint_speculative)
//    and hint(omp_sync_hint_uncontended | omp_sync_hint_nonspeculative)
//  * nested criticals with different names (named in named, unnamed in
//    named), a critical in a function called inside and outside a region
//  * mutual exclusion observed directly: an "inside" counter never exceeds 1
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define PER_THREAD 2000 /* unnamed critical */
#define PER_THREAD2 500 /* the other sections */

static volatile long counter, ca, cb, ch1, ch2, ch3, nested_outer, nested_inner;
static int inside, max_inside;

/* read, (sometimes) give the CPU away, write back: loses updates without
   mutual exclusion */
static void slow_increment(volatile long *p, int i) {
  long v = *p;
  if (i % 8 == 0) sched_yield();
  *p = v + 1;
}

static void enter_check(void) {
  int n = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
  if (n > __atomic_load_n(&max_inside, __ATOMIC_RELAXED))
    __atomic_store_n(&max_inside, n, __ATOMIC_RELAXED);
}
static void leave_check(void) { __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST); }

static long helper_calls;
static void helper(void) {
#pragma omp critical(helper_lock)
  helper_calls++;
}

int main(void) {
  int nth = 1;

  /* unnamed critical */
#pragma omp parallel shared(nth)
  {
#pragma omp single
    nth = omp_get_num_threads();
    for (int i = 0; i < PER_THREAD; i++) {
#pragma omp critical
      {
        enter_check();
        slow_increment(&counter, i);
        leave_check();
      }
    }
  }
  CHECK_EQ("unnamed critical counter", counter, (long)nth * PER_THREAD);
  CHECK_EQ("threads inside the unnamed critical at once (max)", max_inside, 1);

  /* two named criticals, interleaved */
#pragma omp parallel
  {
    int me = omp_get_thread_num();
    for (int i = 0; i < PER_THREAD2; i++) {
      if ((i + me) % 2 == 0) {
#pragma omp critical(alpha)
        slow_increment(&ca, i);
      } else {
#pragma omp critical(beta)
        slow_increment(&cb, i);
      }
    }
  }
  CHECK_EQ("critical(alpha) + critical(beta) total", ca + cb, (long)nth * PER_THREAD2);
  {
    /* thread t does alpha for i with (i + t) even */
    long exp_a = 0;
    for (int t = 0; t < nth; t++) exp_a += (PER_THREAD2 + ((t % 2) ? 0 : 1)) / 2;
    CHECK_EQ("critical(alpha) counter", ca, exp_a);
    CHECK_EQ("critical(beta) counter", cb, (long)nth * PER_THREAD2 - exp_a);
  }

  /* different names are different locks: thread 0 holds alpha while thread 1
     goes through beta (would hang if both names shared one lock) */
  if (nth > 1) {
    int beta_done = 0, holding = 0;
#pragma omp parallel shared(beta_done, holding)
    {
      int me = omp_get_thread_num();
      if (me == 0) {
#pragma omp critical(alpha)
        {
          __atomic_store_n(&holding, 1, __ATOMIC_SEQ_CST);
          while (!__atomic_load_n(&beta_done, __ATOMIC_SEQ_CST)) sched_yield();
        }
      } else if (me == 1) {
        while (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST)) sched_yield();
#pragma omp critical(beta)
        __atomic_store_n(&beta_done, 1, __ATOMIC_SEQ_CST);
      }
    }
    CHECK_EQ("critical(beta) entered while critical(alpha) was held", beta_done, 1);
  }

  /* hints */
  max_inside = 0;
#pragma omp parallel
  {
    for (int i = 0; i < PER_THREAD2; i++) {
#pragma omp critical(contended_lock) hint(omp_sync_hint_contended)
      {
        enter_check();
        slow_increment(&ch1, i);
        leave_check();
      }
#pragma omp critical(speculative_lock) hint(omp_sync_hint_speculative)
      slow_increment(&ch2, i);
#pragma omp critical(plain_lock) hint(omp_sync_hint_uncontended | omp_sync_hint_nonspeculative)
      slow_increment(&ch3, i);
    }
  }
  CHECK_EQ("critical hint(contended) counter", ch1, (long)nth * (PER_THREAD2));
  CHECK_EQ("critical hint(speculative) counter", ch2, (long)nth * (PER_THREAD2));
  CHECK_EQ("critical hint(uncontended|nonspeculative) counter", ch3, (long)nth * (PER_THREAD2));
  CHECK_EQ("threads inside critical hint(contended) at once (max)", max_inside, 1);

  /* nested criticals with different names */
  counter = 0;
#pragma omp parallel
  {
    for (int i = 0; i < (PER_THREAD2 / 2); i++) {
#pragma omp critical(outer)
      {
        slow_increment(&nested_outer, i);
#pragma omp critical(inner)
        slow_increment(&nested_inner, i);
#pragma omp critical
        slow_increment(&counter, i);
      }
      /* inner also used on its own */
#pragma omp critical(inner)
      slow_increment(&nested_inner, i + 1);
    }
  }
  CHECK_EQ("nested: outer counter", nested_outer, (long)nth * ((PER_THREAD2 / 2)));
  CHECK_EQ("nested: inner counter", nested_inner, 2L * nth * ((PER_THREAD2 / 2)));
  CHECK_EQ("nested: unnamed inside named", counter, (long)nth * ((PER_THREAD2 / 2)));

  /* orphaned critical, outside and inside regions */
  helper();
#pragma omp parallel
  {
    for (int i = 0; i < 100; i++) helper();
  }
  helper();
  CHECK_EQ("orphaned critical calls", helper_calls, 2 + 100L * nth);

  /* many short regions each using the same critical (lock reuse) */
  counter = 0;
  for (int r = 0; r < 200; r++) {
#pragma omp parallel
    {
#pragma omp critical
      counter++;
    }
  }
  CHECK_EQ("critical across 200 regions", counter, 200L * nth);

  if (failures) {
    fprintf(stderr, "critical: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok critical\n");
  return 0;
}
