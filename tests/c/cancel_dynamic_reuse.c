// cancel_dynamic_reuse.c - dispatch loops after a cancelled dispatch loop
// (OMP_CANCELLATION=true): threads leave a cancelled schedule(dynamic) /
// monotonic:dynamic / guided loop without draining the dispatcher; later
// dynamic / monotonic dynamic / guided loops, in the same region and in new
// regions, must still run every iteration exactly once. Cancelled loops
// alternate with normal ones, 30 times (more than any ring of dispatch
// buffers). The cancelling thread runs no iteration after its cancel.
// libomp 19 fails in two ways (reference=skip):
//  - after a cancelled nonmonotonic dynamic loop, the next nonmonotonic
//    dynamic loop aborts: "Assertion failure at kmp_dispatch.cpp(564):
//    pr->steal_flag == THIEF" (2-4 threads);
//  - after a cancelled monotonic:dynamic loop, a monotonic dynamic loop in
//    the next region skips its first nthreads iterations (the reused
//    dispatch buffer still holds the cancelled loop's chunk counter).
// With the cancelled loop made schedule(static) the file passes on libomp 19.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: env=OMP_CANCELLATION=true
// oxiomp-test: reference=skip
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 5000
static int hits[N];

static int bad_hits(int n) {
  int bad = 0;
  for (int i = 0; i < n; i++) bad += hits[i] != 1;
  return bad;
}

int main(void) {
  CHECK_EQ("omp_get_cancellation()", omp_get_cancellation(), 1);
  for (int rep = 0; rep < 30; rep++) {
    int after_cancel = 0, bad_inner = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(after_cancel, bad_inner)
    {
      int i_cancelled = 0;
      /* cancelled at its first iteration; the kind rotates */
      if (rep % 3 == 0) {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < N; i++) {
          if (i_cancelled) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
          if (i == 0) {
            i_cancelled = 1;
#pragma omp cancel for
          }
#pragma omp cancellation point for
        }
      } else if (rep % 3 == 1) {
#pragma omp for schedule(monotonic: dynamic)
        for (int i = 0; i < N; i++) {
          if (i_cancelled) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
          if (i == 0) {
            i_cancelled = 1;
#pragma omp cancel for
          }
#pragma omp cancellation point for
        }
      } else {
#pragma omp for schedule(guided)
        for (int i = 0; i < N; i++) {
          if (i_cancelled) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
          if (i == 0) {
            i_cancelled = 1;
#pragma omp cancel for
          }
#pragma omp cancellation point for
        }
      }
#pragma omp single
      memset(hits, 0, sizeof hits);
      /* a normal dynamic loop in the same region */
#pragma omp for schedule(dynamic, 3)
      for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp single
      bad_inner = bad_hits(N);
    }
    CHECK_EQ("cancelled dynamic loop: iterations after the cancel on the cancelling thread", after_cancel, 0);
    CHECK_EQ("dynamic loop after a cancelled one (same region): iterations not run exactly once", bad_inner, 0);

    /* new regions: dynamic, monotonic dynamic, guided, dynamic nowait x2 */
    memset(hits, 0, sizeof hits);
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK_EQ("dynamic loop in the next region: iterations not run exactly once", bad_hits(N), 0);
    memset(hits, 0, sizeof hits);
#pragma omp parallel for schedule(monotonic: dynamic)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK_EQ("monotonic dynamic loop in the next region: iterations not run exactly once", bad_hits(N), 0);
    memset(hits, 0, sizeof hits);
#pragma omp parallel for schedule(guided, 2)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK_EQ("guided loop in the next region: iterations not run exactly once", bad_hits(N), 0);
    memset(hits, 0, sizeof hits);
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 5) nowait
      for (int i = 0; i < N / 2; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic) nowait
      for (int i = N / 2; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("nowait dynamic loops in the next region: iterations not run exactly once", bad_hits(N), 0);
    if (failures) break;
  }
  if (failures) {
    fprintf(stderr, "cancel_dynamic_reuse: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok cancel_dynamic_reuse\n");
  return 0;
}
