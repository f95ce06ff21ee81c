// single_master.c - single, copyprivate, master, masked, explicit barriers:
//  * 300 consecutive `single` constructs in one region: each body runs once
//    per encounter; after a blocking single all threads see its write;
//    300 consecutive `single nowait` also run once each
//  * single copyprivate of an int, a double and a struct {int a[8]; double d;}
//    (one clause with three items, and one item per clause), 100 rounds:
//    every thread's private copy gets the single thread's values
//  * master and masked run only on thread 0; masked filter(1) only on thread
//    1 (nowhere in a team of one); masked filter(n) with n >= team size and a
//    run-time filter expression run nowhere / on the selected thread
//  * explicit barrier phases: write own slot, barrier, read all slots
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NS 300
#define MAXT 1024
static int single_cnt[NS], single_nowait_cnt[NS];
static long phase[MAXT];

struct blob {
  int a[8];
  double d;
};

int main(void) {
  int nth = 0;

  /* consecutive singles */
  {
    int not_visible = 0;
#pragma omp parallel shared(nth, not_visible)
    {
#pragma omp master
      nth = omp_get_num_threads();
      for (int s = 0; s < NS; s++) {
#pragma omp single
        single_cnt[s]++; /* plain increment: only one thread may run it */
        /* implicit barrier: visible to all */
        if (single_cnt[s] != 1) __atomic_fetch_add(&not_visible, 1, __ATOMIC_RELAXED);
      }
      for (int s = 0; s < NS; s++) {
#pragma omp single nowait
        __atomic_fetch_add(&single_nowait_cnt[s], 1, __ATOMIC_RELAXED);
      }
    }
    int bad = 0, badnw = 0;
    for (int s = 0; s < NS; s++) {
      bad += single_cnt[s] != 1;
      badnw += single_nowait_cnt[s] != 1;
    }
    CHECK_EQ("singles not run exactly once", bad, 0);
    CHECK_EQ("single nowaits not run exactly once", badnw, 0);
    CHECK_EQ("single result not visible after its implicit barrier", not_visible, 0);
  }

  /* single in many regions */
  {
    int total = 0;
    for (int r = 0; r < 200; r++) {
#pragma omp parallel shared(total)
      {
#pragma omp single
        total++;
      }
    }
    CHECK_EQ("one single per region over 200 regions", total, 200);
  }

  /* copyprivate */
  {
    int bad_int = 0, bad_dbl = 0, bad_blob = 0, bad_sep = 0, executed = 0;
#pragma omp parallel shared(bad_int, bad_dbl, bad_blob, bad_sep, executed)
    {
      for (int r = 0; r < 100; r++) {
        int iv = -1;
        double dv = -1.0;
        struct blob b;
        memset(&b, 0, sizeof b);
#pragma omp single copyprivate(iv, dv, b)
        {
          executed++;
          iv = 1000 + r;
          dv = r * 0.5 + 0.25;
          for (int k = 0; k < 8; k++) b.a[k] = r * 8 + k;
          b.d = -r - 0.125;
        }
        if (iv != 1000 + r) __atomic_fetch_add(&bad_int, 1, __ATOMIC_RELAXED);
        if (dv != r * 0.5 + 0.25) __atomic_fetch_add(&bad_dbl, 1, __ATOMIC_RELAXED);
        int ok = b.d == -r - 0.125;
        for (int k = 0; k < 8; k++) ok &= b.a[k] == r * 8 + k;
        if (!ok) __atomic_fetch_add(&bad_blob, 1, __ATOMIC_RELAXED);

        /* separate singles, one item each, value from the executing thread */
        long long who = -1;
#pragma omp single copyprivate(who)
        who = omp_get_thread_num() * 1000003LL + r;
        long long t = who - r;
        if (t % 1000003LL != 0 || t / 1000003LL < 0 || t / 1000003LL >= omp_get_num_threads())
          __atomic_fetch_add(&bad_sep, 1, __ATOMIC_RELAXED);
        /* and everyone agrees on it: publish mine, compare after a barrier */
        phase[omp_get_thread_num()] = who;
#pragma omp barrier
        for (int k = 0; k < omp_get_num_threads(); k++)
          if (phase[k] != who) __atomic_fetch_add(&bad_sep, 1, __ATOMIC_RELAXED);
#pragma omp barrier
      }
    }
    CHECK_EQ("copyprivate int mismatches", bad_int, 0);
    CHECK_EQ("copyprivate double mismatches", bad_dbl, 0);
    CHECK_EQ("copyprivate struct mismatches", bad_blob, 0);
    CHECK_EQ("copyprivate long long (value of the single thread) mismatches", bad_sep, 0);
    CHECK_EQ("copyprivate single bodies executed", executed, 100);
  }

  /* master / masked */
  {
    int master_cnt = 0, master_wrong = 0, masked_cnt = 0, masked_wrong = 0;
    int f1_cnt = 0, f1_wrong = 0, fbig_cnt = 0, fexpr_cnt = 0, fexpr_wrong = 0;
    int team = 0;
#pragma omp parallel shared(master_cnt, master_wrong, masked_cnt, masked_wrong, f1_cnt, f1_wrong, \
                                fbig_cnt, fexpr_cnt, fexpr_wrong, team)
    {
      int me = omp_get_thread_num(), n = omp_get_num_threads();
      for (int r = 0; r < 50; r++) {
#pragma omp master
        {
          master_cnt++;
          if (me != 0) master_wrong++;
          team = n;
        }
#pragma omp masked
        {
          masked_cnt++;
          if (me != 0) masked_wrong++;
        }
#pragma omp masked filter(1)
        {
          f1_cnt++;
          if (me != 1) f1_wrong++;
        }
#pragma omp masked filter(n + 3)
        __atomic_fetch_add(&fbig_cnt, 1, __ATOMIC_RELAXED);
#pragma omp masked filter((r + 1) % n)
        {
          /* different threads in different rounds, no barrier in between */
          __atomic_fetch_add(&fexpr_cnt, 1, __ATOMIC_RELAXED);
          if (me != (r + 1) % n) __atomic_fetch_add(&fexpr_wrong, 1, __ATOMIC_RELAXED);
        }
      }
    }
    CHECK_EQ("master executions", master_cnt, 50);
    CHECK_EQ("master on a thread other than 0", master_wrong, 0);
    CHECK_EQ("masked executions", masked_cnt, 50);
    CHECK_EQ("masked on a thread other than 0", masked_wrong, 0);
    CHECK_EQ("masked filter(1) executions", f1_cnt, team > 1 ? 50 : 0);
    CHECK_EQ("masked filter(1) on a thread other than 1", f1_wrong, 0);
    CHECK_EQ("masked filter(team size + 3) executions", fbig_cnt, 0);
    CHECK_EQ("masked filter((r+1) % n) executions", fexpr_cnt, 50);
    CHECK_EQ("masked filter((r+1) % n) on the wrong thread", fexpr_wrong, 0);
  }

  /* master / masked outside a parallel region: the initial thread runs them */
  {
    int c = 0;
#pragma omp master
    c++;
#pragma omp masked
    c++;
#pragma omp masked filter(1)
    c += 100;
    CHECK_EQ("master/masked outside a region", c, 2);
  }

  /* explicit barrier phases */
  {
    int bad = 0;
#pragma omp parallel shared(bad)
    {
      int me = omp_get_thread_num(), n = omp_get_num_threads();
      for (long round = 1; round <= 300; round++) {
        phase[me] = round * 10000 + me;
#pragma omp barrier
        for (int k = 0; k < n; k++)
          if (phase[k] != round * 10000 + k) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
#pragma omp barrier
      }
    }
    CHECK_EQ("barrier phase mismatches", bad, 0);
  }

  if (failures) {
    fprintf(stderr, "single_master: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok single_master\n");
  return 0;
}
