/* A task, then six others, all queued by thread 0, which alone then looks for a task to run
 * (the other threads wait until one has run): without a priority it takes the newest. */
#include <sched.h>
#include <stdio.h>
#include <omp.h>

static int ran;

int main(void) {
  int done = 0;
#pragma omp parallel shared(done)
  {
    if (omp_get_thread_num() == 0) {
#pragma omp task shared(done)
      { __atomic_store_n(&ran, 1, __ATOMIC_SEQ_CST); __atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST); }
      for (int i = 0; i < 6; i++) {
#pragma omp task shared(done)
        { __atomic_store_n(&ran, 1, __ATOMIC_SEQ_CST); __atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST); }
      }
#pragma omp taskwait
    } else {
      while (!__atomic_load_n(&ran, __ATOMIC_SEQ_CST))
        sched_yield();
    }
  }
  printf("done=%d\n", done);
  return done == 7 ? 0 : 1;
}
