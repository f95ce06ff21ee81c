// idle_sleep_tasks.c - threads that wait while tasks run elsewhere do not burn a core: with
// KMP_BLOCKTIME=20 (ms), a task that sleeps 400 ms and then samples the process's threads
// (state R in /proc/self/task/*/stat, in rounds of samples until the waiters settle, four
// seconds at most) finds itself the only one running, when
//  * the other threads wait in the barrier at the end of a single (no task left to take);
//  * its parent waits for it in a taskwait, the others in that barrier;
//  * its parent waits for it at the end of a taskgroup, the others in that barrier.
// With more than one thread the parent waits until another thread has started the task (so
// that it really waits); with one thread the task runs on the only thread, checked the same.
// No reference run: libomp 19 keeps every waiting thread spinning while a task of the team
// runs (2 of 2 and 16 of 16 threads running in all three cases here).
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=KMP_BLOCKTIME=20
// oxiomp-test: reference=skip
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "running_threads.h"

#include "check.h"

// The task's body: sleep past the block time, then the most threads seen running at once
// (the sampling thread is one; see `settled_running_threads`).
static int sleep_and_sample(void) {
  usleep(400 * 1000);
  return settled_running_threads();
}

enum { IN_BARRIER, IN_TASKWAIT, IN_TASKGROUP };

static int scenario(int how) {
  int worst = -1, started = 0;
#pragma omp parallel shared(worst, started)
#pragma omp single
  {
    int others = omp_get_num_threads() > 1;
    if (how == IN_BARRIER) {
#pragma omp task shared(worst)
      worst = sleep_and_sample();
    } else {
#pragma omp task shared(worst, started) firstprivate(others)
      {
        // The parent: its child runs elsewhere while it waits (when there is elsewhere).
        if (how == IN_TASKWAIT) {
#pragma omp task shared(worst, started)
          {
            __atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
            worst = sleep_and_sample();
          }
          while (others && !__atomic_load_n(&started, __ATOMIC_SEQ_CST)) sched_yield();
#pragma omp taskwait
        } else {
#pragma omp taskgroup
          {
#pragma omp task shared(worst, started)
            {
              __atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
              worst = sleep_and_sample();
            }
            while (others && !__atomic_load_n(&started, __ATOMIC_SEQ_CST)) sched_yield();
          }
        }
      }
    }
  }
  return worst;
}

int main(void) {
  const char *names[] = {"waiters in a barrier", "a waiter in taskwait", "a waiter at a taskgroup's end"};
  for (int how = IN_BARRIER; how <= IN_TASKGROUP; how++) {
    int worst = scenario(how);
    if (worst != 1) {
      fprintf(stderr, "FAIL: %s: %d threads running while one task sleeps (expected 1: the task's)\n",
              names[how], worst);
      failures++;
    }
  }
  if (failures) return 1;
  printf("ok idle_sleep_tasks\n");
  return 0;
}
