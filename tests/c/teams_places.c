// teams_places.c - with binding in force (OMP_PLACES=threads) a league's teams divide the
// place partition as a parallel region's threads would, spread by default
// (KMP_TEAMS_PROC_BIND, as in libomp). For every number of teams asked from 1 to 2P (P
// places), with N the number of teams the league has:
//  * N <= P: the teams' partitions are disjoint runs of consecutive places that cover all P,
//    each of floor(P/N) or ceil(P/N) places, team k's before team k+1's; each team's initial
//    thread is at the first place of its partition, bound to that place's CPU;
//  * N > P: each partition is one place, teams in non-decreasing place order.
// oxiomp-test: env=OMP_PLACES=threads
// oxiomp-test: threads=none
// oxiomp-test: bound=skip
// oxiomp-test: gcc=skip: calls a routine gcc 12 forbids in that construct (teams nesting rule)
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"

#define MAXT 64
static int first[MAXT], len[MAXT], place[MAXT], bound_ok[MAXT], got;

int main(void) {
  int P = omp_get_num_places();
  if (P < 1 || 2 * P > MAXT) return 0;
  for (int asked = 1; asked <= 2 * P; asked++) {
#pragma omp teams num_teams(asked)
    {
      int k = omp_get_team_num();
      if (k == 0) got = omp_get_num_teams();
      int ids[MAXT];
      len[k] = omp_get_partition_num_places();
      omp_get_partition_place_nums(ids);
      first[k] = len[k] > 0 ? ids[0] : -1;
      place[k] = omp_get_place_num();
      int cpu = -1;
      if (place[k] >= 0) omp_get_place_proc_ids(place[k], &cpu);
      cpu_set_t s;
      pthread_getaffinity_np(pthread_self(), sizeof s, &s);
      bound_ok[k] = cpu >= 0 && CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s);
    }
    int n = got, covered = 0, bad = 0; // libomp starts no more teams than CPUs
    for (int k = 0; k < n; k++) {
      if (!bound_ok[k]) bad++;
      if (n <= P) {
        if (len[k] != P / n && len[k] != (P + n - 1) / n) bad++;
        if (first[k] != covered) bad++;
        if (place[k] != first[k]) bad++;
        covered += len[k];
      } else {
        if (len[k] != 1 || place[k] != first[k]) bad++;
        if (k > 0 && place[k] < place[k - 1]) bad++;
      }
    }
    if (n <= P) CHECK_EQ("the partitions cover every place", covered, P);
    CHECK_EQ("teams placed against the spread rules", bad, 0);
  }
  return failures != 0;
}
