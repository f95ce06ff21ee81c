// task_cancel_untied.c - an untied task that has begun, in a taskgroup that gets cancelled,
// runs to its end: its scheduling points (taskwait, taskyield), where clang splits it into
// parts, are not cancellation points (OpenMP 5.2, 16.1: a task that has begun execution runs
// to completion or to a cancellation point). Three forms, 100 times each: deferred with a
// taskwait after a child that cancels the group, deferred with a taskyield after an if(0)
// child that cancels it, and undeferred (if(0)) with a taskwait. Found by task_stress_kinds.c
// (the later parts were skipped once the group was cancelled).
// No reference run: libomp 19 skips the rest of the deferred forms as well, and fails an
// assertion (td_last_tied) on the undeferred one.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_CANCELLATION=true
// oxiomp-test: reference=skip
#include <omp.h>
#include <stdio.h>

#include "check.h"

#define REPS 100
static int before[3], after[3];
int main(void) {
  for (int r = 0; r < REPS; r++) {
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
      {
#pragma omp task untied /* 0: deferred, taskwait */
        {
          __atomic_fetch_add(&before[0], 1, __ATOMIC_SEQ_CST);
#pragma omp task
          {
#pragma omp cancel taskgroup
          }
#pragma omp taskwait
          __atomic_fetch_add(&after[0], 1, __ATOMIC_SEQ_CST);
        }
      }
#pragma omp taskgroup
      {
#pragma omp task untied /* 1: deferred, taskyield after the cancel */
        {
          __atomic_fetch_add(&before[1], 1, __ATOMIC_SEQ_CST);
#pragma omp task if (0)
          {
#pragma omp cancel taskgroup
          }
#pragma omp taskyield
          __atomic_fetch_add(&after[1], 1, __ATOMIC_SEQ_CST);
        }
      }
#pragma omp taskgroup
      {
#pragma omp task untied if (0) /* 2: undeferred, taskwait */
        {
          __atomic_fetch_add(&before[2], 1, __ATOMIC_SEQ_CST);
#pragma omp task
          {
#pragma omp cancel taskgroup
          }
#pragma omp taskwait
          __atomic_fetch_add(&after[2], 1, __ATOMIC_SEQ_CST);
        }
      }
    }
  }
  const char *forms[3] = {"deferred, taskwait: tasks finished", "deferred, taskyield: tasks finished",
                         "if(0), taskwait: tasks finished"};
  for (int k = 0; k < 3; k++) {
    CHECK_EQ(forms[k], after[k], REPS);
    CHECK_EQ("tasks started", before[k], REPS);
  }
  if (failures) return 1;
  printf("ok task_cancel_untied\n");
  return 0;
}
