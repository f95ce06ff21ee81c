// blocktime_set_first.c - kmp_set_blocktime as the program's very first call into the runtime
// holds: the settings the runtime reads at start-up (KMP_BLOCKTIME=300 here) do not overwrite
// it afterwards.
// oxiomp-test: env=KMP_BLOCKTIME=300
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#include <omp.h>

#include "check.h"

int main(void) {
  kmp_set_blocktime(17);
  int n = 0;
#pragma omp parallel reduction(+ : n)
  n += 1;
  CHECK_EQ("region ran", n, omp_get_max_threads());
  CHECK_EQ("kmp_get_blocktime() after kmp_set_blocktime(17) as the first call", kmp_get_blocktime(), 17);
  return failures != 0;
}
