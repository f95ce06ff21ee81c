// ring_park.c - threads many dispatched loops ahead of a slow one: 24 nowait dynamic loops in a
// row, where the thread that runs the first loop's first chunk sleeps for a while, so the others
// run ahead until the ring of loop slots is full and must wait for the slow thread to leave the
// loop a ring behind. With KMP_BLOCKTIME=0 they park at once; the slow thread's leaving the
// slot must wake them (a lost wake-up hangs the test). Every iteration of every loop runs once.
// oxiomp-test: threads=2,3,4,16
// oxiomp-test: env=KMP_BLOCKTIME=0
#include <omp.h>
#include <stdio.h>
#include <time.h>

#include "check.h"

#define LOOPS 24
#define N 40

static int hits[LOOPS][N];

int main(void) {
#pragma omp parallel
  {
    for (int l = 0; l < LOOPS; l++) {
#pragma omp for schedule(dynamic, 1) nowait
      for (int i = 0; i < N; i++) {
        if (l == 0 && i == 0) {
          struct timespec ts = {0, 30 * 1000000L};
          nanosleep(&ts, NULL);
        }
        __atomic_fetch_add(&hits[l][i], 1, __ATOMIC_RELAXED);
      }
    }
  }
  for (int l = 0; l < LOOPS; l++)
    for (int i = 0; i < N; i++) CHECK_EQ("iteration runs", hits[l][i], 1);
  if (failures) return 1;
  printf("ring_park: ok\n");
  return 0;
}
