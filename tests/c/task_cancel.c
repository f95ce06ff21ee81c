// task_cancel.c - cancel taskgroup with OMP_CANCELLATION=true
// (__kmpc_cancel / __kmpc_cancellationpoint with kind taskgroup):
//  * omp_get_cancellation() == 1
//  * one task of a taskgroup (NT tasks from a single producer) cancels it: the
//    canceller runs exactly once and none of its code after the cancel runs,
//    no task passes `cancellation point taskgroup` more often than possible
//    (<= NT - 1), the end of the taskgroup is reached. With one thread, tasks
//    (no scheduling point in their bodies) run one after the other, so exactly
//    the tasks that started before the canceller pass their cancellation point
//    and every task starting after it either is discarded or stops there
//  * guaranteed with any team size: task P creates C, C cancels the taskgroup,
//    P's taskwait returns after C completed, so P's following
//    `cancellation point taskgroup` must stop P; tasks the producer creates in
//    the cancelled taskgroup after seeing C complete (taskwait) never get past
//    their cancellation point
//  * `cancel taskgroup if(0)` cancels nothing: all tasks pass
//  * a taskgroup after a cancelled one is not cancelled: all its tasks pass
//  * nested taskgroups: cancelling the inner one leaves the outer one alone
//    (outer tasks, and a task that waited for its own cancelled inner group,
//    pass their cancellation points); each thread with its own taskgroup, only
//    thread 0's cancelled: the other threads' tasks all pass
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_CANCELLATION=true
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPS 50
#define NT 200
#define CANCELLER 40

static int order_of[NT], passed[NT];

int main(void) {
  CHECK_EQ("omp_get_cancellation()", omp_get_cancellation(), 1);

  /* 1. a task of the group cancels it */
  for (int rep = 0; rep < REPS; rep++) {
    int started = 0, canceller_runs = 0, canceller_order = -1, after_cancel = 0, reached_end = 0, nth = 0;
    memset(passed, 0, sizeof passed);
    for (int i = 0; i < NT; i++) order_of[i] = -1;
#pragma omp parallel shared(started, canceller_runs, canceller_order, after_cancel, reached_end, nth)
    {
#pragma omp single
      {
        nth = omp_get_num_threads();
#pragma omp taskgroup
        {
          for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
            {
              int order = __atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
              order_of[i] = order;
              if (i == CANCELLER) {
                __atomic_fetch_add(&canceller_runs, 1, __ATOMIC_RELAXED);
                canceller_order = order;
#pragma omp cancel taskgroup
                __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
              }
#pragma omp cancellation point taskgroup
              passed[i] = 1;
            }
          }
        }
        reached_end = 1;
      }
    }
    int npassed = 0, passed_after = 0;
    for (int i = 0; i < NT; i++) {
      npassed += passed[i];
      if (passed[i] && order_of[i] > canceller_order) passed_after++;
    }
    CHECK_EQ("cancel taskgroup: end of the taskgroup reached", reached_end, 1);
    CHECK_EQ("cancel taskgroup: canceller runs", canceller_runs, 1);
    CHECK_EQ("cancel taskgroup: code after the cancel ran", after_cancel, 0);
    CHECK_EQ("cancel taskgroup: the canceller passed its cancellation point", passed[CANCELLER], 0);
    CHECK("cancel taskgroup: started <= NT", started <= NT);
    CHECK("cancel taskgroup: passed <= NT - 1", npassed <= NT - 1);
    if (nth == 1) {
      CHECK_EQ("cancel taskgroup, 1 thread: tasks passing their cancellation point = tasks started before the "
               "canceller",
               npassed, canceller_order);
      CHECK_EQ("cancel taskgroup, 1 thread: tasks started after the canceller that passed", passed_after, 0);
    }
    if (failures) break;
  }

  /* 2. cancellation seen after the canceller completed */
  for (int rep = 0; rep < REPS; rep++) {
    int c_runs = 0, c_after = 0, p_runs = 0, p_after = 0, late_passed = 0, reached_end = 0;
#pragma omp parallel shared(c_runs, c_after, p_runs, p_after, late_passed, reached_end)
    {
#pragma omp single
      {
        /* task P waits for its child C, which cancels */
#pragma omp taskgroup
        {
#pragma omp task shared(c_runs, c_after, p_runs, p_after)
          {
            __atomic_fetch_add(&p_runs, 1, __ATOMIC_RELAXED);
#pragma omp task shared(c_runs, c_after)
            {
              __atomic_fetch_add(&c_runs, 1, __ATOMIC_RELAXED);
#pragma omp cancel taskgroup
              __atomic_fetch_add(&c_after, 1, __ATOMIC_RELAXED);
            }
#pragma omp taskwait
            /* C has completed, so the taskgroup is cancelled */
#pragma omp cancellation point taskgroup
            __atomic_fetch_add(&p_after, 1, __ATOMIC_RELAXED);
          }
        }
        CHECK_EQ("P/C: C runs", c_runs, 1);
        CHECK_EQ("P/C: P runs", p_runs, 1);
        CHECK_EQ("P/C: C's code after its cancel ran", c_after, 0);
        CHECK_EQ("P/C: P passed its cancellation point after C (which cancelled) completed", p_after, 0);

        /* the producer sees the cancel complete, then creates more tasks */
#pragma omp taskgroup
        {
#pragma omp task
          {
#pragma omp cancel taskgroup
          }
#pragma omp taskwait
          for (int i = 0; i < 50; i++) {
#pragma omp task shared(late_passed)
            {
#pragma omp cancellation point taskgroup
              __atomic_fetch_add(&late_passed, 1, __ATOMIC_RELAXED);
            }
          }
        }
        reached_end = 1;
      }
    }
    CHECK_EQ("tasks created in a cancelled taskgroup passed their cancellation point", late_passed, 0);
    CHECK_EQ("end of the cancelled taskgroup reached", reached_end, 1);
    if (failures) break;
  }

  /* 3. cancel if(0); a taskgroup after a cancelled one */
  for (int rep = 0; rep < REPS; rep++) {
    int no_cancel = 0, next_group = 0, runs_after_if0 = 0;
#pragma omp parallel shared(no_cancel, next_group, runs_after_if0)
    {
#pragma omp single
      {
        int f = 0;
#pragma omp taskgroup
        for (int i = 0; i < 50; i++) {
#pragma omp task firstprivate(i, f) shared(no_cancel, runs_after_if0)
          {
            if (i == 0) {
#pragma omp cancel taskgroup if (f)
              __atomic_fetch_add(&runs_after_if0, 1, __ATOMIC_RELAXED);
            }
#pragma omp cancellation point taskgroup
            __atomic_fetch_add(&no_cancel, 1, __ATOMIC_RELAXED);
          }
        }
        /* a cancelled group, then a fresh one */
#pragma omp taskgroup
        {
#pragma omp task
          {
#pragma omp cancel taskgroup
          }
        }
#pragma omp taskgroup
        for (int i = 0; i < 50; i++) {
#pragma omp task shared(next_group)
          {
#pragma omp cancellation point taskgroup
            __atomic_fetch_add(&next_group, 1, __ATOMIC_RELAXED);
          }
        }
      }
    }
    CHECK_EQ("cancel taskgroup if(0): code after it", runs_after_if0, 1);
    CHECK_EQ("cancel taskgroup if(0): tasks passing their cancellation point", no_cancel, 50);
    CHECK_EQ("taskgroup after a cancelled one: tasks passing their cancellation point", next_group, 50);
    if (failures) break;
  }

  /* 4. nested taskgroups; one group per thread */
  for (int rep = 0; rep < REPS; rep++) {
    int outer_passed = 0, inner_passed_after = 0, waiter_passed = 0, outer_late = 0;
    int per_thread_bad = 0, nth = 0, t0_after = 0;
#pragma omp parallel shared(outer_passed, inner_passed_after, waiter_passed, outer_late, per_thread_bad, nth, \
                                t0_after)
    {
#pragma omp single
      {
        nth = omp_get_num_threads();
#pragma omp taskgroup
        {
          for (int i = 0; i < 20; i++) {
#pragma omp task shared(outer_passed)
            {
#pragma omp cancellation point taskgroup
              __atomic_fetch_add(&outer_passed, 1, __ATOMIC_RELAXED);
            }
          }
          /* a task with its own inner taskgroup, cancelled by a child */
#pragma omp task shared(waiter_passed, inner_passed_after)
          {
#pragma omp taskgroup
            {
#pragma omp task
              {
#pragma omp cancel taskgroup
              }
#pragma omp taskwait
              for (int i = 0; i < 10; i++) {
#pragma omp task shared(inner_passed_after)
                {
#pragma omp cancellation point taskgroup
                  __atomic_fetch_add(&inner_passed_after, 1, __ATOMIC_RELAXED);
                }
              }
            }
            /* binds to the outer taskgroup, which is not cancelled */
#pragma omp cancellation point taskgroup
            __atomic_fetch_add(&waiter_passed, 1, __ATOMIC_RELAXED);
          }
          /* the producer's own inner group, cancelled */
#pragma omp taskgroup
          {
#pragma omp task
            {
#pragma omp cancel taskgroup
            }
          }
          for (int i = 0; i < 20; i++) {
#pragma omp task shared(outer_late)
            {
#pragma omp cancellation point taskgroup
              __atomic_fetch_add(&outer_late, 1, __ATOMIC_RELAXED);
            }
          }
        }
      }
      /* each thread its own group; thread 0's is cancelled */
      int me = omp_get_thread_num(), mine = 0;
#pragma omp taskgroup
      {
        if (me == 0) {
#pragma omp task shared(t0_after)
          {
#pragma omp cancel taskgroup
            __atomic_fetch_add(&t0_after, 1, __ATOMIC_RELAXED);
          }
        }
        for (int i = 0; i < 10; i++) {
#pragma omp task shared(mine)
          {
#pragma omp cancellation point taskgroup
            __atomic_fetch_add(&mine, 1, __ATOMIC_RELAXED);
          }
        }
      }
      if (me != 0 && mine != 10) __atomic_fetch_add(&per_thread_bad, 1, __ATOMIC_RELAXED);
      if (me == 0 && mine > 10) __atomic_fetch_add(&per_thread_bad, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("nested: outer tasks passing their cancellation point", outer_passed, 20);
    CHECK_EQ("nested: tasks created in a cancelled inner group (after it was seen) passing", inner_passed_after, 0);
    CHECK_EQ("nested: task after its cancelled inner group passing an outer cancellation point", waiter_passed, 1);
    CHECK_EQ("nested: outer tasks created after a cancelled inner group passing", outer_late, 20);
    CHECK_EQ("per-thread groups: threads with a wrong count", per_thread_bad, 0);
    CHECK_EQ("per-thread groups: code after the cancel ran", t0_after, 0);
    (void)nth;
    if (failures) break;
  }

  if (failures) {
    fprintf(stderr, "task_cancel: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_cancel\n");
  return 0;
}
