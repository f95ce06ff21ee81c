// hidden_helpers_off.c - LIBOMP_NUM_HIDDEN_HELPER_THREADS=0 turns the hidden helpers off: no
// gtid is reserved (the first worker is gtid 1), and a target task is an ordinary task run by
// the team's threads.
// oxiomp-test: env=LIBOMP_NUM_HIDDEN_HELPER_THREADS=0
// oxiomp-test: threads=2,4
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>

#include "check.h"

int __kmpc_global_thread_num(void *);

#define N 32

int main(void) {
  int max_gtid = 0, off_team = 0, total = 0, nthreads = 0;
#pragma omp parallel reduction(max : max_gtid) reduction(+ : off_team, total)
  {
#pragma omp single
    nthreads = omp_get_num_threads();
    max_gtid = __kmpc_global_thread_num(0);
    int g[N];
    for (int i = 0; i < N; i++) {
#pragma omp target nowait map(tofrom : g[i : 1]) firstprivate(i)
      g[i] = __kmpc_global_thread_num(0);
    }
#pragma omp taskwait
    for (int i = 0; i < N; i++) off_team += g[i] >= nthreads;
    total += N;
  }
  CHECK_EQ("the team's gtids are 0..n-1", max_gtid, nthreads - 1);
  CHECK_EQ("target tasks ran on the team's threads", off_team, 0);
  CHECK_EQ("every target task ran", total, N * nthreads);
  return failures != 0;
}
