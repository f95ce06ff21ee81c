// barrier_nested_ws.c - worksharing constructs and barriers mixed in one
// region, one round being (orphaned, in a function):
//    static loop writing a[] -> explicit barrier -> dynamic nowait loop
//    reading a[] and writing b[] -> barrier -> single checking sum(b) and
//    resetting the reduction variable -> for reduction(+) over b[] -> every
//    thread checks the reduced sum -> guided nowait loop + master
//  * 200 rounds in one region, then 200 regions of one round each, then 50
//    regions of 4 rounds with num_threads(3)
//  * every check is done every round; iteration counts are checked too
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 256 /* (i * 7) % N is a permutation */
static long a[N], b[N];
static long red;           /* reduction target, shared */
static long single_seen;   /* sum(b) computed in the single */
static int singles, masters, guided_iters;
static int bad_single_sum, bad_reduction;

static long expected_sum(int r) { return 2L * ((long)N * (N - 1) / 2) + 2L * N * r; }

/* one round; called by every thread of the team */
static void round_body(int r) {
#pragma omp for schedule(static)
  for (int i = 0; i < N; i++) a[i] = i + r;
#pragma omp barrier
#pragma omp for schedule(dynamic, 4) nowait
  for (int i = 0; i < N; i++) b[i] = 2 * a[(i * 7) % N];
#pragma omp barrier
#pragma omp single
  {
    long s = 0;
    for (int i = 0; i < N; i++) s += b[i];
    single_seen = s;
    if (s != expected_sum(r)) bad_single_sum++;
    singles++;
    red = 0;
  }
#pragma omp for reduction(+: red)
  for (int i = 0; i < N; i++) red += b[i];
  if (red != expected_sum(r)) __atomic_fetch_add(&bad_reduction, 1, __ATOMIC_RELAXED);
#pragma omp for schedule(guided) nowait
  for (int i = 0; i < 100; i++) __atomic_fetch_add(&guided_iters, 1, __ATOMIC_RELAXED);
#pragma omp master
  masters++;
  /* nobody may overwrite a[] (next round) while b[] is still being summed,
     and red must be read by all before the next single resets it: the next
     round's static loop barrier and explicit barrier order that */
}

static void check(const char *label, int rounds) {
  char buf[200];
  snprintf(buf, sizeof buf, "%s: single saw a wrong sum(b)", label);
  CHECK_EQ(buf, bad_single_sum, 0);
  snprintf(buf, sizeof buf, "%s: threads that saw a wrong reduction result", label);
  CHECK_EQ(buf, bad_reduction, 0);
  snprintf(buf, sizeof buf, "%s: singles executed", label);
  CHECK_EQ(buf, singles, rounds);
  snprintf(buf, sizeof buf, "%s: master blocks executed", label);
  CHECK_EQ(buf, masters, rounds);
  snprintf(buf, sizeof buf, "%s: guided nowait iterations", label);
  CHECK_EQ(buf, guided_iters, 100L * rounds);
  bad_single_sum = bad_reduction = singles = masters = guided_iters = 0;
}

int main(void) {
  /* 200 rounds in one region */
#pragma omp parallel
  {
    for (int r = 0; r < 200; r++) round_body(r);
  }
  check("200 rounds in one region", 200);
  CHECK_EQ("last reduction", red, expected_sum(199));

  /* 200 regions */
  for (int r = 0; r < 200; r++) {
#pragma omp parallel
    round_body(r);
  }
  check("200 regions", 200);
  CHECK_EQ("last single sum", single_seen, expected_sum(199));

  /* 50 regions of 4 rounds, team of 3 */
  for (int r = 0; r < 50; r++) {
#pragma omp parallel num_threads(3)
    {
      for (int k = 0; k < 4; k++) round_body(r * 4 + k);
    }
  }
  check("50 regions x 4 rounds, num_threads(3)", 200);

  /* the same constructs in the serial part (orphaned, team of one) */
  for (int r = 0; r < 3; r++) round_body(r);
  check("serial (orphaned) rounds", 3);

  if (failures) {
    fprintf(stderr, "barrier_nested_ws: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok barrier_nested_ws\n");
  return 0;
}
