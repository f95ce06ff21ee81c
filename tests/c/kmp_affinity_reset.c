// kmp_affinity_reset.c - KMP_AFFINITY=reset,verbose,granularity=thread,compact with
// OMP_NUM_THREADS=2,2: inside a region (and a region nested in it) the primary thread is bound
// to one CPU, so its CPU set differs from the one the process started with; after each
// outermost region it has that initial set back (reset), ten times over. verbose prints the
// places and the bindings.
// oxiomp-test: env=KMP_AFFINITY=reset,verbose,granularity=thread,compact
// oxiomp-test: env=OMP_NUM_THREADS=2,2
// oxiomp-test: threads=none
// oxiomp-test: bound=skip
// oxiomp-test: stderr-contains=KMP_AFFINITY: 
// oxiomp-test: gcc-reference=skip
// (libgomp ignores KMP_AFFINITY's reset.)
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"

static cpu_set_t initial;

static int primary_differs(void) {
  cpu_set_t s;
  pthread_getaffinity_np(pthread_self(), sizeof s, &s);
  return !CPU_EQUAL(&s, &initial);
}

int main(void) {
  pthread_getaffinity_np(pthread_self(), sizeof initial, &initial);
  if (CPU_COUNT(&initial) < 2) return 0; // one CPU: bound and unbound sets are the same
  int inside_same = 0, nested_same = 0, after_differs = 0;
  for (int i = 0; i < 10; i++) {
#pragma omp parallel
#pragma omp master
    {
      if (!primary_differs()) inside_same++;
#pragma omp parallel
#pragma omp master
      if (!primary_differs()) __atomic_fetch_add(&nested_same, 1, __ATOMIC_SEQ_CST);
    }
    if (primary_differs()) after_differs++;
  }
  CHECK_EQ("regions whose primary thread kept the initial CPU set", inside_same, 0);
  CHECK_EQ("nested regions whose primary thread kept it", nested_same, 0);
  CHECK_EQ("outermost regions after which it was not reset", after_differs, 0);
  return failures != 0;
}
