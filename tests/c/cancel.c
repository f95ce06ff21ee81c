// cancel.c - cancellation with OMP_CANCELLATION=true (__kmpc_cancel,
// __kmpc_cancellationpoint, __kmpc_cancel_barrier):
//  * omp_get_cancellation() == 1
//  * cancel for in a schedule(static) loop: the thread running iteration 0
//    cancels; it runs none of its later iterations, so with a static schedule
//    (its block has > 1 iteration) not all iterations run; the loop ends, its
//    barrier completes and the program goes on; other threads pass
//    `cancellation point for` in every iteration
//  * the same with schedule(dynamic) and schedule(static, 1): the cancelling
//    thread runs no iteration after its cancel
//  * cancel parallel: the other threads wait in an explicit barrier (a
//    cancellation point) and must not run the code after it; with
//    `cancellation point parallel` in an endless loop, the others leave it
//  * cancel sections: the cancelling section's code after the cancel and the
//    cancelling thread's later sections do not run
//  * cancel for if(false) cancels nothing; a region after a cancelled one is
//    not cancelled; a static loop after them runs completely
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: env=OMP_CANCELLATION=true
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 20000
static int hits[N];

static int count_hits(void) {
  int c = 0;
  for (int i = 0; i < N; i++) c += hits[i];
  return c;
}

int main(void) {
  CHECK_EQ("omp_get_cancellation()", omp_get_cancellation(), 1);

  /* cancel for, static schedule */
  for (int rep = 0; rep < 5; rep++) {
    int after_cancel = 0, canceller_runs = 0, past_loop = 0, dup = 0, nth = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(after_cancel, canceller_runs, past_loop, dup, nth)
    {
      int i_cancelled = 0, my_runs = 0;
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
#pragma omp for schedule(static)
      for (int i = 0; i < N; i++) {
        if (i_cancelled) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
        if (__atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED)) __atomic_fetch_add(&dup, 1, __ATOMIC_RELAXED);
        my_runs++;
        if (i == 0) {
          i_cancelled = 1;
          canceller_runs = my_runs; /* iterations it ran up to and including the cancel */
#pragma omp cancel for
        }
#pragma omp cancellation point for
      }
      /* every thread gets here, after the loop's barrier */
      if (i_cancelled && my_runs != canceller_runs) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(&past_loop, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("cancel for (static): iterations run by the cancelling thread after its cancel", after_cancel, 0);
    CHECK_EQ("cancel for (static): iteration 0 was the cancelling thread's first", canceller_runs, 1);
    CHECK_EQ("cancel for (static): iterations run twice", dup, 0);
    CHECK_EQ("cancel for (static): threads past the loop", past_loop, nth);
    int ran = count_hits();
    if (ran >= N) CHECK_EQ("cancel for (static): all iterations ran despite the cancel", ran, N - 1);
    CHECK_EQ("cancel for (static): iteration 0 ran", hits[0], 1);
  }

  /* cancel for, dynamic and static,1: no iteration after the cancel on the
     cancelling thread */
  for (int kind = 0; kind < 2; kind++) {
    int after_cancel = 0, past_loop = 0, dup = 0, nth = 0, cancels = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(after_cancel, past_loop, dup, nth, cancels)
    {
      int i_cancelled = 0;
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
      if (kind == 0) {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < N; i++) {
          if (i_cancelled) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
          if (__atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED)) __atomic_fetch_add(&dup, 1, __ATOMIC_RELAXED);
          if (i == 0) {
            i_cancelled = 1;
            __atomic_fetch_add(&cancels, 1, __ATOMIC_RELAXED);
#pragma omp cancel for
          }
#pragma omp cancellation point for
        }
      } else {
#pragma omp for schedule(static, 1)
        for (int i = 0; i < N; i++) {
          if (i_cancelled) __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
          if (__atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED)) __atomic_fetch_add(&dup, 1, __ATOMIC_RELAXED);
          if (i == 0) {
            i_cancelled = 1;
            __atomic_fetch_add(&cancels, 1, __ATOMIC_RELAXED);
#pragma omp cancel for
          }
#pragma omp cancellation point for
        }
      }
      __atomic_fetch_add(&past_loop, 1, __ATOMIC_RELAXED);
    }
    const char *k = kind == 0 ? "dynamic" : "static,1";
    char buf[200];
    snprintf(buf, sizeof buf, "cancel for (%s): iterations run by the cancelling thread after its cancel", k);
    CHECK_EQ(buf, after_cancel, 0);
    snprintf(buf, sizeof buf, "cancel for (%s): cancels", k);
    CHECK_EQ(buf, cancels, 1);
    snprintf(buf, sizeof buf, "cancel for (%s): iterations run twice", k);
    CHECK_EQ(buf, dup, 0);
    snprintf(buf, sizeof buf, "cancel for (%s): threads past the loop", k);
    CHECK_EQ(buf, past_loop, nth);
    if (kind == 1) {
      /* static,1: the cancelling thread owns iterations 0, nth, 2nth, ... */
      int ran = count_hits();
      if (ran >= N) CHECK_EQ("cancel for (static,1): all iterations ran despite the cancel", ran, N - 1);
    }
  }

  /* cancel parallel; others wait in an explicit barrier */
  for (int rep = 0; rep < 20; rep++) {
    int after_barrier = 0, before = 0, after_cancel = 0, nth = 0;
#pragma omp parallel shared(after_barrier, before, after_cancel, nth)
    {
      if (omp_get_thread_num() == 0) {
        nth = omp_get_num_threads();
        __atomic_fetch_add(&before, 1, __ATOMIC_RELAXED);
#pragma omp cancel parallel
        __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
      } else {
        __atomic_fetch_add(&before, 1, __ATOMIC_RELAXED);
      }
#pragma omp barrier
      __atomic_fetch_add(&after_barrier, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("cancel parallel: threads started", before, nth);
    CHECK_EQ("cancel parallel: code after the cancel ran", after_cancel, 0);
    CHECK_EQ("cancel parallel: threads that ran past the barrier", after_barrier, 0);
    if (failures) break;
  }

  /* cancel parallel; others spin on cancellation point parallel */
  {
    int left = 0, after_cancel = 0, nth = 0;
#pragma omp parallel shared(left, after_cancel, nth)
    {
      if (omp_get_thread_num() == 0) {
        nth = omp_get_num_threads();
#pragma omp cancel parallel
        __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
      } else {
        /* ends only through the cancellation */
        for (;;) {
          __atomic_fetch_add(&left, 0, __ATOMIC_RELAXED);
#pragma omp cancellation point parallel
          sched_yield();
        }
      }
    }
    CHECK_EQ("cancel parallel + cancellation point: code after the cancel ran", after_cancel, 0);
    (void)left;
    (void)nth;
  }

  /* the next region is not cancelled */
  {
    int done = 0, nth = 0;
#pragma omp parallel shared(done, nth)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
#pragma omp cancellation point parallel
#pragma omp barrier
#pragma omp cancellation point parallel
      __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("region after a cancelled one: threads completing", done, nth);
  }

  /* cancel sections */
  {
    int sec_ran[6] = {0}, after_cancel = 0, canceller_later = 0, past = 0, nth = 0;
#pragma omp parallel shared(sec_ran, after_cancel, canceller_later, past, nth)
    {
      int i_cancelled = 0;
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
#pragma omp sections
      {
#pragma omp section
        {
          __atomic_fetch_add(&sec_ran[0], 1, __ATOMIC_RELAXED);
          i_cancelled = 1;
#pragma omp cancel sections
          __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
        }
#pragma omp section
        {
          if (i_cancelled) __atomic_fetch_add(&canceller_later, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&sec_ran[1], 1, __ATOMIC_RELAXED);
#pragma omp cancellation point sections
        }
#pragma omp section
        {
          if (i_cancelled) __atomic_fetch_add(&canceller_later, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&sec_ran[2], 1, __ATOMIC_RELAXED);
#pragma omp cancellation point sections
        }
#pragma omp section
        {
          if (i_cancelled) __atomic_fetch_add(&canceller_later, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&sec_ran[3], 1, __ATOMIC_RELAXED);
        }
#pragma omp section
        {
          if (i_cancelled) __atomic_fetch_add(&canceller_later, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&sec_ran[4], 1, __ATOMIC_RELAXED);
        }
#pragma omp section
        {
          if (i_cancelled) __atomic_fetch_add(&canceller_later, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&sec_ran[5], 1, __ATOMIC_RELAXED);
        }
      }
      __atomic_fetch_add(&past, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("cancel sections: section 0 ran", sec_ran[0], 1);
    CHECK_EQ("cancel sections: code after the cancel ran", after_cancel, 0);
    CHECK_EQ("cancel sections: cancelling thread ran later sections", canceller_later, 0);
    for (int s = 1; s < 6; s++) {
      if (sec_ran[s] > 1) CHECK_EQ("cancel sections: a section ran twice", sec_ran[s], 1);
    }
    CHECK_EQ("cancel sections: threads past the construct", past, nth);
    if (nth == 1) {
      int later = 0;
      for (int s = 1; s < 6; s++) later += sec_ran[s];
      CHECK_EQ("cancel sections, 1 thread: later sections ran", later, 0);
    }
  }

  /* cancel for if(false): nothing is cancelled */
  {
    int f = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (int i = 0; i < N; i++) {
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp cancel for if (f)
#pragma omp cancellation point for
      }
    }
    CHECK_EQ("cancel for if(false): iterations run", count_hits(), N);
  }

  /* a normal loop after the cancelled ones runs completely (static: libomp 19
     mishandles dispatch loops after cancelled dispatch loops, see
     cancel_dynamic_reuse.c) */
  {
    memset(hits, 0, sizeof hits);
#pragma omp parallel for schedule(static, 16)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK_EQ("loop after the cancelled ones: iterations run", count_hits(), N);
  }

  if (failures) {
    fprintf(stderr, "cancel: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok cancel\n");
  return 0;
}
