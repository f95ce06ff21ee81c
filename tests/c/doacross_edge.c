// doacross_edge.c - doacross sinks past the upper end of an inner dimension:
//  * 2-D wavefront a[i][j] = a[i-1][j+1] + a[i][j-1] + 1 with
//    depend(sink: i-1, j+1) depend(sink: i, j-1): on the last j the sink
//    (i-1, j+1) lies outside the iteration space and must be ignored
//    (clang passes kmp_dim.up = trip count, i.e. an exclusive bound), with
//    schedule(static, 1), schedule(dynamic) and no schedule clause
//  * a sink two past the end (i-1, j+2) together with (i, j-1); a decreasing
//    inner loop (where i-1, j-1 is the one past the end), and a step-3 loop
//  * results equal the sequential ones; each iteration runs exactly once
// libomp 19 treats `up` as inclusive and waits forever for the
// never-executed iteration (i-1, last j + 1): reference=skip.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* iterations i in [1, NI), j in [1, NJ]; columns 0 and NJ+1, NJ+2 and row 0
   are boundary values that the loops read but never write */
#define NI 30
#define NJ 25
static unsigned a[NI][NJ + 3], ref[NI][NJ + 3];
static int hits[NI][NJ + 3];

static void init(unsigned (*g)[NJ + 3]) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ + 3; j++)
      g[i][j] = (i == 0 || j == 0 || j > NJ) ? (unsigned)(i * 13 + j * 5 + 2) : 0u;
}

static void check(const char *label, int jlo, int jhi) {
  char buf[200];
  for (int i = 1; i < NI; i++)
    for (int j = jlo; j <= jhi; j++) {
      if (hits[i][j] != 1) {
        snprintf(buf, sizeof buf, "%s: executions of (%d,%d)", label, i, j);
        CHECK_EQ(buf, hits[i][j], 1);
        return;
      }
      if (a[i][j] != ref[i][j]) {
        snprintf(buf, sizeof buf, "%s: a[%d][%d]", label, i, j);
        CHECK_EQ(buf, a[i][j], ref[i][j]);
        return;
      }
    }
}

#define PRAGMA(x) _Pragma(#x)
#define LIT_COMMA(a, b) a, b
#define EDGE_LOOP(CLAUSES)                                                        \
  PRAGMA(omp for ordered(2) CLAUSES)                                              \
  for (int i = 1; i < NI; i++)                                                    \
    for (int j = 1; j <= NJ; j++) {                                               \
      _Pragma("omp ordered depend(sink: i - 1, j + 1) depend(sink: i, j - 1)")    \
      hits[i][j]++;                                                               \
      a[i][j] = a[i - 1][j + 1] + a[i][j - 1] * 3u + 1u;                          \
      _Pragma("omp ordered depend(source)")                                       \
    }

int main(void) {
  char buf[200];

  /* sink (i-1, j+1) */
  init(ref);
  for (int i = 1; i < NI; i++)
    for (int j = 1; j <= NJ; j++) ref[i][j] = ref[i - 1][j + 1] + ref[i][j - 1] * 3u + 1u;
  static const char *names[] = {"static,1", "dynamic", "(none)"};
  for (int rep = 0; rep < 3; rep++)
    for (int s = 0; s < 3; s++) {
      init(a);
      memset(hits, 0, sizeof hits);
#pragma omp parallel
      {
        if (s == 0) {
          EDGE_LOOP(schedule(LIT_COMMA(static, 1)))
        } else if (s == 1) {
          EDGE_LOOP(schedule(dynamic))
        } else {
          EDGE_LOOP()
        }
      }
      snprintf(buf, sizeof buf, "sink (i-1, j+1) schedule %s", names[s]);
      check(buf, 1, NJ);
    }

  /* sink (i-1, j+2): the last two j have it outside the space */
  init(ref);
  for (int i = 1; i < NI; i++)
    for (int j = 1; j <= NJ; j++) ref[i][j] = ref[i - 1][j + 2] * 5u + ref[i][j - 1] + (unsigned)j;
  init(a);
  memset(hits, 0, sizeof hits);
#pragma omp parallel
  {
#pragma omp for ordered(2) schedule(static, 1)
    for (int i = 1; i < NI; i++)
      for (int j = 1; j <= NJ; j++) {
#pragma omp ordered depend(sink: i - 1, j + 2) depend(sink: i, j - 1)
        hits[i][j]++;
        a[i][j] = a[i - 1][j + 2] * 5u + a[i][j - 1] + (unsigned)j;
#pragma omp ordered depend(source)
      }
  }
  check("sink (i-1, j+2)", 1, NJ);

  /* decreasing inner loop j = NJ..1: the previous j is j+1, and (i-1, j-1)
     is one past the end of the inner dimension when j == 1 */
  init(ref);
  for (int i = 1; i < NI; i++)
    for (int j = NJ; j >= 1; j--) ref[i][j] = ref[i - 1][j - 1] + ref[i][j + 1] * 7u + 3u;
  init(a);
  memset(hits, 0, sizeof hits);
#pragma omp parallel
  {
#pragma omp for ordered(2) schedule(dynamic, 2)
    for (int i = 1; i < NI; i++)
      for (int j = NJ; j >= 1; j--) {
#pragma omp ordered depend(sink: i - 1, j - 1) depend(sink: i, j + 1)
        hits[i][j]++;
        a[i][j] = a[i - 1][j - 1] + a[i][j + 1] * 7u + 3u;
#pragma omp ordered depend(source)
      }
  }
  check("decreasing j, sink (i-1, j-1)", 1, NJ);

  /* inner step 3 (j = 1, 4, ..., 25): sink (i-1, j+3) */
  init(ref);
  for (int i = 1; i < NI; i++)
    for (int j = 1; j <= NJ; j += 3) ref[i][j] = ref[i - 1][j + 3] + (j >= 4 ? ref[i][j - 3] : 1u) * 9u;
  init(a);
  memset(hits, 0, sizeof hits);
#pragma omp parallel
  {
#pragma omp for ordered(2) schedule(static, 1)
    for (int i = 1; i < NI; i++)
      for (int j = 1; j <= NJ; j += 3) {
#pragma omp ordered depend(sink: i - 1, j + 3) depend(sink: i, j - 3)
        hits[i][j]++;
        a[i][j] = a[i - 1][j + 3] + (j >= 4 ? a[i][j - 3] : 1u) * 9u;
#pragma omp ordered depend(source)
      }
  }
  {
    int bad = 0;
    for (int i = 1; i < NI; i++)
      for (int j = 1; j <= NJ; j += 3) bad += hits[i][j] != 1 || a[i][j] != ref[i][j];
    CHECK_EQ("inner step 3, sink (i-1, j+3): wrong or repeated elements", bad, 0);
  }

  if (failures) {
    fprintf(stderr, "doacross_edge: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok doacross_edge\n");
  return 0;
}
