// teams.c - host `teams` construct (__kmpc_push_num_teams / __kmpc_fork_teams):
//  * teams num_teams(2) thread_limit(2): 1 <= omp_get_num_teams() <= 2 (libomp
//    may clamp on a small box), omp_get_team_num() distinct and < num_teams,
//    the structured block runs once per team (on its initial thread: thread
//    num 0, num_threads 1, level 0), omp_get_thread_limit() == 2 inside
//  * a parallel region inside each team: 1 <= size <= thread_limit, level 1,
//    omp_get_team_num() still visible inside it
//    (libomp 19 gives size 1 there, warning "Cannot form a team with 2 threads")
//  * teams without clauses: >= 1 teams, consistent numbering
//  * after teams: omp_get_num_teams() == 1, omp_get_team_num() == 0 and a
//    normal parallel region has the default size
// oxiomp-test: gcc=skip: calls a routine gcc 12 forbids in that construct (teams nesting rule)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXTEAMS 64
static int team_runs[MAXTEAMS];
static int par_runs[MAXTEAMS];
static int par_size[MAXTEAMS];
static int nteams_seen[MAXTEAMS];

int main(void) {
  int maxt = omp_get_max_threads();

  memset(team_runs, 0, sizeof team_runs);
  int bad_num = 0;
#pragma omp teams num_teams(2) thread_limit(2)
  {
    int tn = omp_get_team_num();
    int nteams = omp_get_num_teams();
    if (tn < 0 || tn >= nteams || tn >= MAXTEAMS) {
      __atomic_fetch_add(&bad_num, 1, __ATOMIC_SEQ_CST);
    } else {
      __atomic_fetch_add(&team_runs[tn], 1, __ATOMIC_SEQ_CST);
      nteams_seen[tn] = nteams;
      CHECK_EQ("teams: omp_get_thread_num() in team", omp_get_thread_num(), 0);
      CHECK_EQ("teams: omp_get_num_threads() in team", omp_get_num_threads(), 1);
      CHECK_EQ("teams: omp_get_level() in team", omp_get_level(), 0);
      CHECK_EQ("teams: omp_get_thread_limit() in team", omp_get_thread_limit(), 2);
#pragma omp parallel
      {
        CHECK_EQ("teams/parallel: omp_get_team_num()", omp_get_team_num(), tn);
        CHECK_EQ("teams/parallel: omp_get_level()", omp_get_level(), 1);
        __atomic_fetch_add(&par_runs[tn], 1, __ATOMIC_SEQ_CST);
        if (omp_get_thread_num() == 0) par_size[tn] = omp_get_num_threads();
      }
    }
  }
  CHECK_EQ("teams: out-of-range team numbers", bad_num, 0);
  int nt2 = nteams_seen[0];
  CHECK("num_teams(2): 1 <= omp_get_num_teams() <= 2", nt2 >= 1 && nt2 <= 2);
  for (int i = 0; i < MAXTEAMS; i++) {
    char buf[120];
    snprintf(buf, sizeof buf, "num_teams(2): team %d executions", i);
    CHECK_EQ(buf, team_runs[i], i < nt2 ? 1 : 0);
    if (i < nt2) {
      snprintf(buf, sizeof buf, "num_teams(2): omp_get_num_teams() seen by team %d", i);
      CHECK_EQ(buf, nteams_seen[i], nt2);
      snprintf(buf, sizeof buf, "team %d: inner parallel size in [1, thread_limit]", i);
      CHECK(buf, par_size[i] >= 1 && par_size[i] <= 2);
      snprintf(buf, sizeof buf, "team %d: inner parallel executions", i);
      CHECK_EQ(buf, par_runs[i], par_size[i]);
    }
  }

  /* teams without clauses */
  memset(team_runs, 0, sizeof team_runs);
  memset(nteams_seen, 0, sizeof nteams_seen);
  bad_num = 0;
#pragma omp teams
  {
    int tn = omp_get_team_num();
    int nteams = omp_get_num_teams();
    if (tn < 0 || tn >= nteams || tn >= MAXTEAMS) {
      __atomic_fetch_add(&bad_num, 1, __ATOMIC_SEQ_CST);
    } else {
      __atomic_fetch_add(&team_runs[tn], 1, __ATOMIC_SEQ_CST);
      nteams_seen[tn] = nteams;
    }
  }
  CHECK_EQ("teams (no clauses): out-of-range team numbers", bad_num, 0);
  int ntd = nteams_seen[0];
  CHECK("teams (no clauses): omp_get_num_teams() >= 1", ntd >= 1);
  for (int i = 0; i < MAXTEAMS; i++) CHECK_EQ("teams (no clauses): executions per team",
                                              team_runs[i], i < ntd ? 1 : 0);

  /* teams num_teams(1): exactly one team */
  {
    int runs = 0, nt = -1;
#pragma omp teams num_teams(1)
    {
      __atomic_fetch_add(&runs, 1, __ATOMIC_SEQ_CST);
      nt = omp_get_num_teams();
    }
    CHECK_EQ("num_teams(1): executions", runs, 1);
    CHECK_EQ("num_teams(1): omp_get_num_teams()", nt, 1);
  }

  /* back to normal */
  CHECK_EQ("after teams: omp_get_num_teams()", omp_get_num_teams(), 1);
  CHECK_EQ("after teams: omp_get_team_num()", omp_get_team_num(), 0);
  int ps = -1, cnt = 0;
#pragma omp parallel
  {
    __atomic_fetch_add(&cnt, 1, __ATOMIC_SEQ_CST);
    if (omp_get_thread_num() == 0) ps = omp_get_num_threads();
  }
  CHECK_EQ("after teams: parallel region size", ps, maxt);
  CHECK_EQ("after teams: parallel region executions", cnt, maxt);

  if (failures) {
    fprintf(stderr, "teams: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok teams\n");
  return 0;
}
