// task_throttling_off.c - KMP_ENABLE_TASK_THROTTLING=0: a task creator never runs new tasks
// at once because its queue is long (no cut-off). In a team of two, the primary thread creates
// 2000 tasks that each wait until the primary thread itself runs one of them: all 2000 must
// have been created (queued) before that happens. With the cut-off, the primary thread would
// run the 65th task at once, 64 tasks in. The other thread holds one task meanwhile.
// oxiomp-test: env=KMP_ENABLE_TASK_THROTTLING=0
// oxiomp-test: threads=2,16
// oxiomp-test: gcc-reference=skip
// (libgomp throttles task creation, which the program turns off for libomp.)
#include <omp.h>

#include "check.h"

#define NUM_TASKS 2000

int main(void) {
  int block = 1, created = 0, created_when_primary_ran = -1, team = 0;
#pragma omp parallel num_threads(2) shared(block, created, created_when_primary_ran, team)
#pragma omp master
  {
    team = omp_get_num_threads();
    for (int i = 0; i < NUM_TASKS; i++) {
      __atomic_store_n(&created, i + 1, __ATOMIC_SEQ_CST);
#pragma omp task shared(block, created, created_when_primary_ran)
      {
        if (omp_get_thread_num() == 0) {
          int expected = -1;
          __atomic_compare_exchange_n(&created_when_primary_ran, &expected,
                                      __atomic_load_n(&created, __ATOMIC_SEQ_CST), 0,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
          __atomic_store_n(&block, 0, __ATOMIC_SEQ_CST);
        }
        while (__atomic_load_n(&block, __ATOMIC_SEQ_CST)) {
        }
      }
    }
    __atomic_store_n(&block, 0, __ATOMIC_SEQ_CST);
  }
  if (team == 2) CHECK_EQ("tasks created when the primary thread ran its first", created_when_primary_ran, NUM_TASKS);
  return failures != 0;
}
