// if_clause.c - `parallel if(...)` (serialized parallel regions):
//  * if(0): one thread, omp_get_level()==1, omp_get_active_level()==0,
//    omp_in_parallel()==0, omp_get_num_threads()==1, thread num 0
//  * if(cond) with a runtime condition true / false
//  * num_threads(2) if(0) / proc_bind(close) if(0) must not leak into the
//    next region (next region gets the default team size)
//  * if(0) nested inside an active region: level 2, active level 1, team 1,
//    omp_in_parallel()==1 (an enclosing region is active)
//  * if(0) regions nested inside if(0) regions
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static volatile int vzero = 0, vone = 1;

static int team_size_of_default_region(void) {
  int n = -1;
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) n = omp_get_num_threads();
  }
  return n;
}

int main(void) {
  int maxt = omp_get_max_threads();
  int runs = 0;

#pragma omp parallel if (0)
  {
    CHECK_EQ("if(0): omp_get_num_threads()", omp_get_num_threads(), 1);
    CHECK_EQ("if(0): omp_get_thread_num()", omp_get_thread_num(), 0);
    CHECK_EQ("if(0): omp_get_level()", omp_get_level(), 1);
    CHECK_EQ("if(0): omp_get_active_level()", omp_get_active_level(), 0);
    CHECK_EQ("if(0): omp_in_parallel()", omp_in_parallel(), 0);
    CHECK_EQ("if(0): omp_get_team_size(1)", omp_get_team_size(1), 1);
    CHECK_EQ("if(0): omp_get_ancestor_thread_num(1)", omp_get_ancestor_thread_num(1), 0);
#pragma omp barrier
    runs++;
  }
  CHECK_EQ("if(0): body executions", runs, 1);
  CHECK_EQ("omp_get_level() after if(0)", omp_get_level(), 0);

  /* runtime conditions */
  for (int rep = 0; rep < 50; rep++) {
    int cond = (rep & 1) ? vone : vzero;
    int cnt = 0, nt = -1, act = -1;
#pragma omp parallel if (cond)
    {
      __atomic_fetch_add(&cnt, 1, __ATOMIC_SEQ_CST);
      if (omp_get_thread_num() == 0) {
        nt = omp_get_num_threads();
        act = omp_get_active_level();
      }
    }
    int expect = cond ? maxt : 1;
    CHECK_EQ("if(cond): team size", nt, expect);
    CHECK_EQ("if(cond): executions", cnt, expect);
    CHECK_EQ("if(cond): active level", act, expect > 1 ? 1 : 0);
  }

  /* clauses of a serialized region do not leak */
  {
    int nt = -1;
#pragma omp parallel num_threads(2) if (0)
    { nt = omp_get_num_threads(); }
    CHECK_EQ("num_threads(2) if(0): team size", nt, 1);
    CHECK_EQ("region after num_threads(2) if(0)", team_size_of_default_region(), maxt);
#pragma omp parallel num_threads(3) if (vzero)
    { nt = omp_get_num_threads(); }
    CHECK_EQ("num_threads(3) if(false var): team size", nt, 1);
    CHECK_EQ("region after num_threads(3) if(false var)", team_size_of_default_region(), maxt);
#pragma omp parallel num_threads(3) proc_bind(close) if (0)
    { nt = omp_get_num_threads(); }
    CHECK_EQ("region after num_threads(3) proc_bind(close) if(0)",
             team_size_of_default_region(), maxt);
#pragma omp parallel num_threads(3) if (vone)
    { if (omp_get_thread_num() == 0) nt = omp_get_num_threads(); }
    CHECK_EQ("num_threads(3) if(true var): team size", nt, 3);
  }

  /* if(0) nested in an active region */
  {
    int inner = 0;
#pragma omp parallel num_threads(2)
    {
      int outer_tid = omp_get_thread_num();
#pragma omp parallel if (0)
      {
        CHECK_EQ("nested if(0): omp_get_num_threads()", omp_get_num_threads(), 1);
        CHECK_EQ("nested if(0): omp_get_thread_num()", omp_get_thread_num(), 0);
        CHECK_EQ("nested if(0): omp_get_level()", omp_get_level(), 2);
        CHECK_EQ("nested if(0): omp_get_active_level()", omp_get_active_level(), 1);
        CHECK_EQ("nested if(0): omp_in_parallel()", omp_in_parallel(), 1);
        CHECK_EQ("nested if(0): ancestor(1)", omp_get_ancestor_thread_num(1), outer_tid);
        CHECK_EQ("nested if(0): team_size(1)", omp_get_team_size(1), 2);
        CHECK_EQ("nested if(0): team_size(2)", omp_get_team_size(2), 1);
        __atomic_fetch_add(&inner, 1, __ATOMIC_SEQ_CST);
      }
      CHECK_EQ("after nested if(0): team size", omp_get_num_threads(), 2);
      CHECK_EQ("after nested if(0): thread num", omp_get_thread_num(), outer_tid);
      CHECK_EQ("after nested if(0): level", omp_get_level(), 1);
    }
    CHECK_EQ("nested if(0) executions", inner, 2);
  }

  /* if(0) inside if(0) inside if(0) */
  {
    int deepest = 0;
#pragma omp parallel if (0)
#pragma omp parallel if (vzero)
#pragma omp parallel if (0)
    {
      CHECK_EQ("triple if(0): level", omp_get_level(), 3);
      CHECK_EQ("triple if(0): active level", omp_get_active_level(), 0);
      CHECK_EQ("triple if(0): team size", omp_get_num_threads(), 1);
      CHECK_EQ("triple if(0): ancestor(2)", omp_get_ancestor_thread_num(2), 0);
      deepest++;
    }
    CHECK_EQ("triple if(0) executions", deepest, 1);
    CHECK_EQ("level after triple if(0)", omp_get_level(), 0);
  }

  /* an active region inside a serialized one */
  {
    int cnt = 0;
#pragma omp parallel if (0)
    {
#pragma omp parallel num_threads(2)
      {
        CHECK_EQ("active inside if(0): team size", omp_get_num_threads(), 2);
        CHECK_EQ("active inside if(0): level", omp_get_level(), 2);
        CHECK_EQ("active inside if(0): active level", omp_get_active_level(), 1);
        __atomic_fetch_add(&cnt, 1, __ATOMIC_SEQ_CST);
      }
    }
    CHECK_EQ("active inside if(0): executions", cnt, 2);
  }

  CHECK_EQ("final default region size", team_size_of_default_region(), maxt);
  if (failures) {
    fprintf(stderr, "if_clause: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok if_clause\n");
  return 0;
}
