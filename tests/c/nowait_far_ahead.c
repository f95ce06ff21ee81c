// nowait_far_ahead.c - a team's threads far apart in one region: thread 0 runs 200 'for
// nowait' and 'single nowait' constructs while every other thread waits for it to finish
// them, then the others run the same constructs. Correct OpenMP: nothing may wait for a
// thread that is constructs ahead (the run-time checks' records of the constructs must not
// make thread 0 wait for the others, which wait for it), and every iteration runs once.
//  * 3 such regions, then a barrier-separated round to see the team in step again
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

#define ROUNDS 200
#define N 64
static int hits[ROUNDS][N];
static int singles[ROUNDS];

int main(void) {
  for (int region = 0; region < 3; region++) {
    int done = 0;
#pragma omp parallel shared(done)
    {
      int me = omp_get_thread_num();
      if (me != 0)
        while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
          sched_yield();
      for (int r = 0; r < ROUNDS; r++) {
#pragma omp for schedule(static) nowait
        for (int i = 0; i < N + r % 5; i++)
          if (i < N)
            __atomic_fetch_add(&hits[r][i], 1, __ATOMIC_RELAXED);
#pragma omp single nowait
        __atomic_fetch_add(&singles[r], 1, __ATOMIC_RELAXED);
      }
      if (me == 0)
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
#pragma omp barrier
#pragma omp for schedule(static)
      for (int i = 0; i < N; i++)
        hits[0][i] += 1000;
    }
  }
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < N; i++)
      CHECK_EQ("iterations of each loop", hits[r][i], r == 0 ? 3 + 3 * 1000 : 3);
    CHECK_EQ("singles run", singles[r], 3);
  }
  return failures != 0;
}
