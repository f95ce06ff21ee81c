// barrier_helpers_wake.c - members asleep in a barrier run the tasks pushed while they sleep:
// under OMP_WAIT_POLICY=passive (block time 0) the other members reach the barrier at the end
// of a single and sleep there, with no task in the team, while the single's thread is away
// for 50 ms; then it creates 32 tasks of 2 ms each and waits in the same barrier. Every task
// runs once, and with more than one thread some run on members other than the single's
// thread: the pushes woke the sleeping members (members asleep on the barrier's flag would
// leave every task to the single's thread).
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_WAIT_POLICY=passive
#include <omp.h>
#include <unistd.h>

#include "check.h"

#define TASKS 32

int main(void) {
  int ran[TASKS] = {0};
  int owner = -1, others = 0;
#pragma omp parallel
  {
#pragma omp single
    {
      owner = omp_get_thread_num();
      usleep(50 * 1000);
      for (int i = 0; i < TASKS; i++) {
#pragma omp task firstprivate(i) shared(ran, others, owner)
        {
          __atomic_fetch_add(&ran[i], 1, __ATOMIC_RELAXED);
          if (omp_get_thread_num() != owner) __atomic_fetch_add(&others, 1, __ATOMIC_RELAXED);
          usleep(2 * 1000);
        }
      }
    }
  }
  for (int i = 0; i < TASKS; i++) CHECK_EQ("runs of a task", ran[i], 1);
  if (omp_get_max_threads() > 1) CHECK("tasks ran on the sleeping members too", others > 0);
  return failures != 0;
}
