// wait_policy_active.c - OMP_WAIT_POLICY=active without KMP_BLOCKTIME: waiting threads never
// sleep, so kmp_get_blocktime() is INT_MAX, as in libomp, and that already when it is the
// program's first call into the runtime (the settings decide it, not a default before them).
// A region runs as usual afterwards (waiting threads still yield: 16 threads on 2 CPUs finish).
// oxiomp-test: env=OMP_WAIT_POLICY=active
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#include <limits.h>
#include <omp.h>

#include "check.h"

int main(void) {
  CHECK_EQ("kmp_get_blocktime() as the first call", kmp_get_blocktime(), INT_MAX);
  int sum = 0;
  for (int r = 0; r < 50; r++) {
#pragma omp parallel reduction(+ : sum)
    sum += 1;
  }
  CHECK_EQ("regions ran", sum, 50 * omp_get_max_threads());
  return failures != 0;
}
