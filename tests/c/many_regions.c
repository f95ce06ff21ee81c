// many_regions.c - thread-pool reuse:
//  * 20,000 back-to-back parallel regions (capped at 400,000 implicit tasks
//    in total, which 16 threads stay under), each thread does an atomic
//    increment and checks the team size; total == nregions * nthreads
//  * 2,000 regions alternating team sizes num_threads(1), (2), (3), (4), (5)
//    (team shrink/grow), with per-region execution counts checked
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define NREG 20000
#define MAX_TASKS 400000
#define NALT 2000

int main(void) {
  int n = omp_get_max_threads();
  long total = 0;
  int bad_size = 0;
  int nreg = NREG < MAX_TASKS / n ? NREG : MAX_TASKS / n;
  for (int r = 0; r < nreg; r++) {
#pragma omp parallel
    {
      if (omp_get_num_threads() != n) __atomic_fetch_add(&bad_size, 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(&total, 1, __ATOMIC_RELAXED);
    }
  }
  CHECK_EQ("regions with wrong team size", bad_size, 0);
  CHECK_EQ("total increments", total, (long)nreg * n);

  long alt_total = 0, alt_expect = 0;
  int bad_count = 0;
  bad_size = 0;
  for (int r = 0; r < NALT; r++) {
    int want = r % 5 + 1;
    int cnt = 0;
#pragma omp parallel num_threads(want)
    {
      if (omp_get_num_threads() != want) __atomic_fetch_add(&bad_size, 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(&cnt, 1, __ATOMIC_RELAXED);
    }
    if (cnt != want) bad_count++;
    alt_total += cnt;
    alt_expect += want;
  }
  CHECK_EQ("alternating: regions with wrong team size", bad_size, 0);
  CHECK_EQ("alternating: regions with wrong execution count", bad_count, 0);
  CHECK_EQ("alternating: total executions", alt_total, alt_expect);

  if (failures) {
    fprintf(stderr, "many_regions: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok many_regions\n");
  return 0;
}
