// proc_bind_push.c - the proc_bind clause (__kmpc_push_proc_bind; clang-19
// passes master=2, close=3, spread=4, primary=5) with no OMP_PROC_BIND /
// OMP_PLACES set:
//  * parallel proc_bind(spread|close|primary|master) regions run with the
//    right team size and results, alone and combined with num_threads(n)
//  * omp_get_proc_bind() inside equals the value outside: the clause does not
//    change bind-var (no OMP_PROC_BIND list here)
//  * the clause does not stick: the next plain region has the default size
//  * proc_bind on a nested region and on an if(0) region
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static int bind0;
static int maxt;

#define REGION(CLAUSES, NAME, EXPECT_N)                                        \
  do {                                                                         \
    long sum = 0;                                                              \
    int nt = -1, badbind = 0;                                                  \
    _Pragma(CLAUSES) {                                                         \
      __atomic_fetch_add(&sum, (long)omp_get_thread_num() + 1, __ATOMIC_SEQ_CST); \
      if (omp_get_proc_bind() != bind0) __atomic_fetch_add(&badbind, 1, __ATOMIC_SEQ_CST); \
      if (omp_get_thread_num() == 0) nt = omp_get_num_threads();               \
    }                                                                          \
    int en_ = (EXPECT_N);                                                      \
    CHECK_EQ(NAME ": team size", nt, en_);                                     \
    CHECK_EQ(NAME ": sum of thread ids", sum, (long)en_ * (en_ + 1) / 2);      \
    CHECK_EQ(NAME ": omp_get_proc_bind() inside != outside", badbind, 0);      \
    CHECK_EQ(NAME ": next plain region size", plain_size(), maxt);             \
  } while (0)

static int plain_size(void) {
  int n = -1;
#pragma omp parallel
  if (omp_get_thread_num() == 0) n = omp_get_num_threads();
  return n;
}

int main(void) {
  maxt = omp_get_max_threads();
  bind0 = omp_get_proc_bind();
  for (int rep = 0; rep < 3; rep++) {
    REGION("omp parallel proc_bind(spread)", "proc_bind(spread)", maxt);
    REGION("omp parallel proc_bind(close)", "proc_bind(close)", maxt);
    REGION("omp parallel proc_bind(primary)", "proc_bind(primary)", maxt);
    REGION("omp parallel proc_bind(master)", "proc_bind(master)", maxt);
    REGION("omp parallel num_threads(3) proc_bind(spread)", "num_threads(3) proc_bind(spread)", 3);
    REGION("omp parallel num_threads(2) proc_bind(close)", "num_threads(2) proc_bind(close)", 2);
    REGION("omp parallel proc_bind(primary) num_threads(4)", "proc_bind(primary) num_threads(4)", 4);
    REGION("omp parallel num_threads(1) proc_bind(spread)", "num_threads(1) proc_bind(spread)", 1);
    REGION("omp parallel proc_bind(close) if(0)", "proc_bind(close) if(0)", 1);
  }
  CHECK_EQ("omp_get_proc_bind() after all regions", omp_get_proc_bind(), bind0);

  /* nested: outer spread, inner close (inner inactive unless nesting allowed) */
  {
    int inner = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2) proc_bind(spread)
    {
#pragma omp parallel num_threads(2) proc_bind(close)
      {
        CHECK_EQ("nested proc_bind: inner team size", omp_get_num_threads(), 2);
        CHECK_EQ("nested proc_bind: level", omp_get_level(), 2);
        __atomic_fetch_add(&inner, 1, __ATOMIC_SEQ_CST);
      }
    }
    CHECK_EQ("nested proc_bind: inner executions", inner, 4);
  }

  if (failures) {
    fprintf(stderr, "proc_bind_push: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok proc_bind_push\n");
  return 0;
}
