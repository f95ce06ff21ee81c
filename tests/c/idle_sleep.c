// idle_sleep.c - idle workers do not burn a core forever: with KMP_BLOCKTIME=20 (ms), once a
// region is over and the primary thread has slept 400 ms, every other thread of the process
// is asleep (state S in /proc/self/task/*/stat), while the primary is the only one running.
// oxiomp-test: threads=2,4,16
// oxiomp-test: env=KMP_BLOCKTIME=20
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "running_threads.h"

int main(void) {
  int n = 0;
#pragma omp parallel
  {
#pragma omp atomic
    n++;
  }
  if (n != omp_get_max_threads()) {
    fprintf(stderr, "FAIL: region ran on %d threads\n", n);
    return 1;
  }
  // Spinning workers would show as R (running) whenever sampled; give them time to park and
  // sample.
  usleep(400 * 1000);
  int worst = settled_running_threads();
  if (worst != 1) {
    fprintf(stderr, "FAIL: %d threads running while idle (expected only the primary)\n", worst);
    return 1;
  }
  printf("ok idle_sleep\n");
  return 0;
}
