// cancel_off.c - with OMP_CANCELLATION unset (cancel-var false) the cancel
// constructs do nothing:
//  * omp_get_cancellation() == 0
//  * cancel for in static, dynamic and static,1 loops (at iteration 0, with
//    cancellation points in every iteration): every iteration runs once,
//    and the code after the cancel runs
//  * cancel parallel: the code after it and after the following barrier runs
//    on every thread; cancellation point parallel is a no-op
//  * cancel sections: every section, and the code after the cancel, runs
//  * dispatch loops after those loops run completely
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 20000
static int hits[N];

static int bad_hits(void) {
  int bad = 0;
  for (int i = 0; i < N; i++) bad += hits[i] != 1;
  return bad;
}

int main(void) {
  CHECK_EQ("omp_get_cancellation() with OMP_CANCELLATION unset", omp_get_cancellation(), 0);

  for (int kind = 0; kind < 3; kind++) {
    int after = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(after)
    {
      if (kind == 0) {
#pragma omp for schedule(static)
        for (int i = 0; i < N; i++) {
          __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
          if (i == 0) {
#pragma omp cancel for
            __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
          }
#pragma omp cancellation point for
        }
      } else if (kind == 1) {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < N; i++) {
          __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
          if (i == 0) {
#pragma omp cancel for
            __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
          }
#pragma omp cancellation point for
        }
      } else {
#pragma omp for schedule(static, 1)
        for (int i = 0; i < N; i++) {
          __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
          if (i == 0) {
#pragma omp cancel for
            __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
          }
#pragma omp cancellation point for
        }
      }
    }
    static const char *names[] = {"static", "dynamic", "static,1"};
    char buf[200];
    snprintf(buf, sizeof buf, "cancel for (%s) without cancellation: iterations not run exactly once", names[kind]);
    CHECK_EQ(buf, bad_hits(), 0);
    snprintf(buf, sizeof buf, "cancel for (%s) without cancellation: code after the cancel", names[kind]);
    CHECK_EQ(buf, after, 1);
  }

  /* cancel parallel */
  for (int rep = 0; rep < 10; rep++) {
    int after_cancel = 0, after_barrier = 0, after_point = 0, nth = 0;
#pragma omp parallel shared(after_cancel, after_barrier, after_point, nth)
    {
      if (omp_get_thread_num() == 0) {
        nth = omp_get_num_threads();
#pragma omp cancel parallel
        after_cancel++;
      }
#pragma omp barrier
      __atomic_fetch_add(&after_barrier, 1, __ATOMIC_RELAXED);
#pragma omp cancellation point parallel
      __atomic_fetch_add(&after_point, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("cancel parallel without cancellation: code after the cancel", after_cancel, 1);
    CHECK_EQ("cancel parallel without cancellation: threads past the barrier", after_barrier, nth);
    CHECK_EQ("cancel parallel without cancellation: threads past the cancellation point", after_point, nth);
  }

  /* cancel sections */
  {
    int sec[4] = {0}, after = 0;
#pragma omp parallel shared(sec, after)
    {
#pragma omp sections
      {
#pragma omp section
        {
          __atomic_fetch_add(&sec[0], 1, __ATOMIC_RELAXED);
#pragma omp cancel sections
          __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
        }
#pragma omp section
        {
          __atomic_fetch_add(&sec[1], 1, __ATOMIC_RELAXED);
#pragma omp cancellation point sections
        }
#pragma omp section
        __atomic_fetch_add(&sec[2], 1, __ATOMIC_RELAXED);
#pragma omp section
        __atomic_fetch_add(&sec[3], 1, __ATOMIC_RELAXED);
      }
    }
    for (int s = 0; s < 4; s++) CHECK_EQ("cancel sections without cancellation: section runs", sec[s], 1);
    CHECK_EQ("cancel sections without cancellation: code after the cancel", after, 1);
  }

  /* dispatch loops afterwards */
  memset(hits, 0, sizeof hits);
#pragma omp parallel for schedule(dynamic)
  for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  CHECK_EQ("dynamic loop afterwards: iterations not run exactly once", bad_hits(), 0);
  memset(hits, 0, sizeof hits);
#pragma omp parallel for schedule(monotonic: dynamic, 5)
  for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  CHECK_EQ("monotonic dynamic loop afterwards: iterations not run exactly once", bad_hits(), 0);

  if (failures) {
    fprintf(stderr, "cancel_off: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok cancel_off\n");
  return 0;
}
