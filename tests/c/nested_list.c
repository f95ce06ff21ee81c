// nested_list.c - OMP_NUM_THREADS=3,2 (a list): per OpenMP 5.x a list with more
// than one value makes max-active-levels-var default to the supported number
// of levels (libomp: INT_MAX), so nesting is enabled:
//  * omp_get_max_threads() == 3 at level 0; outer team has 3 threads
//  * inside the outer region omp_get_max_threads() == 2; inner team has 2
//  * inside the inner region the last list value (2) stays in effect
//  * total innermost executions == 6
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_NUM_THREADS=3,2
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

int main(void) {
  CHECK_EQ("omp_get_max_threads() at level 0", omp_get_max_threads(), 3);
  int mal = omp_get_max_active_levels();
  CHECK_EQ("omp_get_max_active_levels() >= 2 with a 2-element list", mal >= 2, 1);
  CHECK_EQ("omp_get_max_active_levels() == omp_get_supported_active_levels()", mal,
           omp_get_supported_active_levels());
  int inner = 0, outer = 0;
  int seen[3][2] = {{0}};
  for (int rep = 0; rep < 3; rep++) {
    inner = outer = 0;
    for (int i = 0; i < 3; i++) seen[i][0] = seen[i][1] = 0;
#pragma omp parallel
    {
      int t1 = omp_get_thread_num();
      CHECK_EQ("outer team size", omp_get_num_threads(), 3);
      CHECK_EQ("omp_get_max_threads() inside outer", omp_get_max_threads(), 2);
      __atomic_fetch_add(&outer, 1, __ATOMIC_SEQ_CST);
#pragma omp parallel
      {
        int t2 = omp_get_thread_num();
        CHECK_EQ("inner team size", omp_get_num_threads(), 2);
        CHECK_EQ("inner omp_get_level()", omp_get_level(), 2);
        CHECK_EQ("inner omp_get_active_level()", omp_get_active_level(), 2);
        CHECK_EQ("inner omp_get_ancestor_thread_num(1)", omp_get_ancestor_thread_num(1), t1);
        CHECK_EQ("inner omp_get_team_size(1)", omp_get_team_size(1), 3);
        CHECK_EQ("omp_get_max_threads() inside inner", omp_get_max_threads(), 2);
        if (t1 >= 0 && t1 < 3 && t2 >= 0 && t2 < 2)
          __atomic_fetch_add(&seen[t1][t2], 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&inner, 1, __ATOMIC_SEQ_CST);
#pragma omp parallel
        {
          CHECK_EQ("level-3 team size", omp_get_num_threads(), 2);
          CHECK_EQ("level-3 omp_get_active_level()", omp_get_active_level(), 3);
        }
      }
    }
    CHECK_EQ("outer executions", outer, 3);
    CHECK_EQ("inner executions", inner, 6);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) CHECK_EQ("each (outer tid, inner tid) pair once", seen[i][j], 1);
  }
  CHECK_EQ("omp_get_max_threads() at level 0 afterwards", omp_get_max_threads(), 3);
  if (failures) {
    fprintf(stderr, "nested_list: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok nested_list\n");
  return 0;
}
