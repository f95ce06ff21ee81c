// kmp_defaults.c - kmp_set_defaults before the runtime starts: its settings
// count as if they were in the environment (and win over it: the harness sets
// OMP_NUM_THREADS); a call after start-up changes nothing and is reported
// (libomp 19 differs: its first call starts the runtime, a second call's
// OMP_SCHEDULE is lost, and a late OMP_NUM_THREADS still applies)
// oxiomp-test: threads=1,4
// oxiomp-test: reference=skip
// oxiomp-test: stderr-contains=kmp_set_defaults: called after the runtime started
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#include <omp.h>

#include "check.h"

int main(void) {
  kmp_set_defaults("OMP_NUM_THREADS=3");
  kmp_set_defaults("OMP_SCHEDULE=dynamic,5|KMP_WARNINGS=true|"); // libomp's separator
  CHECK_EQ("nthreads-var from kmp_set_defaults", omp_get_max_threads(), 3);
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  CHECK_EQ("run-sched-var kind", kind & ~omp_sched_monotonic, omp_sched_dynamic);
  CHECK_EQ("run-sched-var chunk", chunk, 5);
  int n = 0;
#pragma omp parallel
#pragma omp single
  n = omp_get_num_threads();
  CHECK_EQ("regions have 3 threads", n, 3);
  kmp_set_defaults("OMP_NUM_THREADS=2");
  CHECK_EQ("too late: unchanged", omp_get_max_threads(), 3);
  return failures != 0;
}
