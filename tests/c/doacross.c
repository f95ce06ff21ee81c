// doacross.c - doacross loops: ordered(n) with depend(sink: ...) /
// depend(source) (__kmpc_doacross_init/wait/post/fini):
//  * 2-D wavefront a[i][j] = a[i-1][j] + a[i][j-1] + 1 with
//    depend(sink: i-1, j) depend(sink: i, j-1), equal to the sequential result,
//    with no schedule clause, schedule(static), static,1, static,3, dynamic,
//    dynamic,4, guided; also with the diagonal sink (i-1, j-1) added
//  * 1-D ordered(1) with sink: i-2 (two interleaved chains) and with
//    sink: i-1 + sink: i-2 (Fibonacci-like); sinks that fall before the first
//    iteration must be ignored
//  * decreasing loops (previous iteration is i+1 / i+3), non-unit steps,
//    unsigned and long long loop variables, non-zero lower bounds
//  * 3-D ordered(3) with one sink per axis
//  * three nowait doacross loops back to back in one region
//  * the work in each iteration is checked to run exactly once
// (sink: i-1, j+1 is in doacross_edge.c: it deadlocks libomp 19)
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: gcc=skip: gcc 12 computes a sink's iteration number 2^32 too high when the outer variable is unsigned (libgomp hangs on it)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NI 40
#define NJ 37
/* unsigned arithmetic: wraps, deterministic */
static unsigned a[NI][NJ], ref[NI][NJ];
static int hits[NI][NJ];

static void init_grid(unsigned (*g)[NJ]) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) g[i][j] = (i == 0 || j == 0) ? (unsigned)(i * 7 + j * 3 + 1) : 0u;
}

static void check_grid(const char *label) {
  char buf[200];
  for (int i = 1; i < NI; i++)
    for (int j = 1; j < NJ; j++) {
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
#define WAVEFRONT(CLAUSES)                                                        \
  PRAGMA(omp for ordered(2) CLAUSES)                                              \
  for (int i = 1; i < NI; i++)                                                    \
    for (int j = 1; j < NJ; j++) {                                                \
      _Pragma("omp ordered depend(sink: i - 1, j) depend(sink: i, j - 1)")        \
      hits[i][j]++;                                                               \
      a[i][j] = a[i - 1][j] + a[i][j - 1] + 1u;                                   \
      _Pragma("omp ordered depend(source)")                                       \
    }

static void wavefront(int sched, const char *label) {
  init_grid(a);
  memset(hits, 0, sizeof hits);
#pragma omp parallel
  {
    switch (sched) {
    case 0: WAVEFRONT() break;
    case 1: WAVEFRONT(schedule(static)) break;
    case 2: WAVEFRONT(schedule(LIT_COMMA(static, 1))) break;
    case 3: WAVEFRONT(schedule(LIT_COMMA(static, 3))) break;
    case 4: WAVEFRONT(schedule(dynamic)) break;
    case 5: WAVEFRONT(schedule(LIT_COMMA(dynamic, 4))) break;
    case 6: WAVEFRONT(schedule(guided)) break;
    }
  }
  check_grid(label);
}

int main(void) {
  char buf[200];
  /* sequential reference for the 2-D wavefront */
  init_grid(ref);
  for (int i = 1; i < NI; i++)
    for (int j = 1; j < NJ; j++) ref[i][j] = ref[i - 1][j] + ref[i][j - 1] + 1u;

  static const char *names[] = {"(none)", "static", "static,1", "static,3", "dynamic", "dynamic,4",
                                "guided"};
  for (int rep = 0; rep < 3; rep++)
    for (int s = 0; s < 7; s++) {
      snprintf(buf, sizeof buf, "2-D wavefront schedule %s", names[s]);
      wavefront(s, buf);
    }

  /* 2-D with three sinks incl. the diagonal, decreasing j, unsigned i */
  {
    static unsigned b[NI][NJ], bref[NI][NJ];
    for (int i = 0; i < NI; i++)
      for (int j = 0; j < NJ; j++) b[i][j] = bref[i][j] = (unsigned)(i + 2 * j);
    for (int i = 1; i < NI; i++)
      for (int j = NJ - 2; j >= 0; j--)
        bref[i][j] = bref[i - 1][j] * 3u + bref[i][j + 1] + bref[i - 1][j + 1] + (unsigned)i;
    memset(hits, 0, sizeof hits);
#pragma omp parallel
    {
#pragma omp for ordered(2) schedule(static, 1)
      for (unsigned i = 1; i < NI; i++)
        for (int j = NJ - 2; j >= 0; j--) {
#pragma omp ordered depend(sink: i - 1, j) depend(sink: i, j + 1) depend(sink: i - 1, j + 1)
          hits[i][j]++;
          b[i][j] = b[i - 1][j] * 3u + b[i][j + 1] + b[i - 1][j + 1] + i;
#pragma omp ordered depend(source)
        }
    }
    int done = 0;
    for (int i = 1; i < NI && !done; i++)
      for (int j = 0; j <= NJ - 2; j++) {
        if (hits[i][j] != 1) {
          CHECK_EQ("3-sink wavefront: executions", hits[i][j], 1);
          done = 1;
          break;
        }
        if (b[i][j] != bref[i][j]) {
          snprintf(buf, sizeof buf, "3-sink wavefront (unsigned i, decreasing j): b[%d][%d]", i, j);
          CHECK_EQ(buf, b[i][j], bref[i][j]);
          done = 1;
          break;
        }
      }
  }

  /* 1-D chains */
#define N1 3000
  {
    static unsigned long long x[N1], xref[N1];
    static int h1[N1];
    /* sink: i-2 only: two independent chains (even / odd) */
    for (int k = 0; k < N1; k++) xref[k] = (k >= 2 ? xref[k - 2] * 5ULL : 7ULL) + (unsigned long long)k;
    for (int s = 0; s < 2; s++) {
      memset(x, 0, sizeof x);
      memset(h1, 0, sizeof h1);
#pragma omp parallel
      {
        if (s == 0) {
#pragma omp for ordered(1) schedule(static, 1)
          for (int i = 0; i < N1; i++) {
#pragma omp ordered depend(sink: i - 2)
            h1[i]++;
            x[i] = (i >= 2 ? x[i - 2] * 5ULL : 7ULL) + (unsigned long long)i;
#pragma omp ordered depend(source)
          }
        } else {
#pragma omp for ordered(1) schedule(dynamic)
          for (int i = 0; i < N1; i++) {
#pragma omp ordered depend(sink: i - 2)
            h1[i]++;
            x[i] = (i >= 2 ? x[i - 2] * 5ULL : 7ULL) + (unsigned long long)i;
#pragma omp ordered depend(source)
          }
        }
      }
      for (int k = 0; k < N1; k++) {
        if (h1[k] != 1 || x[k] != xref[k]) {
          snprintf(buf, sizeof buf, "1-D sink i-2 (%s): element %d", s ? "dynamic" : "static,1", k);
          CHECK_EQ(buf, x[k], xref[k]);
          CHECK_EQ("1-D sink i-2: executions", h1[k], 1);
          break;
        }
      }
    }

    /* sink i-1 and i-2, long long variable, step 3, non-zero start */
    for (int k = 0; k < N1; k++)
      xref[k] = k >= 2 ? xref[k - 1] + xref[k - 2] * 3ULL : (unsigned long long)(k + 1);
    for (int s = 0; s < 3; s++) {
      memset(x, 0, sizeof x);
      memset(h1, 0, sizeof h1);
#pragma omp parallel
      {
        if (s == 0) {
#pragma omp for ordered(1) schedule(static, 1)
          for (long long v = 100; v < 100 + 3LL * N1; v += 3) {
            long long k = (v - 100) / 3;
#pragma omp ordered depend(sink: v - 3) depend(sink: v - 6)
            h1[k]++;
            x[k] = k >= 2 ? x[k - 1] + x[k - 2] * 3ULL : (unsigned long long)(k + 1);
#pragma omp ordered depend(source)
          }
        } else if (s == 1) {
#pragma omp for ordered(1) schedule(dynamic, 7)
          for (long long v = 100; v < 100 + 3LL * N1; v += 3) {
            long long k = (v - 100) / 3;
#pragma omp ordered depend(sink: v - 3) depend(sink: v - 6)
            h1[k]++;
            x[k] = k >= 2 ? x[k - 1] + x[k - 2] * 3ULL : (unsigned long long)(k + 1);
#pragma omp ordered depend(source)
          }
        } else {
          /* decreasing unsigned loop: the previous iterations are u+1 and u+2 */
#pragma omp for ordered(1) schedule(static, 2)
          for (unsigned u = N1 - 1 + 10; u >= 10; u--) {
            int k = (int)(N1 - 1 + 10 - u);
#pragma omp ordered depend(sink: u + 1) depend(sink: u + 2)
            h1[k]++;
            x[k] = k >= 2 ? x[k - 1] + x[k - 2] * 3ULL : (unsigned long long)(k + 1);
#pragma omp ordered depend(source)
          }
        }
      }
      for (int k = 0; k < N1; k++) {
        if (h1[k] != 1 || x[k] != xref[k]) {
          snprintf(buf, sizeof buf, "1-D sinks i-1,i-2 (variant %d): element %d", s, k);
          CHECK_EQ(buf, x[k], xref[k]);
          CHECK_EQ("1-D sinks i-1,i-2: executions", h1[k], 1);
          break;
        }
      }
    }
  }

  /* 3-D ordered(3), sinks along each axis, schedule(dynamic, 5) and static,2 */
  {
#define D3 12
    static unsigned c3[D3][D3][D3], r3[D3][D3][D3];
    static int h3[D3][D3][D3];
    for (int i = 0; i < D3; i++)
      for (int j = 0; j < D3; j++)
        for (int k = 0; k < D3; k++) r3[i][j][k] = (i && j && k) ? 0u : (unsigned)(i + j * 5 + k * 11);
    for (int i = 1; i < D3; i++)
      for (int j = 1; j < D3; j++)
        for (int k = 1; k < D3; k++)
          r3[i][j][k] = r3[i - 1][j][k] * 7u + r3[i][j - 1][k] * 3u + r3[i][j][k - 1] + 1u;
    for (int s = 0; s < 2; s++) {
      memset(h3, 0, sizeof h3);
      for (int i = 0; i < D3; i++)
        for (int j = 0; j < D3; j++)
          for (int k = 0; k < D3; k++) c3[i][j][k] = (i && j && k) ? 0u : (unsigned)(i + j * 5 + k * 11);
#pragma omp parallel
      {
        if (s == 0) {
#pragma omp for ordered(3) schedule(dynamic, 5)
          for (int i = 1; i < D3; i++)
            for (int j = 1; j < D3; j++)
              for (int k = 1; k < D3; k++) {
#pragma omp ordered depend(sink: i - 1, j, k) depend(sink: i, j - 1, k) depend(sink: i, j, k - 1)
                h3[i][j][k]++;
                c3[i][j][k] = c3[i - 1][j][k] * 7u + c3[i][j - 1][k] * 3u + c3[i][j][k - 1] + 1u;
#pragma omp ordered depend(source)
              }
        } else {
#pragma omp for ordered(3) schedule(static, 2)
          for (int i = 1; i < D3; i++)
            for (int j = 1; j < D3; j++)
              for (int k = 1; k < D3; k++) {
#pragma omp ordered depend(sink: i - 1, j, k) depend(sink: i, j - 1, k) depend(sink: i, j, k - 1)
                h3[i][j][k]++;
                c3[i][j][k] = c3[i - 1][j][k] * 7u + c3[i][j - 1][k] * 3u + c3[i][j][k - 1] + 1u;
#pragma omp ordered depend(source)
              }
        }
      }
      int bad_h = 0, bad_v = 0;
      for (int i = 1; i < D3; i++)
        for (int j = 1; j < D3; j++)
          for (int k = 1; k < D3; k++) {
            bad_h += h3[i][j][k] != 1;
            bad_v += c3[i][j][k] != r3[i][j][k];
          }
      snprintf(buf, sizeof buf, "3-D ordered(3) (%s): iterations not run exactly once", s ? "static,2" : "dynamic,5");
      CHECK_EQ(buf, bad_h, 0);
      snprintf(buf, sizeof buf, "3-D ordered(3) (%s): wrong elements", s ? "static,2" : "dynamic,5");
      CHECK_EQ(buf, bad_v, 0);
    }
  }

  /* several doacross loops in one region, nowait in between */
  {
    static unsigned long long y[3][500];
    memset(y, 0, sizeof y);
#pragma omp parallel
    {
      for (int l = 0; l < 3; l++) {
#pragma omp for ordered(1) schedule(dynamic, 3) nowait
        for (int i = 0; i < 500; i++) {
#pragma omp ordered depend(sink: i - 1)
          y[l][i] = (i ? y[l][i - 1] : (unsigned long long)l) * 31ULL + (unsigned long long)i;
#pragma omp ordered depend(source)
        }
      }
    }
    for (int l = 0; l < 3; l++) {
      unsigned long long r = 0;
      for (int i = 0; i < 500; i++) {
        r = (i ? r : (unsigned long long)l) * 31ULL + (unsigned long long)i;
        if (y[l][i] != r) {
          snprintf(buf, sizeof buf, "back-to-back nowait doacross loop %d element %d", l, i);
          CHECK_EQ(buf, y[l][i], r);
          break;
        }
      }
    }
  }

  if (failures) {
    fprintf(stderr, "doacross: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok doacross\n");
  return 0;
}
