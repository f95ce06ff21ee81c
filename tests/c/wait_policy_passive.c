// wait_policy_passive.c - OMP_WAIT_POLICY=passive without KMP_BLOCKTIME: waiting threads sleep
// at once, so kmp_get_blocktime() is 0, as in libomp, and that already when it is the program's
// first call into the runtime. kmp_set_blocktime before any other call is not undone by the
// settings read afterwards.
// oxiomp-test: env=OMP_WAIT_POLICY=passive
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#include <omp.h>

#include "check.h"

int main(void) {
  CHECK_EQ("kmp_get_blocktime() as the first call", kmp_get_blocktime(), 0);
  int sum = 0;
#pragma omp parallel reduction(+ : sum)
  sum += 1;
  CHECK_EQ("region ran", sum, omp_get_max_threads());
  return failures != 0;
}
