// env_malformed_ours.c - malformed values that crash libomp 19 itself (OMP_NUM_THREADS=4x
// aborts it with "Assertion failure ... nthreads > 0"), so this runs on our runtime only:
// each variable gets one warning naming it and its value, and the default is used.
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: env=OMP_NUM_THREADS=4x
// oxiomp-test: env=OMP_PLACES={0
// oxiomp-test: env=OMP_NESTED=sure
// oxiomp-test: env=OMP_CANCELLATION=perhaps
// oxiomp-test: env=OMP_MAX_TASK_PRIORITY=high
// oxiomp-test: env=OMP_DISPLAY_ENV=loud
// oxiomp-test: stderr-contains=OMP_NUM_THREADS='4x'
// oxiomp-test: stderr-contains=OMP_PLACES='{0'
// oxiomp-test: stderr-contains=OMP_NESTED='sure'
// oxiomp-test: stderr-contains=OMP_CANCELLATION='perhaps'
// oxiomp-test: stderr-contains=OMP_MAX_TASK_PRIORITY='high'
// oxiomp-test: stderr-contains=OMP_DISPLAY_ENV='loud'
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void) {
  int failures = 0;
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  int nprocs = CPU_COUNT(&set);
  // The default team size is the number of CPUs the process may use.
  if (omp_get_max_threads() != nprocs) {
    fprintf(stderr, "FAIL: omp_get_max_threads() = %d, expected %d\n", omp_get_max_threads(), nprocs);
    failures++;
  }
  if (omp_get_max_active_levels() != 1 || omp_get_cancellation() != 0 || omp_get_max_task_priority() != 0) {
    fprintf(stderr, "FAIL: ICVs not at their defaults\n");
    failures++;
  }
  int count = 0;
#pragma omp parallel
  {
#pragma omp atomic
    count++;
  }
  if (count != nprocs) {
    fprintf(stderr, "FAIL: region ran on %d threads, expected %d\n", count, nprocs);
    failures++;
  }
  return failures != 0;
}
