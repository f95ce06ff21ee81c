// nested_default.c - nesting with no OMP_MAX_ACTIVE_LEVELS / OMP_NESTED set and
// OMP_NUM_THREADS a single value: libomp's default max-active-levels is 1
// (implementation defined by the spec; we match libomp), so:
//  * omp_get_max_active_levels() == 1
//  * a region nested inside an active region is inactive: team size 1,
//    omp_get_level() == 2, omp_get_active_level() == 1, even with num_threads(2)
//  * a region nested inside an INACTIVE region (outer num_threads(1)) may
//    still be active: num_threads(2) gives 2 threads, active level 1
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

int main(void) {
  CHECK_EQ("default omp_get_max_active_levels()", omp_get_max_active_levels(), 1);
  int n = omp_get_max_threads();
  int inner_runs = 0;

  /* outer default-size region, inner num_threads(2) */
#pragma omp parallel
  {
    int outer_n = omp_get_num_threads();
    int outer_active = outer_n > 1;
#pragma omp parallel num_threads(2)
    {
      CHECK_EQ("inner omp_get_level()", omp_get_level(), 2);
      if (outer_active) {
        CHECK_EQ("inner team size (outer active)", omp_get_num_threads(), 1);
        CHECK_EQ("inner omp_get_active_level() (outer active)", omp_get_active_level(), 1);
        CHECK_EQ("inner omp_get_thread_num() (outer active)", omp_get_thread_num(), 0);
      } else {
        CHECK_EQ("inner team size (outer inactive)", omp_get_num_threads(), 2);
        CHECK_EQ("inner omp_get_active_level() (outer inactive)", omp_get_active_level(), 1);
      }
      CHECK_EQ("inner omp_get_team_size(1)", omp_get_team_size(1), outer_n);
      __atomic_fetch_add(&inner_runs, 1, __ATOMIC_SEQ_CST);
    }
    /* a third level is never active either */
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    {
      CHECK_EQ("level-3 omp_get_level()", omp_get_level(), 3);
      CHECK_EQ("level-3 omp_get_active_level()", omp_get_active_level(), 1);
    }
  }
  CHECK_EQ("inner region executions", inner_runs, n > 1 ? n : 2);

  /* explicitly inactive outer region: inner one can be active */
  inner_runs = 0;
#pragma omp parallel num_threads(1)
  {
    CHECK_EQ("num_threads(1) outer: omp_get_active_level()", omp_get_active_level(), 0);
    CHECK_EQ("num_threads(1) outer: omp_in_parallel()", omp_in_parallel(), 0);
#pragma omp parallel num_threads(2)
    {
      CHECK_EQ("inner of inactive outer: team size", omp_get_num_threads(), 2);
      CHECK_EQ("inner of inactive outer: level", omp_get_level(), 2);
      CHECK_EQ("inner of inactive outer: active level", omp_get_active_level(), 1);
      CHECK_EQ("inner of inactive outer: omp_in_parallel()", omp_in_parallel(), 1);
      __atomic_fetch_add(&inner_runs, 1, __ATOMIC_SEQ_CST);
    }
  }
  CHECK_EQ("inner-of-inactive executions", inner_runs, 2);

  if (failures) {
    fprintf(stderr, "nested_default: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok nested_default\n");
  return 0;
}
