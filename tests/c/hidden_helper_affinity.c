// hidden_helper_affinity.c - LIBOMP_NUM_HIDDEN_HELPER_THREADS=3 and
// KMP_HIDDEN_HELPER_AFFINITY=verbose,granularity=fine,compact: three helpers run the target
// tasks (gtids 2..4), each bound to one CPU and reported in libomp's words; the program's
// workers are numbered from 5.
// oxiomp-test: env=LIBOMP_NUM_HIDDEN_HELPER_THREADS=3
// oxiomp-test: env=KMP_HIDDEN_HELPER_AFFINITY=verbose,granularity=fine,compact
// oxiomp-test: stderr-contains=OMP: Info #254: KMP_HIDDEN_HELPER_AFFINITY: pid
// oxiomp-test: threads=2,4
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>

#include "check.h"

int __kmpc_global_thread_num(void *);

#define N 32

int main(void) {
  int g[N], cpus[N];
  for (int i = 0; i < N; i++) {
#pragma omp target nowait map(tofrom : g[i : 1], cpus[i : 1]) firstprivate(i)
    {
      cpu_set_t set;
      CPU_ZERO(&set);
      sched_getaffinity(0, sizeof set, &set);
      cpus[i] = CPU_COUNT(&set);
      g[i] = __kmpc_global_thread_num(0);
    }
  }
#pragma omp taskwait
  int off_helpers = 0, unbound = 0;
  for (int i = 0; i < N; i++) {
    off_helpers += g[i] < 2 || g[i] > 4;
    unbound += cpus[i] != 1;
  }
  CHECK_EQ("target tasks ran on the three helpers", off_helpers, 0);
  CHECK_EQ("each helper is bound to one CPU", unbound, 0);
  int low = 0;
#pragma omp parallel reduction(+ : low)
  low += omp_get_thread_num() != 0 && __kmpc_global_thread_num(0) <= 4;
  CHECK_EQ("workers are numbered after the helpers", low, 0);
  return failures != 0;
}
