// locks.c - OpenMP lock routines (omp_lock_t / omp_nest_lock_t, 8 bytes of
// user storage each):
//  * omp_set/unset_lock protecting a non-atomic counter, 10000 incr/thread
//    (capped at 20000 increments in total when oversubscribed)
//  * omp_test_lock: 1 on a free lock, 0 while another thread holds it
//    (barrier-ordered protocol in a num_threads(2) region)
//  * omp_init_lock_with_hint / omp_init_nest_lock_with_hint with each hint
//  * nest locks: re-entrant set, omp_test_nest_lock returns the new nesting
//    count, unset counts down, another thread cannot acquire it while held
//  * destroy / re-init cycles, many locks alive at once
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: gcc=skip: the nestable lock with a hint, which gcc 12's libgomp lacks
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define ITERS 10000
/* cap the total number of contended lock operations per loop so the test stays
   fast when heavily oversubscribed (16 threads on 2 CPUs): per-thread
   iterations are min(iters, budget / nthreads) */
#define BUDGET 20000

static long counter; /* deliberately not atomic */
static int per_thread(int iters, int nt) {
  int cap = BUDGET / (nt > 0 ? nt : 1);
  return iters < cap ? iters : cap;
}

static long locked_count(omp_lock_t *l, int iters) {
  counter = 0;
  int nt = 0;
#pragma omp parallel
  {
#pragma omp single
    nt = omp_get_num_threads();
    int my_iters = per_thread(iters, omp_get_num_threads());
    for (int i = 0; i < my_iters; i++) {
      omp_set_lock(l);
      counter++;
      omp_unset_lock(l);
    }
  }
  return counter - (long)nt * per_thread(iters, nt); /* 0 when correct */
}

static long nest_locked_count(omp_nest_lock_t *l, int iters) {
  counter = 0;
  int nt = 0;
#pragma omp parallel
  {
#pragma omp single
    nt = omp_get_num_threads();
    int my_iters = per_thread(iters, omp_get_num_threads());
    for (int i = 0; i < my_iters; i++) {
      omp_set_nest_lock(l);
      omp_set_nest_lock(l);
      counter++;
      omp_unset_nest_lock(l);
      counter++;
      omp_unset_nest_lock(l);
    }
  }
  return counter - 2L * nt * per_thread(iters, nt);
}

int main(void) {
  /* basic mutual exclusion */
  omp_lock_t lock;
  omp_init_lock(&lock);
  CHECK_EQ("counter under omp_lock_t: lost updates", locked_count(&lock, ITERS), 0);

  /* two locks unset in the order they were set (the first one first), and several held at
     once: the run-time checks follow each until its own unset */
  {
    omp_lock_t a, b, many[12];
    omp_init_lock(&a);
    omp_init_lock(&b);
    for (int i = 0; i < 12; i++) omp_init_lock(&many[i]);
    long both = 0, deep = 0;
#pragma omp parallel
    {
      int my_iters = per_thread(ITERS, omp_get_num_threads());
      for (int i = 0; i < my_iters; i++) {
        omp_set_lock(&a);
        omp_set_lock(&b);
        both++;
        omp_unset_lock(&a);
        omp_unset_lock(&b);
      }
#pragma omp barrier
#pragma omp single
      {
        for (int i = 0; i < 12; i++) omp_set_lock(&many[i]);
        for (int i = 0; i < 12; i += 2) omp_unset_lock(&many[i]);
        for (int i = 11; i > 0; i -= 2) omp_unset_lock(&many[i]);
        deep = 1;
      }
#pragma omp single
      {
        both -= (long)omp_get_num_threads() * my_iters;
        /* all twelve are free again */
        for (int i = 0; i < 12; i++) {
          int r = omp_test_lock(&many[i]);
          if (r) omp_unset_lock(&many[i]);
          else deep = 0;
        }
      }
    }
    CHECK_EQ("two locks unset first-set-first: lost updates", both, 0);
    CHECK_EQ("twelve locks held at once, unset out of order, all free again", deep, 1);
    omp_destroy_lock(&a);
    omp_destroy_lock(&b);
    for (int i = 0; i < 12; i++) omp_destroy_lock(&many[i]);
  }

  /* omp_test_lock, single thread */
  CHECK_EQ("omp_test_lock on free lock", omp_test_lock(&lock) != 0, 1);
  omp_unset_lock(&lock);
  CHECK_EQ("omp_test_lock after unset", omp_test_lock(&lock) != 0, 1);
  omp_unset_lock(&lock);

  /* omp_test_lock, two threads, barrier-ordered */
  {
    int r_held = -1, r_free = -1, r_main = -1, nt = 0;
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      if (t == 0) {
        nt = omp_get_num_threads();
        omp_set_lock(&lock);
      }
#pragma omp barrier
      if (t == 1) r_held = omp_test_lock(&lock); /* held by thread 0 */
#pragma omp barrier
      if (t == 0) omp_unset_lock(&lock);
#pragma omp barrier
      if (t == 1) {
        r_free = omp_test_lock(&lock); /* free now */
        if (r_free) {
          /* keep it held over a barrier, thread 0 tests */
        }
      }
#pragma omp barrier
      if (t == 0) r_main = omp_test_lock(&lock); /* held by thread 1 */
#pragma omp barrier
      if (t == 1 && r_free) omp_unset_lock(&lock);
    }
    CHECK_EQ("test_lock region size", nt, 2);
    CHECK_EQ("omp_test_lock while another thread holds it", r_held, 0);
    CHECK_EQ("omp_test_lock after the holder released it", r_free != 0, 1);
    CHECK_EQ("omp_test_lock by thread 0 while thread 1 holds it", r_main, 0);
    /* thread 1 released it: it is free for the initial thread */
    CHECK_EQ("omp_test_lock after cross-thread protocol", omp_test_lock(&lock) != 0, 1);
    omp_unset_lock(&lock);
  }
  /* a lock released by one thread can be set by another (handover) */
  {
    int order[3] = {-1, -1, -1}, idx = 0;
    omp_set_lock(&lock); /* initial thread holds it before the region */
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      if (t == 1) {
        omp_set_lock(&lock); /* blocks until thread 0 unsets */
        order[idx++] = 1;
        omp_unset_lock(&lock);
      } else {
        order[idx++] = 0;
        omp_unset_lock(&lock);
      }
    }
    CHECK_EQ("handover: first in critical section", order[0], 0);
    CHECK_EQ("handover: second in critical section", order[1], 1);
    CHECK_EQ("handover: entries", idx, 2);
  }
  omp_destroy_lock(&lock);

  /* destroy / re-init cycles */
  for (int i = 0; i < 100; i++) {
    omp_init_lock(&lock);
    omp_set_lock(&lock);
    omp_unset_lock(&lock);
    CHECK_EQ("test after re-init", omp_test_lock(&lock) != 0, 1);
    omp_unset_lock(&lock);
    omp_destroy_lock(&lock);
  }
  omp_init_lock(&lock);
  CHECK_EQ("counter after re-init", locked_count(&lock, 200), 0);
  omp_destroy_lock(&lock);

  /* hinted locks */
  {
    static const int hints[] = {
        omp_sync_hint_none,
        omp_sync_hint_uncontended,
        omp_sync_hint_contended,
        omp_sync_hint_nonspeculative,
        omp_sync_hint_speculative,
        omp_sync_hint_uncontended | omp_sync_hint_speculative,
        omp_sync_hint_contended | omp_sync_hint_nonspeculative,
        omp_lock_hint_none,
        omp_lock_hint_contended,
    };
    char buf[120];
    for (unsigned h = 0; h < sizeof hints / sizeof hints[0]; h++) {
      omp_lock_t hl;
      omp_init_lock_with_hint(&hl, (omp_sync_hint_t)hints[h]);
      snprintf(buf, sizeof buf, "lock with hint %#x: lost updates", hints[h]);
      CHECK_EQ(buf, locked_count(&hl, 100), 0);
      snprintf(buf, sizeof buf, "lock with hint %#x: omp_test_lock on free lock", hints[h]);
      int r = omp_test_lock(&hl);
      CHECK_EQ(buf, r != 0, 1);
      if (r) omp_unset_lock(&hl);
      omp_destroy_lock(&hl);

      omp_nest_lock_t hn;
      omp_init_nest_lock_with_hint(&hn, (omp_sync_hint_t)hints[h]);
      snprintf(buf, sizeof buf, "nest lock with hint %#x: lost updates", hints[h]);
      CHECK_EQ(buf, nest_locked_count(&hn, 50), 0);
      snprintf(buf, sizeof buf, "nest lock with hint %#x: test count", hints[h]);
      CHECK_EQ(buf, omp_test_nest_lock(&hn), 1);
      omp_unset_nest_lock(&hn);
      omp_destroy_nest_lock(&hn);
    }
  }

  /* nest locks */
  {
    omp_nest_lock_t nl;
    omp_init_nest_lock(&nl);
    CHECK_EQ("omp_test_nest_lock on free nest lock", omp_test_nest_lock(&nl), 1);
    omp_set_nest_lock(&nl); /* depth 2 */
    CHECK_EQ("omp_test_nest_lock by owner (depth 3)", omp_test_nest_lock(&nl), 3);
    CHECK_EQ("omp_test_nest_lock by owner (depth 4)", omp_test_nest_lock(&nl), 4);
    omp_unset_nest_lock(&nl); /* 3 */
    omp_unset_nest_lock(&nl); /* 2 */
    CHECK_EQ("omp_test_nest_lock after two unsets (depth 3)", omp_test_nest_lock(&nl), 3);
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl); /* free */
    CHECK_EQ("omp_test_nest_lock after full release", omp_test_nest_lock(&nl), 1);
    omp_unset_nest_lock(&nl);

    /* cross-thread: held with depth 2 by thread 0; thread 1 cannot get it */
    int r_held = -1, r_still = -1, r_free = -1, nt = 0;
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      if (t == 0) {
        nt = omp_get_num_threads();
        omp_set_nest_lock(&nl);
        omp_set_nest_lock(&nl);
      }
#pragma omp barrier
      if (t == 1) r_held = omp_test_nest_lock(&nl);
#pragma omp barrier
      if (t == 0) omp_unset_nest_lock(&nl); /* depth 1: still held */
#pragma omp barrier
      if (t == 1) r_still = omp_test_nest_lock(&nl);
#pragma omp barrier
      if (t == 0) omp_unset_nest_lock(&nl); /* free */
#pragma omp barrier
      if (t == 1) {
        r_free = omp_test_nest_lock(&nl);
        if (r_free > 0) omp_unset_nest_lock(&nl);
      }
    }
    CHECK_EQ("nest region size", nt, 2);
    CHECK_EQ("omp_test_nest_lock while other thread holds depth 2", r_held, 0);
    CHECK_EQ("omp_test_nest_lock while other thread holds depth 1", r_still, 0);
    CHECK_EQ("omp_test_nest_lock after other thread released", r_free, 1);

    CHECK_EQ("nest lock counter: lost updates", nest_locked_count(&nl, 500), 0);
    omp_destroy_nest_lock(&nl);
    for (int i = 0; i < 100; i++) {
      omp_init_nest_lock(&nl);
      CHECK_EQ("nest lock re-init: test", omp_test_nest_lock(&nl), 1);
      omp_unset_nest_lock(&nl);
      omp_destroy_nest_lock(&nl);
    }
  }

  /* many locks alive at once, each guarding its own counter */
  {
    enum { NL = 64 };
    static omp_lock_t ls[NL];
    static long cs[NL];
    for (int i = 0; i < NL; i++) {
      omp_init_lock(&ls[i]);
      cs[i] = 0;
    }
    int nt = 0;
#pragma omp parallel
    {
#pragma omp single
      nt = omp_get_num_threads();
      int t = omp_get_thread_num();
      for (int i = 0; i < 500; i++) {
        int k = (i * 7 + t) % NL;
        omp_set_lock(&ls[k]);
        cs[k]++;
        omp_unset_lock(&ls[k]);
      }
    }
    long sum = 0;
    for (int i = 0; i < NL; i++) {
      sum += cs[i];
      omp_destroy_lock(&ls[i]);
    }
    CHECK_EQ("64 locks: total", sum, 500L * nt);
  }

  if (failures) {
    fprintf(stderr, "locks: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok locks\n");
  return 0;
}
