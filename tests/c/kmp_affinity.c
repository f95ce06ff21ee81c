// kmp_affinity.c - KMP_AFFINITY=granularity=thread,compact (libomp's setting; no OMP_PLACES,
// no OMP_PROC_BIND): one place per CPU of the process, in CPU order, binding close:
//  * omp_get_num_places() is the number of CPUs the process may use, each place one CPU;
//  * omp_get_proc_bind() is not false (oxiomp: close; libomp: its own value 5, "intel");
//  * in a region of as many threads as places, thread i is at place i, and its CPU set is
//    exactly that place's CPU.
// oxiomp-test: env=KMP_AFFINITY=granularity=thread,compact
// oxiomp-test: threads=none
// oxiomp-test: bound=skip
// oxiomp-test: gcc-reference=skip
// (libgomp ignores KMP_AFFINITY.)
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"

int main(void) {
  cpu_set_t full;
  sched_getaffinity(0, sizeof full, &full);
  int ncpu = CPU_COUNT(&full);
  CHECK_EQ("places: one per CPU", omp_get_num_places(), ncpu);
  for (int p = 0; p < omp_get_num_places() && p < 256; p++) CHECK_EQ("CPUs in a place", omp_get_place_num_procs(p), 1);
  CHECK(("proc-bind-var says threads are bound"), omp_get_proc_bind() != omp_proc_bind_false);
  int wrong_place = 0, wrong_mask = 0;
#pragma omp parallel num_threads(ncpu)
  {
    int t = omp_get_thread_num();
    if (omp_get_place_num() != t) __atomic_fetch_add(&wrong_place, 1, __ATOMIC_SEQ_CST);
    int id = -1;
    omp_get_place_proc_ids(omp_get_place_num(), &id);
    cpu_set_t s, want;
    pthread_getaffinity_np(pthread_self(), sizeof s, &s);
    CPU_ZERO(&want);
    if (id >= 0) CPU_SET(id, &want);
    if (!CPU_EQUAL(&s, &want)) __atomic_fetch_add(&wrong_mask, 1, __ATOMIC_SEQ_CST);
  }
  CHECK_EQ("threads not at the place of their number", wrong_place, 0);
  CHECK_EQ("threads whose CPU set is not their place", wrong_mask, 0);
  return failures != 0;
}
