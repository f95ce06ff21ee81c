// pause_resource_ours.c - omp_pause_resource where Debian's libomp 19 differs:
//  * called inside a parallel region or a teams region it returns non-zero and
//    pauses nothing (libomp returns 0; inside teams our runtime crashed once:
//    the league's end put its team back into a list the pause had emptied)
//  * 60 rounds of a 4-thread region and a hard pause start threads on the
//    retired descriptors: thread numbers (gtids) stay small
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: reference=skip
// oxiomp-test: stderr-contains=omp_pause_resource_all: called inside a parallel or teams region
// oxiomp-test: gcc=skip: calls a routine gcc 12 forbids in that construct (teams nesting rule)
#include <omp.h>

#include "check.h"

int __kmpc_global_thread_num(void *loc);

int main(void) {
  int in_par = 0, in_teams = 0, n = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  in_par = omp_pause_resource_all(omp_pause_soft);
  CHECK("inside a parallel region: non-zero", in_par != 0);
#pragma omp teams num_teams(2)
  if (omp_get_team_num() == 0) in_teams = omp_pause_resource_all(omp_pause_hard);
  CHECK("inside a teams region: non-zero", in_teams != 0);
  int max_gtid = 0;
  for (int r = 0; r < 60; r++) {
#pragma omp parallel num_threads(4) reduction(max : max_gtid) reduction(+ : n)
    {
      int g = __kmpc_global_thread_num(NULL);
      max_gtid = g > max_gtid ? g : max_gtid;
      n++;
    }
    CHECK_EQ("pause", omp_pause_resource_all(omp_pause_hard), 0);
  }
  CHECK_EQ("every region ran", n, 60 * 4);
  CHECK("gtids stay small: descriptors are reused", max_gtid < 64);
  return failures != 0;
}
