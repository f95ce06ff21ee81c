// task_priority_cutoff.c - prioritised tasks have a cut-off too: while the other threads are
// kept from taking tasks, thread 0 creates 64 + 100 prioritised tasks; the first 64 are queued
// (in thread 0's heap of prioritised tasks) and the 100 after them run at once on thread 0,
// inside their construct (with one thread every task runs at once); every task runs exactly
// once by the region's end. Without the cut-off every prioritised task of a recursion went
// through a heap. The threshold (64, as for a thread's deque) is this runtime's policy: no
// reference run.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_MAX_TASK_PRIORITY=10
// oxiomp-test: reference=skip
// oxiomp-test: gcc-reference=skip
// (libgomp defers the tasks the program expects to run at once.)
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define EXTRA 100

int main(void) {
  int n = omp_get_max_threads();
  int cut = 64, total = cut + EXTRA;
  int *ran = calloc(total, sizeof(int)), *at_once = calloc(total, sizeof(int));
  int creating = 1, go = 0;
#pragma omp parallel shared(ran, at_once, creating, go)
  {
    if (omp_get_thread_num() == 0) {
      for (int i = 0; i < total; i++) {
#pragma omp task priority(1 + i % 9) firstprivate(i) shared(ran, at_once, creating)
        {
          __atomic_fetch_add(&ran[i], 1, __ATOMIC_RELAXED);
          if (__atomic_load_n(&creating, __ATOMIC_ACQUIRE) && omp_get_thread_num() == 0) at_once[i] = 1;
        }
      }
      __atomic_store_n(&creating, 0, __ATOMIC_RELEASE);
      __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    } else {
      while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) sched_yield();
    }
  }
  int ran_at_once = 0, queued_ran_at_once = 0;
  for (int i = 0; i < total; i++) {
    CHECK_EQ("every task runs exactly once", ran[i], 1);
    ran_at_once += at_once[i];
    if (n > 1 && i < cut) queued_ran_at_once += at_once[i];
  }
  CHECK_EQ("tasks run at once", ran_at_once, n == 1 ? total : EXTRA);
  CHECK_EQ("tasks below the cut-off run at once", queued_ran_at_once, 0);
  free(ran);
  free(at_once);
  if (failures) return 1;
  printf("ok task_priority_cutoff\n");
  return 0;
}
