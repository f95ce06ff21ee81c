// trace_exit_task.c - run with OMP_OVNI=1 by tests/trace.rs: in a static loop, each of two
// threads runs an undeferred task; thread 1's task waits for ever, thread 0's calls exit() once
// thread 1 is inside its task. Both threads end inside a running task inside a static loop's
// part: the trace must end each of them (PPe, the states, PQe) before the thread's end.
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
int main(void) {
  int inside = 0;
#pragma omp parallel num_threads(2) shared(inside)
  {
#pragma omp for schedule(static)
    for (int i = 0; i < 2; i++) {
      if (omp_get_thread_num() == 1) {
#pragma omp task if (0) shared(inside)
        {
          __atomic_store_n(&inside, 1, __ATOMIC_SEQ_CST);
          for (;;) sched_yield();
        }
      } else {
#pragma omp task if (0) shared(inside)
        {
          while (!__atomic_load_n(&inside, __ATOMIC_SEQ_CST)) sched_yield();
          exit(0);
        }
      }
    }
  }
  return 1;
}
