// icv_check.h - for the task ICV tests: checks that the calling task sees nthreads-var and
// the run-sched-var chunk a test set for it.
#ifndef OXIOMP_TEST_ICV_CHECK_H
#define OXIOMP_TEST_ICV_CHECK_H
#include <omp.h>

#include "check.h"

__attribute__((unused)) static void check_base(const char *what, int nthreads, int sched_chunk) {
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  CHECK_EQ(what, omp_get_max_threads(), nthreads);
  CHECK_EQ(what, chunk, sched_chunk);
}
#endif
