// task_final_deferred.c - a task whose own final clause holds is deferred like any other task
// (another thread may run it); only the tasks generated inside a final task are included, run
// at once by their creator:
//  * in a team of two, one thread creates final task A, which waits until final task B,
//    created after it, has run: A must not run inside its creator's task construct (the
//    creator would never reach B's). The wait is bounded, and a timeout is a failure;
//  * in A, omp_in_final() is 1; a task A generates runs on A's thread before the construct
//    returns, and is final itself.
#include <omp.h>

#include "check.h"

static int b_ran = 0;

int main(void) {
  int a_saw_b = 0, a_final = 0, child_done_before_return = 0, child_final = 0;
  int child_thread = -1, a_thread = -1, team = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    {
      team = omp_get_num_threads();
#pragma omp task final(1) shared(a_saw_b, a_final, child_done_before_return, child_final, child_thread, a_thread)
      {
        a_final = omp_in_final();
        a_thread = omp_get_thread_num();
        int child_done = 0;
#pragma omp task shared(child_done, child_final, child_thread)
        {
          child_final = omp_in_final();
          child_thread = omp_get_thread_num();
          child_done = 1;
        }
        child_done_before_return = child_done;
        double until = omp_get_wtime() + 30.0;
        while (!__atomic_load_n(&b_ran, __ATOMIC_ACQUIRE) && omp_get_wtime() < until) {
        }
        a_saw_b = __atomic_load_n(&b_ran, __ATOMIC_ACQUIRE);
      }
#pragma omp task final(1)
      __atomic_store_n(&b_ran, 1, __ATOMIC_RELEASE);
    }
  }
  if (team == 2) {
    CHECK_EQ("final task A waited for B, created after it (A deferred)", a_saw_b, 1);
  }
  CHECK_EQ("omp_in_final() in a final task", a_final, 1);
  CHECK_EQ("a task generated in a final task ran before its construct returned", child_done_before_return, 1);
  CHECK_EQ("a task generated in a final task is final", child_final, 1);
  CHECK_EQ("it ran on its creator's thread", child_thread, a_thread);
  return failures != 0;
}
