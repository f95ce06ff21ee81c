// task_deps_mtx_orphan.c - mutexinoutset children whose parent task returns before they run:
// an explicit task creates 20 children depend(mutexinoutset: x) and returns at once; the
// region's closing barrier (and, in the second form, a taskgroup around the parent) must wait
// for all of them, and no two may run at once.
// oxiomp-test: threads=1,2,4,16
// libomp 19 fails this one (so no reference run): a task's dependence hash, which holds the
// locks of its mutexinoutset entries, is freed when the task completes (__kmp_release_deps ->
// __kmp_dephash_free) while its children still use those locks; with OMP_NUM_THREADS=2 or 4
// the barrier ends with children not run (e.g. 12 of 20; they run later, in the next region),
// and the taskgroup form hangs in __kmpc_end_taskgroup.
// oxiomp-test: reference=skip
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

#define REPS 200
#define NCH 20

static int x, ran, inside;

static void pause_a_little(void) {
  for (volatile int j = 0; j < 200; j++) {
  }
  sched_yield();
}

static void parent(void) {
  for (int i = 0; i < NCH; i++) {
#pragma omp task depend(mutexinoutset : x)
    {
      CHECK_EQ("mutexinoutset members at once", __atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST), 0);
      pause_a_little();
      __atomic_fetch_sub(&inside, 1, __ATOMIC_SEQ_CST);
      __atomic_fetch_add(&ran, 1, __ATOMIC_SEQ_CST);
    }
  }
}

int main(void) {
  for (int rep = 0; rep < REPS; rep++) {
    ran = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task
      parent();
    }
    CHECK_EQ("children of a returned parent run before the barrier ends", ran, NCH);

    ran = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
      {
#pragma omp task
        parent();
      }
      CHECK_EQ("children of a returned parent run before the taskgroup ends", __atomic_load_n(&ran, __ATOMIC_SEQ_CST), NCH);
    }
  }
  return failures != 0;
}
