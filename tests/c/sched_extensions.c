// sched_extensions.c - libomp's schedule kinds beyond OpenMP's, through
// omp_set_schedule and schedule(runtime): trapezoidal (101) and static_steal
// (102), with and without a chunk, monotonic or not:
//  * omp_get_schedule gives back what was set (static_steal as dynamic, as libomp reports it)
//  * runtime-scheduled loops (int and long long, a negative step) run every
//    iteration exactly once, and lastprivate gets the last iteration
// (Debian's libomp 19 aborts on static_steal from run-sched-var: an assertion.)
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
// oxiomp-test: gcc-reference=skip
// (libgomp lacks libomp's schedule kinds.)
#include <omp.h>
#include <string.h>

#include "check.h"

#define N 1003

int main(void) {
  const int kinds[] = {101, 102};
  const int chunks[] = {0, 1, 7};
  for (int k = 0; k < 2; k++)
    for (int c = 0; c < 3; c++)
      for (int mono = 0; mono < 2; mono++) {
        int kind = kinds[k] | (mono ? (int)omp_sched_monotonic : 0);
        omp_set_schedule((omp_sched_t)kind, chunks[c]);
        omp_sched_t got;
        int chunk;
        omp_get_schedule(&got, &chunk);
        // static_steal is reported as dynamic, as libomp reports it from OMP_SCHEDULE.
        int want = (kinds[k] == 102 ? 2 : kinds[k]) | (mono ? (int)omp_sched_monotonic : 0);
        CHECK_EQ("omp_get_schedule kind", (int)got, want);
        if (chunks[c] > 0) CHECK_EQ("omp_get_schedule chunk", chunk, chunks[c]);

        static int hits[N];
        memset(hits, 0, sizeof hits);
        int last = -1;
#pragma omp parallel for schedule(runtime) lastprivate(last)
        for (int i = 0; i < N; i++) {
#pragma omp atomic
          hits[i]++;
          last = i;
        }
        int once = 1;
        for (int i = 0; i < N; i++) once &= hits[i] == 1;
        CHECK("int loop: every iteration once", once);
        CHECK_EQ("int loop: lastprivate", last, N - 1);

        memset(hits, 0, sizeof hits);
        long long llast = -1;
#pragma omp parallel for schedule(runtime) lastprivate(llast)
        for (long long i = 3LL * N - 1; i >= 0; i -= 3) {
#pragma omp atomic
          hits[i / 3]++;
          llast = i;
        }
        once = 1;
        for (int i = 0; i < N; i++) once &= hits[i] == 1;
        CHECK("long long loop, step -3: every iteration once", once);
        CHECK_EQ("long long loop: lastprivate", llast, 2);
      }
  return failures != 0;
}
