// affinity.c - process restricted to CPU 1 (taskset -c 1), OMP_PROC_BIND=true:
//  * omp_get_num_procs() == 1
//  * the default place list comes from the affinity mask: one place, {1}
//  * omp_get_proc_bind() != omp_proc_bind_false (libomp reports spread for true)
//  * every thread runs on CPU 1, its affinity mask is {1}, omp_get_place_num()
//    == 0, omp_get_partition_num_places() == 1
// oxiomp-test: prefix=taskset -c 1
// oxiomp-test: env=OMP_PROC_BIND=true
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

/* 1 if this thread's affinity mask is exactly {cpu} */
static int mask_is_only(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) return 0;
  return CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s);
}

int main(void) {
  if (!mask_is_only(1)) {
    fprintf(stderr, "FAIL: test must run under `taskset -c 1` (got another mask, expected {1})\n");
    return 1;
  }
  CHECK_EQ("omp_get_num_procs()", omp_get_num_procs(), 1);
  CHECK("omp_get_proc_bind() != omp_proc_bind_false", omp_get_proc_bind() != omp_proc_bind_false);
  CHECK_EQ("omp_get_num_places()", omp_get_num_places(), 1);
  CHECK_EQ("omp_get_place_num_procs(0)", omp_get_place_num_procs(0), 1);
  int ids[4] = {-1, -1, -1, -1};
  omp_get_place_proc_ids(0, ids);
  CHECK_EQ("omp_get_place_proc_ids(0)[0]", ids[0], 1);
  CHECK_EQ("omp_get_place_num_procs(1) (out of range)", omp_get_place_num_procs(1), 0);

  int runs = 0, nt = -1;
  for (int rep = 0; rep < 3; rep++) {
    runs = 0;
#pragma omp parallel
    {
      CHECK_EQ("thread sched_getcpu()", sched_getcpu(), 1);
      CHECK("thread affinity mask == {1}", mask_is_only(1));
      CHECK_EQ("thread omp_get_place_num()", omp_get_place_num(), 0);
      CHECK_EQ("thread omp_get_partition_num_places()", omp_get_partition_num_places(), 1);
      CHECK("thread omp_get_proc_bind() != false", omp_get_proc_bind() != omp_proc_bind_false);
      __atomic_fetch_add(&runs, 1, __ATOMIC_SEQ_CST);
      if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    }
    CHECK_EQ("team size", nt, omp_get_max_threads());
    CHECK_EQ("region executions", runs, nt);
  }
  CHECK_EQ("initial thread sched_getcpu() after regions", sched_getcpu(), 1);

  if (failures) {
    fprintf(stderr, "affinity: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok affinity\n");
  return 0;
}
