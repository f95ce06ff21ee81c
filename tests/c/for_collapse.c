// for_collapse.c - collapse(2) and collapse(3) with the dispatched schedules (for_static.c has
// the static ones): dynamic, dynamic with a chunk, guided, runtime after omp_set_schedule,
// nonmonotonic:dynamic; rectangular nests with empty inner and outer ranges, negative inner
// steps and unsigned / long long indices. Every (i, j[, k]) runs exactly once; with
// lastprivate, the last values are those of the sequentially last iteration.
// libomp 19 fails the lastprivate checks of the nonmonotonic dynamic loops at 2 threads and
// more (as in for_dynamic_lastprivate.c: its stealing loses the last-iteration flag), hence
// reference=skip.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
#include <omp.h>
#include <string.h>

#include "check.h"

#define NI 23
#define NJ 17
#define NK 5
static int hits[NI][NJ][NK];

static int wrong_hits(int ni, int nj, int nk) {
  int w = 0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      for (int k = 0; k < NK; k++) w += hits[i][j][k] != (i < ni && j < nj && k < nk);
  return w;
}

#define DO_PRAGMA(x) _Pragma(#x)
#define PRAGMA(x) DO_PRAGMA(x)

#define RUN2(SCHED, NAME)                                                                  \
  do {                                                                                     \
    memset(hits, 0, sizeof hits);                                                          \
    int li = -1, lj = -1;                                                                  \
    PRAGMA(omp parallel for collapse(2) lastprivate(li, lj) SCHED)                         \
    for (int i = 0; i < ni; i++)                                                           \
      for (int j = nj - 1; j >= 0; j--) {                                                  \
        __atomic_fetch_add(&hits[i][j][0], 1, __ATOMIC_RELAXED);                           \
        li = i;                                                                            \
        lj = j;                                                                            \
      }                                                                                    \
    CHECK_EQ(NAME ": each (i, j) once", wrong_hits(ni, nj, 1), 0);                         \
    if (ni > 0 && nj > 0) {                                                                \
      CHECK_EQ(NAME ": lastprivate i", li, ni - 1);                                        \
      CHECK_EQ(NAME ": lastprivate j", lj, 0);                                             \
    }                                                                                      \
  } while (0)

#define RUN3(SCHED, NAME)                                                                  \
  do {                                                                                     \
    memset(hits, 0, sizeof hits);                                                          \
    PRAGMA(omp parallel for collapse(3) SCHED)                                             \
    for (unsigned i = 0; i < (unsigned)ni; i++)                                            \
      for (long long j = 0; j < nj; j += 1)                                                \
        for (unsigned long long k = 0; k < (unsigned long long)nk; k++)                    \
          __atomic_fetch_add(&hits[i][j][k], 1, __ATOMIC_RELAXED);                         \
    CHECK_EQ(NAME ": each (i, j, k) once", wrong_hits(ni, nj, nk), 0);                     \
  } while (0)

int main(void) {
  static const int shapes[][3] = {{NI, NJ, NK}, {1, 1, 1}, {0, NJ, NK}, {NI, 0, NK}, {NI, NJ, 0}, {3, 1, 2}};
  omp_set_schedule(omp_sched_guided, 4);
  for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
    int ni = shapes[s][0], nj = shapes[s][1], nk = shapes[s][2];
    RUN2(schedule(dynamic), "collapse(2) dynamic");
    RUN2(schedule(dynamic, 5), "collapse(2) dynamic,5");
    RUN2(schedule(guided), "collapse(2) guided");
    RUN2(schedule(guided, 3), "collapse(2) guided,3");
    RUN2(schedule(runtime), "collapse(2) runtime (guided,4)");
    RUN2(schedule(nonmonotonic: dynamic, 2), "collapse(2) nonmonotonic:dynamic,2");
    RUN2(schedule(monotonic: dynamic, 3), "collapse(2) monotonic:dynamic,3");
    RUN3(schedule(dynamic, 7), "collapse(3) dynamic,7");
    RUN3(schedule(guided), "collapse(3) guided");
    RUN3(schedule(runtime), "collapse(3) runtime");
  }
  return failures != 0;
}
