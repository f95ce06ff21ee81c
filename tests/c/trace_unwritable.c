// trace_unwritable.c - OMP_OVNI=1 with a trace directory that cannot be created: one warning,
// and the program runs untraced with correct results.
// oxiomp-test: threads=1,4
// oxiomp-test: env=OMP_OVNI=1
// oxiomp-test: env=OVNI_TRACEDIR=/proc/oxiomp-no-such-dir/trace
// oxiomp-test: stderr-contains=oxiomp: warning: OMP_OVNI=1 but the trace cannot be written
#include <omp.h>

#include "check.h"

int main(void) {
  long sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < 1000; i++) sum += i;
  CHECK_EQ("sum", sum, 499500);
  int n = 0;
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < 100; i++) {
#pragma omp task shared(n)
    __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("tasks", n, 100);
  return failures != 0;
}
