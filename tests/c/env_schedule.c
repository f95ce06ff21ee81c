// env_schedule.c - OMP_SCHEDULE=dynamic,7 initialises run-sched-var:
//  * omp_get_schedule() gives omp_sched_dynamic (monotonic bit masked off) and 7
//  * implicit tasks of a region inherit it
//  * omp_set_schedule() overrides it afterwards
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_SCHEDULE=dynamic,7
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#define KIND(k) ((unsigned)(k) & ~(unsigned)omp_sched_monotonic)

int main(void) {
  omp_sched_t k;
  int c;
  omp_get_schedule(&k, &c);
  CHECK_EQ("OMP_SCHEDULE=dynamic,7: kind", KIND(k), omp_sched_dynamic);
  CHECK_EQ("OMP_SCHEDULE=dynamic,7: chunk", c, 7);
  int bad = 0, runs = 0;
#pragma omp parallel num_threads(2)
  {
    omp_sched_t k2;
    int c2;
    omp_get_schedule(&k2, &c2);
    if (KIND(k2) != omp_sched_dynamic || c2 != 7) __atomic_fetch_add(&bad, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&runs, 1, __ATOMIC_SEQ_CST);
  }
  CHECK_EQ("implicit tasks with a different schedule", bad, 0);
  CHECK_EQ("region executions", runs, 2);
  omp_set_schedule(omp_sched_guided, 3);
  omp_get_schedule(&k, &c);
  CHECK_EQ("after omp_set_schedule(guided,3): kind", KIND(k), omp_sched_guided);
  CHECK_EQ("after omp_set_schedule(guided,3): chunk", c, 3);
  if (failures) {
    fprintf(stderr, "env_schedule: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok env_schedule\n");
  return 0;
}
