// for_ordered.c - `ordered` worksharing loops (__kmpc_ordered /
// __kmpc_end_ordered, __kmpc_dispatch_fini_* per iteration, ord_* schedules):
//  * the ordered block appends the iteration number to a log; the log must
//    be exactly the sequential order, for no schedule clause, static,
//    static,c (1, 3), dynamic, dynamic,c (1, 4), guided, guided,c (3),
//    monotonic:dynamic, runtime (omp_set_schedule static,2 / dynamic,3 /
//    guided), auto
//  * each iteration runs exactly once; work outside the ordered block
//  * loop variables int, unsigned, long long, unsigned long long; negative
//    steps; empty and one-iteration loops
//  * the ordered region has a conditional body (only every third iteration
//    logs), ordered + nowait followed by another ordered loop, ordered +
//    lastprivate, parallel for ordered, collapse(2) ordered
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: gcc=skip: gcc 12 mis-lowers an unsigned ordered loop counting down to a bound (it crashes on libgomp alike)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXIT 2048
static long long logbuf[MAXIT]; /* written only inside ordered regions */
static int logpos;
static int hits[MAXIT];

static void reset(void) {
  memset(logbuf, 0xff, sizeof logbuf);
  memset(hits, 0, sizeof hits);
  logpos = 0;
}
static void append(long long k) {
  if (logpos < MAXIT) logbuf[logpos] = k;
  logpos++;
}
static void hit(long long k) {
  if (k >= 0 && k < MAXIT) __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELAXED);
}
/* some unordered work so that threads run ahead to their ordered blocks */
static volatile unsigned sink;
static void work(long long k) {
  unsigned x = (unsigned)k;
  for (int j = 0; j < (int)(k % 7) * 20; j++) x = x * 1103515245u + 12345u;
  sink = x;
}

/* log must be every `every`-th iteration of tc, in order; hits all 1 */
static void check_log(const char *label, long long tc, int every) {
  char buf[300];
  long long expected_len = (tc + every - 1) / every;
  snprintf(buf, sizeof buf, "%s: ordered log length", label);
  CHECK_EQ(buf, logpos, expected_len);
  for (long long p = 0; p < expected_len && p < MAXIT; p++)
    if (logbuf[p] != p * every) {
      snprintf(buf, sizeof buf, "%s: ordered log entry %lld", label, p);
      CHECK_EQ(buf, logbuf[p], p * every);
      break;
    }
  for (long long k = 0; k < tc && k < MAXIT; k++)
    if (hits[k] != 1) {
      snprintf(buf, sizeof buf, "%s: executions of iteration %lld", label, k);
      CHECK_EQ(buf, hits[k], 1);
      break;
    }
}

enum { S_NONE, S_STATIC, S_STATIC_C, S_DYN, S_DYN_C, S_GUIDED, S_GUIDED_C, S_MONO_DYN, S_RUNTIME,
       S_AUTO, S_N };
static const char *sname[S_N] = {"(none)", "static", "static,c", "dynamic", "dynamic,c",
                                 "guided", "guided,c", "monotonic:dynamic", "runtime", "auto"};

#define PRAGMA(x) _Pragma(#x)
#define LIT_COMMA(a, b) a, b
#define OLOOP(CLAUSES, INIT, COND, INCR, KEXPR, EVERY)                            \
  PRAGMA(omp for ordered CLAUSES)                                                 \
  for (INIT; COND; INCR) {                                                        \
    long long k = (KEXPR);                                                        \
    hit(k);                                                                       \
    work(k);                                                                      \
    _Pragma("omp ordered")                                                        \
    {                                                                             \
      if (k % (EVERY) == 0) append(k);                                            \
    }                                                                             \
    work(k + 1);                                                                  \
  }

#define ALL_SCHEDS(INIT, COND, INCR, KEXPR, EVERY)                                \
  switch (sched) {                                                                \
  case S_NONE: OLOOP(, INIT, COND, INCR, KEXPR, EVERY) break;                     \
  case S_STATIC: OLOOP(schedule(static), INIT, COND, INCR, KEXPR, EVERY) break;   \
  case S_STATIC_C:                                                                \
    OLOOP(schedule(LIT_COMMA(static, chunk)), INIT, COND, INCR, KEXPR, EVERY) break; \
  case S_DYN: OLOOP(schedule(dynamic), INIT, COND, INCR, KEXPR, EVERY) break;     \
  case S_DYN_C:                                                                   \
    OLOOP(schedule(LIT_COMMA(dynamic, chunk)), INIT, COND, INCR, KEXPR, EVERY) break; \
  case S_GUIDED: OLOOP(schedule(guided), INIT, COND, INCR, KEXPR, EVERY) break;   \
  case S_GUIDED_C:                                                                \
    OLOOP(schedule(LIT_COMMA(guided, chunk)), INIT, COND, INCR, KEXPR, EVERY) break; \
  case S_MONO_DYN:                                                                \
    OLOOP(schedule(monotonic: dynamic), INIT, COND, INCR, KEXPR, EVERY) break;    \
  case S_RUNTIME: OLOOP(schedule(runtime), INIT, COND, INCR, KEXPR, EVERY) break; \
  case S_AUTO: OLOOP(schedule(auto), INIT, COND, INCR, KEXPR, EVERY) break;       \
  }

static void run_shapes(int sched, int chunk) {
  char lab[200];
  int zero = 0, one = 1;
  /* int, increasing, 300 iterations */
  reset();
#pragma omp parallel
  { ALL_SCHEDS(int i = 0, i < 300, i++, i, 1) }
  snprintf(lab, sizeof lab, "int 0..300 schedule %s chunk %d", sname[sched], chunk);
  check_log(lab, 300, 1);

  /* int, negative step: for (i = 100; i > -50; i -= 3) -> 50 iterations */
  reset();
#pragma omp parallel
  { ALL_SCHEDS(int i = 100, i > -50, i -= 3, (100 - i) / 3, 1) }
  snprintf(lab, sizeof lab, "int 100 down to -50 step 3 schedule %s chunk %d", sname[sched], chunk);
  check_log(lab, 50, 1);

  /* unsigned, negative step, conditional ordered body (every third logs) */
  reset();
#pragma omp parallel
  { ALL_SCHEDS(unsigned u = 1000, u >= 10, u -= 5, (1000 - u) / 5, 3) }
  snprintf(lab, sizeof lab, "unsigned 1000 down to >=10 step 5, conditional body, schedule %s chunk %d",
           sname[sched], chunk);
  check_log(lab, 199, 3);

  /* long long near the top of the range */
  reset();
#pragma omp parallel
  { ALL_SCHEDS(long long v = 0x7fffffffffffff00LL, v < 0x7fffffffffffffffLL, v += 2,
               (v - 0x7fffffffffffff00LL) / 2, 1) }
  snprintf(lab, sizeof lab, "long long near LLONG_MAX step 2 schedule %s chunk %d", sname[sched], chunk);
  check_log(lab, 128, 1);

  /* unsigned long long, step 7, conditional body (every second) */
  reset();
#pragma omp parallel
  { ALL_SCHEDS(unsigned long long w = 5, w <= 5 + 7 * 140ULL, w += 7, (long long)((w - 5) / 7), 2) }
  snprintf(lab, sizeof lab, "unsigned long long step 7, conditional body, schedule %s chunk %d",
           sname[sched], chunk);
  check_log(lab, 141, 2);

  /* empty and one-iteration loops */
  reset();
#pragma omp parallel
  { ALL_SCHEDS(int i = 0, i < zero, i++, i, 1) }
  snprintf(lab, sizeof lab, "empty loop schedule %s chunk %d", sname[sched], chunk);
  check_log(lab, 0, 1);
  reset();
#pragma omp parallel
  { ALL_SCHEDS(int i = 0, i < one, i++, i, 1) }
  snprintf(lab, sizeof lab, "one-iteration loop schedule %s chunk %d", sname[sched], chunk);
  check_log(lab, 1, 1);
}

int main(void) {
  run_shapes(S_NONE, 0);
  run_shapes(S_STATIC, 0);
  run_shapes(S_STATIC_C, 1);
  run_shapes(S_STATIC_C, 3);
  run_shapes(S_DYN, 0);
  run_shapes(S_DYN_C, 1);
  run_shapes(S_DYN_C, 4);
  run_shapes(S_GUIDED, 0);
  run_shapes(S_GUIDED_C, 3);
  run_shapes(S_MONO_DYN, 0);
  run_shapes(S_AUTO, 0);
  omp_set_schedule(omp_sched_static, 2);
  run_shapes(S_RUNTIME, 0);
  omp_set_schedule(omp_sched_dynamic, 3);
  run_shapes(S_RUNTIME, 0);
  omp_set_schedule(omp_sched_guided, 0);
  run_shapes(S_RUNTIME, 0);

  /* ordered nowait, then another ordered loop in the same region; lastprivate */
  {
    static long long log2[MAXIT];
    int pos2 = 0, last = -1;
    reset();
#pragma omp parallel shared(pos2, last)
    {
#pragma omp for ordered schedule(dynamic, 2) nowait
      for (int i = 0; i < 200; i++) {
        hit(i);
#pragma omp ordered
        append(i);
      }
#pragma omp for ordered schedule(static, 3) lastprivate(last)
      for (int i = 0; i < 150; i++) {
        work(i);
#pragma omp ordered
        log2[pos2++] = i;
        last = i;
      }
    }
    check_log("ordered nowait loop", 200, 1);
    CHECK_EQ("second ordered loop log length", pos2, 150);
    for (int p = 0; p < 150; p++)
      if (log2[p] != p) {
        CHECK_EQ("second ordered loop log entry", log2[p], p);
        break;
      }
    CHECK_EQ("ordered lastprivate", last, 149);
  }

  /* parallel for ordered (combined), guided */
  reset();
#pragma omp parallel for ordered schedule(guided)
  for (int i = 0; i < 400; i++) {
    hit(i);
    work(i);
#pragma omp ordered
    append(i);
  }
  check_log("parallel for ordered guided", 400, 1);

  /* collapse(2) ordered: logical order is row-major */
  reset();
#pragma omp parallel
  {
#pragma omp for collapse(2) ordered schedule(dynamic, 5)
    for (int i = 0; i < 12; i++)
      for (int j = 20; j > 0; j -= 2) {
        long long k = i * 10 + (20 - j) / 2;
        hit(k);
        work(k);
#pragma omp ordered
        append(k);
      }
  }
  check_log("collapse(2) ordered dynamic,5", 120, 1);

  /* many small ordered loops in one region (dispatch buffer reuse) */
  {
    int bad = 0;
#pragma omp parallel shared(bad)
    {
      for (int r = 0; r < 50; r++) {
        static int expect; /* shared: only touched inside ordered */
#pragma omp single
        expect = 0;
#pragma omp for ordered schedule(dynamic)
        for (int i = 0; i < 20; i++) {
#pragma omp ordered
          {
            if (expect != i) bad++;
            expect = i + 1;
          }
        }
      }
    }
    CHECK_EQ("repeated small ordered loops: out-of-order entries", bad, 0);
  }

  if (failures) {
    fprintf(stderr, "for_ordered: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok for_ordered\n");
  return 0;
}
