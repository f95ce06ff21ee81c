// doacross_park.c - doacross sinks that park: with KMP_BLOCKTIME=0 a sink whose source has
// not posted sleeps at once, and some sources take a millisecond before posting, so sinks
// really sleep and must be woken by the post (a lost wake-up hangs the test):
//  * a 1-D chain a[i] = a[i-1] + 1 (sink: i-1), every iteration once, in order
//  * a 2-D wavefront (sink: i-1, j and i, j-1) against the sequential result
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=KMP_BLOCKTIME=0
#include <omp.h>
#include <stdio.h>
#include <time.h>

#include "check.h"

#define N 300
#define NI 12
#define NJ 11

static void pause_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

int main(void) {
  static long a[N];
  static int hits[N];
  a[0] = 0;
#pragma omp parallel for ordered(1) schedule(static, 1)
  for (int i = 1; i < N; i++) {
#pragma omp ordered depend(sink : i - 1)
    {
      if (i % 25 == 0) pause_ms(1);
      a[i] = a[i - 1] + 1;
      hits[i]++;
    }
#pragma omp ordered depend(source)
  }
  for (int i = 1; i < N; i++) {
    CHECK_EQ("chain value", a[i], i);
    CHECK_EQ("chain iteration runs", hits[i], 1);
  }

  static unsigned g[NI][NJ], ref[NI][NJ];
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) g[i][j] = ref[i][j] = (unsigned)(i * 31 + j);
  for (int i = 1; i < NI; i++)
    for (int j = 1; j < NJ; j++) ref[i][j] = ref[i - 1][j] + ref[i][j - 1] + 1;
#pragma omp parallel for ordered(2) schedule(dynamic)
  for (int i = 1; i < NI; i++)
    for (int j = 1; j < NJ; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      if ((i + j) % 7 == 0) pause_ms(1);
      g[i][j] = g[i - 1][j] + g[i][j - 1] + 1;
#pragma omp ordered depend(source)
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) CHECK_EQ("wavefront value", g[i][j], ref[i][j]);
  if (failures) return 1;
  printf("doacross_park: ok\n");
  return 0;
}
