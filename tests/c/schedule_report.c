// schedule_report.c - omp_get_schedule reports run-sched-var as libomp does:
//  * OMP_SCHEDULE=monotonic:static,52 gives static with the monotonic bit, chunk 52 (a
//    modifier that was given is reported, for static too);
//  * omp_set_schedule(static | monotonic, 0) likewise keeps the bit; static without it has
//    none, and chunk 0 (no chunk given);
//  * dynamic, guided, auto and trapezoidal without a chunk report chunk 1 (what they use);
//  (static_steal, reported as dynamic, is checked by the engine's unit tests: libomp 19 aborts
//  on omp_set_schedule(static_steal, ...).)
//  * a nested region's omp_set_schedule does not change the enclosing task's.
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_SCHEDULE=monotonic:static,52
// oxiomp-test: gcc-reference=skip
// (libgomp lacks libomp's schedule kinds.)
#include <omp.h>
#include <stdio.h>

#include "check.h"

static void expect(const char *what, int kind, int chunk) {
  omp_sched_t k;
  int c;
  omp_get_schedule(&k, &c);
  if ((int)k != kind || c != chunk) {
    fprintf(stderr, "%s: (0x%x, %d)\n", what, (unsigned)k, c);
  }
  CHECK_EQ(what, (int)k, kind);
  CHECK_EQ(what, c, chunk);
}

int main(void) {
  const int mono = (int)omp_sched_monotonic;
  expect("OMP_SCHEDULE=monotonic:static,52", omp_sched_static | mono, 52);
  omp_set_schedule((omp_sched_t)(omp_sched_static | mono), 0);
  expect("set static|monotonic, 0", omp_sched_static | mono, 0);
  omp_set_schedule(omp_sched_static, 0);
  expect("set static, 0", omp_sched_static, 0);
  omp_set_schedule((omp_sched_t)(omp_sched_dynamic | mono), 3);
  expect("set dynamic|monotonic, 3", omp_sched_dynamic | mono, 3);
  omp_set_schedule(omp_sched_dynamic, 0);
  expect("set dynamic, 0", omp_sched_dynamic, 1);
  omp_set_schedule(omp_sched_guided, 0);
  expect("set guided, 0", omp_sched_guided, 1);
  omp_set_schedule(omp_sched_auto, 0);
  expect("set auto, 0", omp_sched_auto, 1);
  omp_set_schedule((omp_sched_t)101, 0);
  expect("set trapezoidal, 0", 101, 1);

  omp_set_schedule((omp_sched_t)(omp_sched_guided | mono), 5);
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
    omp_set_schedule(omp_sched_dynamic, 9);
#pragma omp parallel num_threads(2)
    expect("inner region inherits its task's schedule", omp_sched_dynamic, 9);
  }
  expect("after the region", omp_sched_guided | mono, 5);
  return failures != 0;
}
