// nested.c - nested parallel regions with OMP_MAX_ACTIVE_LEVELS=3:
//  * three levels of `parallel num_threads(2)`; innermost: omp_get_level()==3,
//    omp_get_active_level()==3, omp_get_ancestor_thread_num(k) (k=0..3),
//    omp_get_team_size(k), out-of-range levels give -1; 8 innermost executions
//    with distinct (ancestor1, ancestor2, ancestor3) paths
//  * omp_set_max_active_levels(2) / (1): deeper regions are serialized (team
//    size 1, level still increments, active level does not)
// oxiomp-test: env=OMP_MAX_ACTIVE_LEVELS=3
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int inner_count;
static int path_seen[8];

/* max_active: effective max-active-levels (3, 2 or 1) */
static void run_nest(int max_active) {
  char buf[160];
  inner_count = 0;
  memset(path_seen, 0, sizeof path_seen);
  int sz1 = max_active >= 1 ? 2 : 1;
  int sz2 = max_active >= 2 ? 2 : 1;
  int sz3 = max_active >= 3 ? 2 : 1;
#pragma omp parallel num_threads(2)
  {
    int t1 = omp_get_thread_num();
    snprintf(buf, sizeof buf, "[mal=%d] level-1 team size", max_active);
    CHECK_EQ(buf, omp_get_num_threads(), sz1);
    CHECK_EQ("level-1 omp_get_level", omp_get_level(), 1);
#pragma omp parallel num_threads(2)
    {
      int t2 = omp_get_thread_num();
      char b2[160];
      snprintf(b2, sizeof b2, "[mal=%d] level-2 team size", max_active);
      CHECK_EQ(b2, omp_get_num_threads(), sz2);
      snprintf(b2, sizeof b2, "[mal=%d] level-2 omp_get_level", max_active);
      CHECK_EQ(b2, omp_get_level(), 2);
      snprintf(b2, sizeof b2, "[mal=%d] level-2 omp_get_active_level", max_active);
      CHECK_EQ(b2, omp_get_active_level(), max_active < 2 ? max_active : 2);
      snprintf(b2, sizeof b2, "[mal=%d] level-2 ancestor(1)", max_active);
      CHECK_EQ(b2, omp_get_ancestor_thread_num(1), t1);
#pragma omp parallel num_threads(2)
      {
        char b[160];
        int t3 = omp_get_thread_num();
        int lvl = omp_get_level(), act = omp_get_active_level();
        snprintf(b, sizeof b, "[mal=%d] innermost omp_get_level", max_active);
        CHECK_EQ(b, lvl, 3);
        snprintf(b, sizeof b, "[mal=%d] innermost omp_get_active_level", max_active);
        CHECK_EQ(b, act, max_active < 3 ? max_active : 3);
        snprintf(b, sizeof b, "[mal=%d] innermost omp_get_num_threads", max_active);
        CHECK_EQ(b, omp_get_num_threads(), sz3);
        snprintf(b, sizeof b, "[mal=%d] innermost omp_in_parallel", max_active);
        CHECK_EQ(b, omp_in_parallel(), 1);
        /* ancestors */
        snprintf(b, sizeof b, "[mal=%d] ancestor_thread_num(0)", max_active);
        CHECK_EQ(b, omp_get_ancestor_thread_num(0), 0);
        snprintf(b, sizeof b, "[mal=%d] ancestor_thread_num(1)", max_active);
        CHECK_EQ(b, omp_get_ancestor_thread_num(1), t1);
        snprintf(b, sizeof b, "[mal=%d] ancestor_thread_num(2)", max_active);
        CHECK_EQ(b, omp_get_ancestor_thread_num(2), t2);
        snprintf(b, sizeof b, "[mal=%d] ancestor_thread_num(3)==omp_get_thread_num()", max_active);
        CHECK_EQ(b, omp_get_ancestor_thread_num(3), t3);
        snprintf(b, sizeof b, "[mal=%d] ancestor_thread_num(4) out of range", max_active);
        CHECK_EQ(b, omp_get_ancestor_thread_num(4), -1);
        snprintf(b, sizeof b, "[mal=%d] ancestor_thread_num(-1) out of range", max_active);
        CHECK_EQ(b, omp_get_ancestor_thread_num(-1), -1);
        /* team sizes */
        snprintf(b, sizeof b, "[mal=%d] team_size(0)", max_active);
        CHECK_EQ(b, omp_get_team_size(0), 1);
        snprintf(b, sizeof b, "[mal=%d] team_size(1)", max_active);
        CHECK_EQ(b, omp_get_team_size(1), sz1);
        snprintf(b, sizeof b, "[mal=%d] team_size(2)", max_active);
        CHECK_EQ(b, omp_get_team_size(2), sz2);
        snprintf(b, sizeof b, "[mal=%d] team_size(3)", max_active);
        CHECK_EQ(b, omp_get_team_size(3), sz3);
        snprintf(b, sizeof b, "[mal=%d] team_size(4) out of range", max_active);
        CHECK_EQ(b, omp_get_team_size(4), -1);
        snprintf(b, sizeof b, "[mal=%d] team_size(-1) out of range", max_active);
        CHECK_EQ(b, omp_get_team_size(-1), -1);
        if (t1 >= 0 && t1 < 2 && t2 >= 0 && t2 < 2 && t3 >= 0 && t3 < 2)
          __atomic_fetch_add(&path_seen[t1 * 4 + t2 * 2 + t3], 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&inner_count, 1, __ATOMIC_SEQ_CST);
      }
      snprintf(b2, sizeof b2, "[mal=%d] level after innermost region", max_active);
      CHECK_EQ(b2, omp_get_level(), 2);
    }
    CHECK_EQ("level after level-2 region", omp_get_level(), 1);
  }
  snprintf(buf, sizeof buf, "[mal=%d] innermost execution count", max_active);
  CHECK_EQ(buf, inner_count, sz1 * sz2 * sz3);
  for (int t1 = 0; t1 < 2; t1++)
    for (int t2 = 0; t2 < 2; t2++)
      for (int t3 = 0; t3 < 2; t3++) {
        int expect = (t1 < sz1 && t2 < sz2 && t3 < sz3) ? 1 : 0;
        snprintf(buf, sizeof buf, "[mal=%d] innermost path (%d,%d,%d) count", max_active,
                 t1, t2, t3);
        CHECK_EQ(buf, path_seen[t1 * 4 + t2 * 2 + t3], expect);
      }
  CHECK_EQ("level after nest", omp_get_level(), 0);
  CHECK_EQ("active level after nest", omp_get_active_level(), 0);
}

int main(void) {
  CHECK_EQ("omp_get_max_active_levels() with OMP_MAX_ACTIVE_LEVELS=3",
           omp_get_max_active_levels(), 3);
  CHECK_EQ("level 0: ancestor_thread_num(0)", omp_get_ancestor_thread_num(0), 0);
  CHECK_EQ("level 0: ancestor_thread_num(1)", omp_get_ancestor_thread_num(1), -1);
  CHECK_EQ("level 0: team_size(0)", omp_get_team_size(0), 1);
  CHECK_EQ("level 0: team_size(1)", omp_get_team_size(1), -1);
  run_nest(3);
  run_nest(3); /* reuse of nested teams */
  omp_set_max_active_levels(2);
  CHECK_EQ("omp_get_max_active_levels() after set(2)", omp_get_max_active_levels(), 2);
  run_nest(2);
  omp_set_max_active_levels(1);
  CHECK_EQ("omp_get_max_active_levels() after set(1)", omp_get_max_active_levels(), 1);
  run_nest(1);
  omp_set_max_active_levels(3);
  run_nest(3);
  if (failures) {
    fprintf(stderr, "nested: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok nested\n");
  return 0;
}
