// task_taskloop.c - the taskloop construct (__kmpc_taskloop with its task_dup,
// lb/ub/st/liter fields of the 80-byte taskloop task header, the taskgroup
// clang wraps around it, __kmpc_taskred_init for reduction):
//  * every iteration runs exactly once (per-iteration counters) for loops over
//    int, long long, unsigned and unsigned long long with positive and
//    negative steps, non-zero lower bounds, 0 and 1 iterations, values near
//    5e9 / UINT_MAX, under no clause, grainsize(g), num_tasks(n) and the
//    strict forms; the loop is complete when the construct ends
//  * chunks: each task records, in a firstprivate marker, the first logical
//    iteration it ran; per iteration the marker of the task that ran it is
//    stored, so the chunks can be rebuilt: each chunk is a contiguous range
//    of logical iterations;
//      grainsize(g): every chunk has between min(g, n) and 2g-1 iterations;
//      num_tasks(k): exactly min(k, n) chunks;
//      grainsize(strict: g): clang-19 drops the strict modifier (it calls
//        __kmpc_taskloop with sched 1, kmp-abi.md §6.6), so the runtime cannot
//        tell it from grainsize(g): when g divides n every chunk must have
//        exactly g iterations; otherwise either the strict shape (g, g, ...,
//        rest) or the grainsize(g) shape is accepted;
//      num_tasks(strict: k): exactly min(k, n) chunks
//  * lastprivate of a scalar (value of the last iteration) and of the loop
//    variable (value after the loop), with several chunkings
//  * firstprivate of an array: each task starts with the original values,
//    changes only its own copy, the original is unchanged
//  * collapse(2) (with a negative inner step): every (i, j) once, chunks
//    contiguous in the collapsed space, grainsize / num_tasks rules
//  * if(0) taskloop (undeferred tasks), also with nogroup: every iteration has
//    run when the construct ends
//  * nogroup followed by taskwait, nogroup followed by the single's barrier,
//    nogroup inside a taskgroup
//  * the taskloop's implicit taskgroup also waits for tasks created by the
//    loop body (descendants)
//  * reduction(+: ...) on taskloop (int, long long, double) and on taskloop
//    simd, with grainsize / num_tasks; every thread of the team running its
//    own taskloop reduction at the same time
//  * a taskloop inside an explicit task (done when the construct ends, inside
//    the task); every thread running its own taskloop concurrently
//  * master taskloop (not masked taskloop: clang-19 emits nothing for it) and
//    parallel master taskloop reduction
//  * chunks that run one after the other on one thread: each starts from the
//    pattern's firstprivate values, with the ICVs of the task that met the
//    construct (what a chunk sets with omp_set_num_threads / omp_set_dynamic
//    dies with it), also for an untied taskloop whose chunks reach a
//    taskyield (a task scheduling point in the middle of the chunk)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: gcc 12 loses an iteration of an unsigned taskloop counting down by a negative step (libgomp fails alike); tests/gomp/taskloop.c runs gcc's taskloops
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXN 4096
static int cnt[MAXN]; /* executions of logical iteration k */
static int own[MAXN]; /* marker (first logical iteration) of the task that ran k */

static void reset(void) {
  memset(cnt, 0, sizeof cnt);
  for (int k = 0; k < MAXN; k++) own[k] = -2;
}

static inline void hit(long k, long chunk) {
  if (k < 0 || k >= MAXN) {
    fail_int("logical iteration out of range", k, 0);
    return;
  }
  __atomic_fetch_add(&cnt[k], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&own[k], (int)chunk, __ATOMIC_RELAXED);
}

enum { K_NONE, K_GRAIN, K_NTASKS, K_GRAIN_STRICT, K_NTASKS_STRICT };

/* every one of the n logical iterations ran exactly once, nothing beyond */
static void check_once(const char *what, int n) {
  char buf[200];
  for (int k = 0; k < n + 8 && k < MAXN; k++) {
    int c = __atomic_load_n(&cnt[k], __ATOMIC_RELAXED);
    if (c != (k < n)) {
      snprintf(buf, sizeof buf, "%s: executions of logical iteration %d (n=%d)", what, k, n);
      CHECK_EQ(buf, c, k < n);
      return;
    }
  }
}

/* rebuild the chunks from own[] and check them against the clause */
static void check_chunks(const char *what, int n, int kind, long param) {
  char buf[240];
  int sizes[MAXN], nch = 0;
  for (int k = 0; k < n; k++) {
    if (own[k] == k) {
      sizes[nch++] = 1;
    } else if (k > 0 && own[k] == own[k - 1]) {
      sizes[nch - 1]++;
    } else {
      snprintf(buf, sizeof buf, "%s: chunk marker of logical iteration %d (not contiguous), n=%d", what, k, n);
      CHECK_EQ(buf, own[k], k > 0 ? own[k - 1] : 0);
      return;
    }
  }
  long g = param;
  switch (kind) {
  case K_GRAIN:
    for (int c = 0; c < nch; c++) {
      if (sizes[c] < (n < g ? n : g) || sizes[c] > 2 * g - 1) {
        snprintf(buf, sizeof buf, "%s: grainsize(%ld) chunk %d of %d has a bad size, n=%d", what, g, c, nch, n);
        CHECK_EQ(buf, sizes[c], g);
        return;
      }
    }
    break;
  case K_GRAIN_STRICT: {
    int strict_ok = 1, loose_ok = 1;
    for (int c = 0; c < nch; c++) {
      if (c < nch - 1 ? sizes[c] != g : (sizes[c] < 1 || sizes[c] > g)) strict_ok = 0;
      if (sizes[c] < (n < g ? n : g) || sizes[c] > 2 * g - 1) loose_ok = 0;
    }
    if (n % g == 0) loose_ok = 0; /* both shapes agree: exactly g each */
    if (!strict_ok && !loose_ok) {
      snprintf(buf, sizeof buf, "%s: grainsize(strict: %ld) chunk shape, n=%d, chunks", what, g, n);
      CHECK_EQ(buf, nch, (n + g - 1) / g);
      for (int c = 0; c < nch && c < 8; c++) fprintf(stderr, "  chunk %d: %d iterations\n", c, sizes[c]);
    }
    break;
  }
  case K_NTASKS:
  case K_NTASKS_STRICT:
    snprintf(buf, sizeof buf, "%s: num_tasks(%s%ld) number of chunks, n=%d", what,
             kind == K_NTASKS_STRICT ? "strict: " : "", g, n);
    CHECK_EQ(buf, nch, n < g ? n : g);
    break;
  default:
    break;
  }
}

/* one loop under the clause selected by kind; param is g or the task count */
#define TL_ALL(T, LB, CMP, UB, INCR, KEXPR)                                                   \
  do {                                                                                         \
    long chunk = -1;                                                                           \
    switch (kind) {                                                                            \
    case K_NONE:                                                                               \
      _Pragma("omp taskloop firstprivate(chunk)") for (T i = LB; i CMP UB; INCR) {             \
        long k_ = (KEXPR);                                                                     \
        if (chunk < 0) chunk = k_;                                                             \
        hit(k_, chunk);                                                                        \
      }                                                                                        \
      break;                                                                                   \
    case K_GRAIN:                                                                              \
      _Pragma("omp taskloop firstprivate(chunk) grainsize(param)") for (T i = LB; i CMP UB; INCR) { \
        long k_ = (KEXPR);                                                                     \
        if (chunk < 0) chunk = k_;                                                             \
        hit(k_, chunk);                                                                        \
      }                                                                                        \
      break;                                                                                   \
    case K_NTASKS:                                                                             \
      _Pragma("omp taskloop firstprivate(chunk) num_tasks(param)") for (T i = LB; i CMP UB; INCR) { \
        long k_ = (KEXPR);                                                                     \
        if (chunk < 0) chunk = k_;                                                             \
        hit(k_, chunk);                                                                        \
      }                                                                                        \
      break;                                                                                   \
    case K_GRAIN_STRICT:                                                                       \
      _Pragma("omp taskloop firstprivate(chunk) grainsize(strict: param)") for (T i = LB; i CMP UB; INCR) { \
        long k_ = (KEXPR);                                                                     \
        if (chunk < 0) chunk = k_;                                                             \
        hit(k_, chunk);                                                                        \
      }                                                                                        \
      break;                                                                                   \
    case K_NTASKS_STRICT:                                                                      \
      _Pragma("omp taskloop firstprivate(chunk) num_tasks(strict: param)") for (T i = LB; i CMP UB; INCR) { \
        long k_ = (KEXPR);                                                                     \
        if (chunk < 0) chunk = k_;                                                             \
        hit(k_, chunk);                                                                        \
      }                                                                                        \
      break;                                                                                   \
    }                                                                                          \
  } while (0)

/* the serial trip count of the same loop */
#define TRIPS(T, LB, CMP, UB, INCR, n)                                                         \
  do {                                                                                         \
    n = 0;                                                                                     \
    for (T i = LB; i CMP UB; INCR) n++;                                                        \
  } while (0)

#define NLOOPS 11
static const char *loop_names[NLOOPS] = {
    "int -17..<1000 step 3",   "int 100..>-37 step -3",      "int 5..<5 (empty)",
    "int 7..<8 (one)",         "long long 5e9.. step 7",     "long long 9e12..>-1e12 step -5e9",
    "unsigned 4e9..>3999990000 step -37", "unsigned UINT_MAX-2000..<UINT_MAX-10 step 9",
    "unsigned 3..<700 step 1", "unsigned long long 2^63-ish step 1000", "int 0..<64 step 1",
};

/* run loop `which` under clause (kind, param) and check it; the caller is
   inside a single */
static void run_loop(int which, int kind, long param) {
  int n = 0;
  reset();
  switch (which) {
  case 0:
    TL_ALL(int, -17, <, 1000, i += 3, (i + 17) / 3);
    TRIPS(int, -17, <, 1000, i += 3, n);
    break;
  case 1:
    TL_ALL(int, 100, >, -37, i -= 3, (100 - i) / 3);
    TRIPS(int, 100, >, -37, i -= 3, n);
    break;
  case 2:
    TL_ALL(int, 5, <, 5, i++, i - 5);
    TRIPS(int, 5, <, 5, i++, n);
    break;
  case 3:
    TL_ALL(int, 7, <, 8, i++, i - 7);
    TRIPS(int, 7, <, 8, i++, n);
    break;
  case 4:
    TL_ALL(long long, 5000000000LL, <, 5000000000LL + 7 * 777, i += 7, (i - 5000000000LL) / 7);
    TRIPS(long long, 5000000000LL, <, 5000000000LL + 7 * 777, i += 7, n);
    break;
  case 5:
    TL_ALL(long long, 9000000000000LL, >, -1000000000000LL, i -= 5000000000LL, (9000000000000LL - i) / 5000000000LL);
    TRIPS(long long, 9000000000000LL, >, -1000000000000LL, i -= 5000000000LL, n);
    break;
  case 6:
    TL_ALL(unsigned, 4000000000u, >, 3999990000u, i -= 37, (4000000000u - i) / 37);
    TRIPS(unsigned, 4000000000u, >, 3999990000u, i -= 37, n);
    break;
  case 7:
    TL_ALL(unsigned, UINT_MAX - 2000u, <, UINT_MAX - 10u, i += 9, (i - (UINT_MAX - 2000u)) / 9);
    TRIPS(unsigned, UINT_MAX - 2000u, <, UINT_MAX - 10u, i += 9, n);
    break;
  case 8:
    TL_ALL(unsigned, 3u, <, 700u, i++, i - 3u);
    TRIPS(unsigned, 3u, <, 700u, i++, n);
    break;
  case 9:
    TL_ALL(unsigned long long, 9223372036000000000ULL, <, 9223372036854775807ULL + 1000000ULL, i += 1000000ULL,
           (i - 9223372036000000000ULL) / 1000000ULL);
    TRIPS(unsigned long long, 9223372036000000000ULL, <, 9223372036854775807ULL + 1000000ULL, i += 1000000ULL, n);
    break;
  case 10:
    TL_ALL(int, 0, <, 64, i++, i);
    TRIPS(int, 0, <, 64, i++, n);
    break;
  }
  /* the construct (implicit taskgroup) has ended: the loop is complete */
  char what[160];
  static const char *kn[] = {"none", "grainsize", "num_tasks", "grainsize(strict)", "num_tasks(strict)"};
  snprintf(what, sizeof what, "%s [%s %ld]", loop_names[which], kn[kind], param);
  check_once(what, n);
  check_chunks(what, n, kind, param);
}

/* ---------- lastprivate ---------- */
static void test_lastprivate(long g) {
  int last = -1, i;
  long long lsum_last = 0;
#pragma omp taskloop lastprivate(last) grainsize(g)
  for (int j = 3; j < 503; j += 5) last = j * 2 + 1;
  CHECK_EQ("taskloop lastprivate(last)", last, 498 * 2 + 1);
#pragma omp taskloop lastprivate(i) num_tasks(g)
  for (i = 1000; i > 10; i -= 7) __atomic_fetch_add(&cnt[0], 1, __ATOMIC_RELAXED);
  /* 1000, 993, ..., 13 (142 iterations); after the loop i = 13 - 7 = 6 */
  CHECK_EQ("taskloop lastprivate(loop variable i)", i, 6);
#pragma omp taskloop lastprivate(lsum_last) grainsize(g)
  for (long long x = -5; x < 95; x++) lsum_last = x * 1000000000LL;
  CHECK_EQ("taskloop lastprivate(long long)", lsum_last, 94 * 1000000000LL);
  /* lastprivate with an iteration count of one */
  last = -1;
#pragma omp taskloop lastprivate(last)
  for (int j = 42; j < 43; j++) last = j;
  CHECK_EQ("taskloop lastprivate, one iteration", last, 42);
}

/* ---------- firstprivate array ---------- */
/* each task starts with the original values; iterations chunk..i-1 of the same
   task have each added 1 to its copy of arr[5]; the original never changes */
static void test_firstprivate_array(int kind, long param) {
  int arr[16];
  for (int j = 0; j < 16; j++) arr[j] = 100 + j * j;
  long chunk = -1;
  int bad = 0;
  reset();
  if (kind == K_GRAIN) {
#pragma omp taskloop firstprivate(arr, chunk) grainsize(param) shared(bad)
    for (int i = 0; i < 300; i++) {
      if (chunk < 0) {
        chunk = i;
        for (int j = 0; j < 16; j++)
          if (arr[j] != 100 + j * j) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      }
      if (arr[5] != 125 + (int)(i - chunk)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      arr[5]++;
      arr[i % 16] += 1000 * (i % 16 != 5);
      hit(i, chunk);
    }
  } else {
#pragma omp taskloop firstprivate(arr, chunk) num_tasks(param) shared(bad)
    for (int i = 0; i < 300; i++) {
      if (chunk < 0) {
        chunk = i;
        for (int j = 0; j < 16; j++)
          if (arr[j] != 100 + j * j) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      }
      if (arr[5] != 125 + (int)(i - chunk)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      arr[5]++;
      arr[i % 16] += 1000 * (i % 16 != 5);
      hit(i, chunk);
    }
  }
  CHECK_EQ("taskloop firstprivate(arr): a task saw values not its own", bad, 0);
  for (int j = 0; j < 16; j++) CHECK_EQ("taskloop firstprivate(arr): original changed", arr[j], 100 + j * j);
  check_once("taskloop firstprivate(arr)", 300);
  check_chunks("taskloop firstprivate(arr)", 300, kind, param);
}

/* ---------- collapse(2) ---------- */
#define CI 13 /* i = -3, -1, ..., 21 */
#define CJ 4  /* j = 10, 7, 4, 1 */
static void test_collapse(int kind, long param) {
  long chunk = -1;
  reset();
  if (kind == K_GRAIN) {
#pragma omp taskloop collapse(2) firstprivate(chunk) grainsize(param)
    for (int i = -3; i < 23; i += 2)
      for (int j = 10; j > 0; j -= 3) {
        long k = (long)((i + 3) / 2) * CJ + (10 - j) / 3;
        if (chunk < 0) chunk = k;
        hit(k, chunk);
      }
  } else if (kind == K_NTASKS) {
#pragma omp taskloop collapse(2) firstprivate(chunk) num_tasks(param)
    for (int i = -3; i < 23; i += 2)
      for (int j = 10; j > 0; j -= 3) {
        long k = (long)((i + 3) / 2) * CJ + (10 - j) / 3;
        if (chunk < 0) chunk = k;
        hit(k, chunk);
      }
  } else {
#pragma omp taskloop collapse(2) firstprivate(chunk)
    for (long long i = -3; i < 23; i += 2)
      for (unsigned j = 10; j > 0; j -= 3) {
        long k = (long)((i + 3) / 2) * CJ + (10 - j) / 3;
        if (chunk < 0) chunk = k;
        hit(k, chunk);
      }
  }
  char what[80];
  snprintf(what, sizeof what, "taskloop collapse(2) [kind %d, %ld]", kind, param);
  check_once(what, CI * CJ);
  check_chunks(what, CI * CJ, kind, param);
}

/* ---------- if(0) ---------- */
static void test_if0(void) {
  reset();
#pragma omp taskloop if (0) grainsize(4)
  for (int i = 0; i < 100; i++) hit(i, 0);
  check_once("taskloop if(0)", 100);
  /* undeferred tasks: complete before the construct returns, even with nogroup */
  reset();
  int zero = 0;
#pragma omp taskloop if (zero) nogroup num_tasks(7)
  for (int i = 0; i < 100; i++) hit(i, 0);
  check_once("taskloop if(0) nogroup, right after the construct", 100);
#pragma omp taskwait
}

/* ---------- nogroup ---------- */
static void test_nogroup(void) {
  reset();
#pragma omp taskloop nogroup grainsize(3)
  for (int i = 0; i < 200; i++) hit(i, 0);
#pragma omp taskwait
  check_once("taskloop nogroup + taskwait", 200);

  reset();
#pragma omp taskgroup
  {
#pragma omp taskloop nogroup num_tasks(9)
    for (int i = 0; i < 150; i++) hit(i, 0);
#pragma omp taskloop nogroup
    for (int i = 150; i < 300; i++) hit(i, 0);
  }
  check_once("taskloop nogroup inside taskgroup", 300);
}

/* nogroup taskloop created in a single nowait; the barrier completes it */
static void test_nogroup_barrier(void) {
  reset();
#pragma omp parallel
  {
#pragma omp single nowait
    {
#pragma omp taskloop nogroup grainsize(2)
      for (int i = 0; i < 300; i++) hit(i, 0);
    }
#pragma omp barrier
#pragma omp single
    check_once("taskloop nogroup + barrier", 300);
  }
  /* and the end of the region */
  reset();
#pragma omp parallel
  {
#pragma omp single nowait
    {
#pragma omp taskloop nogroup num_tasks(50)
      for (int i = 0; i < 300; i++) hit(i, 0);
    }
  }
  check_once("taskloop nogroup + region end", 300);
}

/* the taskloop's implicit taskgroup waits for tasks its body creates */
static void test_descendants(void) {
  reset();
#pragma omp taskloop grainsize(8)
  for (int i = 0; i < 200; i++) {
#pragma omp task firstprivate(i)
    {
#pragma omp task firstprivate(i)
      hit(i, 0);
    }
  }
  check_once("taskloop waits for descendant tasks", 200);
}

/* ---------- reductions ---------- */
static void test_reduction(long g) {
  int s = 10;
  long long ls = -5;
  double ds = 0.5;
#pragma omp taskloop reduction(+: s, ls, ds) grainsize(g)
  for (int i = 0; i < 1000; i++) {
    s += i;
    ls += (long long)i * 3000000000LL;
    ds += 0.25 * i;
  }
  CHECK_EQ("taskloop reduction(+: int)", s, 10 + 499500);
  CHECK_EQ("taskloop reduction(+: long long)", ls, -5 + 499500LL * 3000000000LL);
  CHECK("taskloop reduction(+: double)", ds == 0.5 + 0.25 * 499500);

  int m = 1;
  long long p = 1;
#pragma omp taskloop reduction(max: m) reduction(*: p) num_tasks(g)
  for (int i = 60; i > 0; i--) {
    if (i * 7 % 61 > m) m = i * 7 % 61;
    if (i % 20 == 0) p *= 3;
  }
  CHECK_EQ("taskloop reduction(max)", m, 60);
  CHECK_EQ("taskloop reduction(*)", p, 27);

  int ss = 0;
  double dd = 0;
#pragma omp taskloop simd reduction(+: ss, dd) grainsize(g)
  for (int i = 0; i < 777; i++) {
    ss += i;
    dd += i;
  }
  CHECK_EQ("taskloop simd reduction(+: int)", ss, 777 * 776 / 2);
  CHECK("taskloop simd reduction(+: double)", dd == 777.0 * 776 / 2);

  int s0 = 3;
#pragma omp taskloop reduction(+: s0)
  for (int i = 0; i < 0; i++) s0 += 100;
  CHECK_EQ("taskloop reduction, no iterations", s0, 3);
}

/* every thread of the team runs its own taskloop reduction concurrently */
static void test_reduction_all_threads(void) {
  int errs = 0;
#pragma omp parallel shared(errs)
  {
    int me = omp_get_thread_num();
    long long s = me;
#pragma omp taskloop reduction(+: s) grainsize(5)
    for (int i = 0; i < 300; i++) s += (long long)i * (me + 1);
    if (s != me + 44850LL * (me + 1)) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
    int t = 0;
#pragma omp taskloop simd reduction(+: t) num_tasks(4)
    for (int i = 0; i < 100; i++) t += me;
    if (t != 100 * me) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("per-thread taskloop reductions", errs, 0);
}

/* a taskloop inside an explicit task: complete when the construct ends */
static void test_in_task(void) {
  int bad = 0;
  reset();
#pragma omp task shared(bad)
  {
#pragma omp taskloop grainsize(6)
    for (int i = 0; i < 120; i++) hit(i, 0);
    for (int k = 0; k < 120; k++)
      if (__atomic_load_n(&cnt[k], __ATOMIC_RELAXED) != 1) bad++;
    int s = 0;
#pragma omp taskloop reduction(+: s) num_tasks(5)
    for (int i = 0; i < 50; i++) s += 2;
    if (s != 100) bad += 1000;
  }
#pragma omp task shared(bad)
  {
#pragma omp taskloop nogroup num_tasks(3)
    for (int i = 120; i < 240; i++) hit(i, 0);
#pragma omp taskwait
    for (int k = 120; k < 240; k++)
      if (__atomic_load_n(&cnt[k], __ATOMIC_RELAXED) != 1) bad++;
  }
#pragma omp taskwait
  CHECK_EQ("taskloop inside a task: incomplete after the construct", bad, 0);
  check_once("taskloops inside tasks", 240);
}

/* every thread runs its own taskloop on its own part of cnt */
static void test_all_threads(void) {
  int nth = 0;
  reset();
#pragma omp parallel shared(nth)
  {
    int me = omp_get_thread_num();
#pragma omp single
    nth = omp_get_num_threads();
    /* implied barrier of the single: nth is set */
#pragma omp taskloop grainsize(7)
    for (int i = me * 100; i < me * 100 + 100; i++) hit(i, 0);
    int mine = 0;
    for (int k = me * 100; k < me * 100 + 100; k++) mine += __atomic_load_n(&cnt[k], __ATOMIC_RELAXED);
    if (mine != 100) fail_int("own taskloop incomplete after the construct", mine, 100);
  }
  check_once("every thread runs a taskloop", nth * 100 < MAXN ? nth * 100 : MAXN);
}

static void test_master_taskloop(void) {
  reset();
#pragma omp parallel
  {
#pragma omp master taskloop grainsize(4)
    for (int i = -50; i < 250; i++) hit(i + 50, 0);
    /* master has no barrier; the master's implicit taskgroup ended before it
       reaches this barrier */
#pragma omp barrier
  }
  check_once("master taskloop", 300);

  long long s = 7;
#pragma omp parallel master taskloop reduction(+: s) num_tasks(16)
  for (long long i = 1; i <= 1000; i++) s += i;
  CHECK_EQ("parallel master taskloop reduction", s, 7 + 500500);

  reset();
#pragma omp parallel master taskloop simd
  for (int i = 0; i < 500; i++) cnt[i] += 1; /* distinct elements: no race */
  check_once("parallel master taskloop simd", 500);
}

/* every chunk starts afresh: firstprivate values, ICVs; untied chunks pass a
   taskyield in their middle and finish every iteration */
static void test_fresh_chunks(long g) {
  int fp = 7, bad = 0;
  int nthr = omp_get_max_threads(), dyn = omp_get_dynamic();
  reset();
#pragma omp taskloop grainsize(g) firstprivate(fp) shared(bad, nthr, dyn)
  for (int i = 0; i < 200; i++) {
    if (fp < 7 || fp > 7 + 2 * g) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    if (omp_get_max_threads() != nthr + fp - 7) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    if (omp_get_dynamic() != (fp == 7 ? dyn : !dyn)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    fp++;
    omp_set_num_threads(nthr + fp - 7);
    omp_set_dynamic(!dyn);
    hit(i, 0);
  }
  CHECK_EQ("taskloop: a chunk did not start from the pattern's firstprivate and ICVs", bad, 0);
  CHECK_EQ("taskloop: a chunk's omp_set_num_threads outlived the construct", omp_get_max_threads(), nthr);
  CHECK_EQ("taskloop: a chunk's omp_set_dynamic outlived the construct", omp_get_dynamic(), dyn);
  check_once("taskloop, fresh chunks", 200);

  static int half[MAXN];
  memset(half, 0, sizeof half);
  reset();
  fp = 3;
  bad = 0;
#pragma omp taskloop untied grainsize(g) firstprivate(fp) shared(bad)
  for (int i = 0; i < 200; i++) {
    if (fp < 3 || fp > 3 + 2 * g) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    fp++;
    hit(i, 0);
#pragma omp taskyield
    __atomic_fetch_add(&half[i], 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("untied taskloop: a chunk did not start from the pattern's firstprivate", bad, 0);
  check_once("untied taskloop with taskyield", 200);
  for (int k = 0; k < 200; k++)
    if (half[k] != 1) {
      CHECK_EQ("untied taskloop: second half of an iteration (after taskyield)", half[k], 1);
      break;
    }
}

int main(void) {
  static const long grains[] = {1, 4, 33, 5000};
  static const long ntasks[] = {1, 3, 16, 100000};
  for (int rep = 0; rep < 4; rep++) {
#pragma omp parallel
#pragma omp single
    {
      for (int w = 0; w < NLOOPS; w++) {
        run_loop(w, K_NONE, 0);
        for (int q = 0; q < 4; q++) {
          run_loop(w, K_GRAIN, grains[q]);
          run_loop(w, K_NTASKS, ntasks[q]);
          run_loop(w, K_GRAIN_STRICT, grains[q] == 1 ? 7 : grains[q]);
          run_loop(w, K_NTASKS_STRICT, ntasks[q]);
        }
      }
    }
  }
  for (int rep = 0; rep < 30; rep++) {
    long g = 1 + rep % 9;
#pragma omp parallel
#pragma omp single
    {
      test_lastprivate(g);
      test_firstprivate_array(K_GRAIN, g);
      test_firstprivate_array(K_NTASKS, g * 2);
      test_collapse(K_NONE, 0);
      test_collapse(K_GRAIN, g);
      test_collapse(K_GRAIN, 60);
      test_collapse(K_NTASKS, g * 3);
      test_if0();
      test_nogroup();
      test_descendants();
      test_reduction(g);
      test_in_task();
      test_fresh_chunks(g);
    }
    test_nogroup_barrier();
    test_reduction_all_threads();
    test_all_threads();
    test_master_taskloop();
  }
  return failures != 0;
}
