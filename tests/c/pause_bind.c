// pause_bind.c - workers started after omp_pause_resource (on the descriptors of
// the workers whose threads ended) are bound to their places like the first
// ones: with OMP_PROC_BIND=spread and OMP_PLACES=threads, every member's CPU
// set (sched_getaffinity) is its place's, before and after pauses (a reused
// descriptor kept its old thread's place and skipped the binding)
// (Debian's libomp 19 fails here: "Thread identifier invalid", then hangs.)
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: env=OMP_PROC_BIND=spread
// oxiomp-test: env=OMP_PLACES=threads
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>

#include "check.h"

// Members of a 4-thread region whose CPU set is not their place's.
static int misbound(void) {
  int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
  {
    int place = omp_get_place_num(), ids[1024];
    int n = omp_get_place_num_procs(place);
    cpu_set_t want, got;
    CPU_ZERO(&want);
    omp_get_place_proc_ids(place, ids);
    for (int i = 0; i < n && i < 1024; i++) CPU_SET(ids[i], &want);
    sched_getaffinity(0, sizeof got, &got);
    bad += place < 0 || !CPU_EQUAL(&want, &got);
  }
  return bad;
}

int main(void) {
  CHECK_EQ("bound before any pause", misbound(), 0);
  for (int r = 0; r < 3; r++) {
    CHECK_EQ("pause", omp_pause_resource_all(omp_pause_hard), 0);
    CHECK_EQ("bound after a pause", misbound(), 0);
  }
  return failures != 0;
}
