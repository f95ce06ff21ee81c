// task_deps_scale.c - dependence tracking at scale, one creating thread (in single):
//  * a chain of CHAIN tasks depend(inout: x), each incrementing x (plain, not atomic: the
//    chain orders them) and checking it sees exactly the count of its predecessors: x == CHAIN
//  * fan-in: FAN tasks depend(in: y) each incrementing a counter, then one depend(out: y)
//    task that must see all FAN readers finished
//  * fan-out: one depend(out: z) task, then FAN tasks depend(in: z) that must all see its
//    write; a final depend(out: z) task sees all of them finished
// oxiomp-test: threads=1,2,4,16
#include <omp.h>
#include <stdio.h>

#include "check.h"

#define CHAIN 200000
#define FAN 100000

static long x, y, z, readers, bad_order, bad_value, out_ran;

int main(void) {
#pragma omp parallel
#pragma omp single
  {
    for (long i = 0; i < CHAIN; i++) {
#pragma omp task depend(inout : x) firstprivate(i)
      {
        if (x != i) __atomic_fetch_add(&bad_order, 1, __ATOMIC_RELAXED);
        x++;
      }
    }
  }
  CHECK_EQ("chain: x", x, CHAIN);
  CHECK_EQ("chain: tasks that saw another count than their index", bad_order, 0);

  readers = 0;
#pragma omp parallel
#pragma omp single
  {
    for (long i = 0; i < FAN; i++) {
#pragma omp task depend(in : y)
      __atomic_fetch_add(&readers, 1, __ATOMIC_RELAXED);
    }
#pragma omp task depend(out : y)
    {
      CHECK_EQ("fan-in: readers finished before the writer", __atomic_load_n(&readers, __ATOMIC_SEQ_CST), FAN);
      out_ran = 1;
    }
  }
  CHECK_EQ("fan-in: readers", readers, FAN);
  CHECK_EQ("fan-in: writer ran", out_ran, 1);

  readers = 0;
  out_ran = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : z)
    z = 42;
    for (long i = 0; i < FAN; i++) {
#pragma omp task depend(in : z)
      {
        if (z != 42) __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&readers, 1, __ATOMIC_RELAXED);
      }
    }
#pragma omp task depend(out : z)
    {
      CHECK_EQ("fan-out: readers finished before the last writer", __atomic_load_n(&readers, __ATOMIC_SEQ_CST), FAN);
      out_ran = 1;
    }
  }
  CHECK_EQ("fan-out: readers that did not see the writer's value", bad_value, 0);
  CHECK_EQ("fan-out: readers", readers, FAN);
  CHECK_EQ("fan-out: last writer ran", out_ran, 1);
  return failures != 0;
}
