// for_dynamic.c - worksharing loops through the dispatcher (__kmpc_dispatch_init/next
// _4/4u/8/8u, __kmpc_dispatch_deinit):
//  * schedule(dynamic), dynamic,c (c = 1, 3, 16), guided, guided,c, auto,
//    monotonic:dynamic, nonmonotonic:dynamic,c, monotonic:guided
//  * schedule(runtime) with the default run-sched-var (OMP_SCHEDULE unset)
//    and after omp_set_schedule to static, static,c, dynamic, dynamic,c,
//    guided, guided,c, auto and monotonic dynamic
//  * loop variables int, unsigned, long long, unsigned long long; increasing
//    and decreasing loops, step 1 and non-1, empty and one-iteration loops,
//    loops next to the type limits
//  * every iteration runs exactly once; lastprivate gets the sequential value
//    (not for nonmonotonic dynamic: libomp 19 loses it, see
//    for_dynamic_lastprivate.c)
//  * dynamic,c: each aligned block of c iterations runs on one thread;
//    monotonic: each thread sees its iterations in increasing order;
//    runtime static,c: iteration k on thread (k / c) % nthreads
//  * 10 nowait dispatch loops back to back in one region (more than libomp's
//    ring of 7 dispatch buffers), different bounds/types/schedules, one
//    thread held back so that threads are in different loops at once
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: gcc=skip: gcc 12 computes the trip count of a loop ending near INT_MAX or INT_MIN in the loop's own type, which overflows (libgomp fails alike)
#include <limits.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXIT 4096
static int hits[MAXIT];
static int owner[MAXIT];
static int bad_iv;    /* iterations whose variable value is not in the sequential set */
static int bad_order; /* monotonic: a thread went back to a lower iteration */

static void reset(void) {
  memset(hits, 0, sizeof hits);
  memset(owner, 0xff, sizeof owner);
  bad_iv = 0;
  bad_order = 0;
}

static void record(unsigned long long k, int divisible, long long tc) {
  if (!divisible || k >= (unsigned long long)tc || k >= MAXIT) {
    __atomic_fetch_add(&bad_iv, 1, __ATOMIC_RELAXED);
    return;
  }
  __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&owner[k], omp_get_thread_num(), __ATOMIC_RELAXED);
}

/* what the schedule lets us check about the iteration -> thread map */
enum { ANY = 0, BLOCKS = 1, ROUND_ROBIN = 2, CONTIGUOUS = 3 };

static void check_loop(const char *label, const int *h, const int *own, long long tc, int nth,
                       int rule, int chunk) {
  char buf[300];
  int nbad = 0;
  for (long long k = 0; k < tc && k < MAXIT; k++)
    if (h[k] != 1 && nbad++ < 3) {
      snprintf(buf, sizeof buf, "%s: hits of iteration %lld", label, k);
      CHECK_EQ(buf, h[k], 1);
    }
  if (nth < 1) {
    snprintf(buf, sizeof buf, "%s: team size", label);
    CHECK_EQ(buf, nth, 1);
    return;
  }
  for (long long k = 0; k < tc && k < MAXIT; k++) {
    if (own[k] < 0 || own[k] >= nth) {
      if (nbad++ < 3) {
        snprintf(buf, sizeof buf, "%s: thread of iteration %lld out of range", label, k);
        CHECK_EQ(buf, own[k], 0);
      }
      continue;
    }
    if (rule == BLOCKS && k % chunk != 0 && own[k] != own[k - 1] && nbad++ < 3) {
      snprintf(buf, sizeof buf, "%s: chunk of %d split at iteration %lld", label, chunk, k);
      CHECK_EQ(buf, own[k], own[k - 1]);
    }
    if (rule == ROUND_ROBIN && own[k] != (int)((k / chunk) % nth) && nbad++ < 3) {
      snprintf(buf, sizeof buf, "%s: thread of iteration %lld (static chunk %d, %d threads)", label,
               k, chunk, nth);
      CHECK_EQ(buf, own[k], (k / chunk) % nth);
    }
  }
  if (rule == CONTIGUOUS) {
    long long lo[1024], hi[1024], cnt[1024];
    for (int t = 0; t < nth && t < 1024; t++) lo[t] = -1, hi[t] = -1, cnt[t] = 0;
    for (long long k = 0; k < tc && k < MAXIT; k++) {
      int t = own[k];
      if (t < 0 || t >= nth || t >= 1024) continue;
      if (lo[t] < 0) lo[t] = k;
      hi[t] = k;
      cnt[t]++;
    }
    for (int t = 0; t < nth && t < 1024; t++)
      if (cnt[t] && hi[t] - lo[t] + 1 != cnt[t]) {
        snprintf(buf, sizeof buf, "%s: static: thread %d's iterations not contiguous", label, t);
        CHECK_EQ(buf, hi[t] - lo[t] + 1, cnt[t]);
      }
  }
}

static long long trip_count(__int128 s, __int128 e, __int128 st, int cmp) {
  switch (cmp) {
  case 0: return s < e ? (long long)((e - s - 1) / st + 1) : 0;
  case 1: return s <= e ? (long long)((e - s) / st + 1) : 0;
  case 2: return s > e ? (long long)((s - e - 1) / st + 1) : 0;
  default: return s >= e ? (long long)((s - e) / st + 1) : 0;
  }
}

/* schedule kinds (the clause on the loop) */
enum {
  K_DYN, K_DYN_C, K_GUIDED, K_GUIDED_C, K_RUNTIME, K_AUTO, K_MONO_DYN, K_NONMONO_DYN_C,
  K_MONO_GUIDED, K_NKINDS
};
static const char *kind_name[K_NKINDS] = {
    "dynamic", "dynamic,c", "guided", "guided,c", "runtime", "auto", "monotonic:dynamic",
    "nonmonotonic:dynamic,c", "monotonic:guided"};

/* libomp 19 runs nonmonotonic dynamic loops (plain `dynamic`, `dynamic,c`,
   `nonmonotonic:dynamic`) with work stealing: the thread that got the chunk
   flagged last may steal more chunks afterwards, whose next() call clears the
   flag, so clang's lastprivate copy-out is lost (most runs at 2-4 threads).
   Checked for those schedules on our runtime only, in for_dynamic_lastprivate.c. */
static int lastprivate_reliable(int kind) {
  return kind != K_DYN && kind != K_DYN_C && kind != K_NONMONO_DYN_C;
}

#define PRAGMA(x) _Pragma(#x)
#define THE_LOOP(SCHED, CMP, OP, UP, MONO)                                        \
  PRAGMA(omp for schedule(SCHED) lastprivate(iv, lastk))                          \
  for (iv = start; iv CMP end; iv OP step) {                                      \
    unsigned long long d = UP ? (unsigned long long)iv - (unsigned long long)start \
                              : (unsigned long long)start - (unsigned long long)iv; \
    long long k = (long long)(d / (unsigned long long)step);                      \
    record((unsigned long long)k, d % (unsigned long long)step == 0, tc);         \
    if (MONO && k <= prevk) __atomic_fetch_add(&bad_order, 1, __ATOMIC_RELAXED);  \
    prevk = k;                                                                    \
    lastk = k;                                                                    \
  }

/* rule/chunk: what to check about the thread map (runtime schedules pass the
   rule of the schedule set with omp_set_schedule) */
#define DEF_TEST(NAME, T, CMP, CMPK, OP, UP)                                      \
  static void NAME(const char *label, T start, T end, T step, int kind, int chunk, int rule) { \
    long long tc = trip_count(start, end, step, CMPK);                            \
    T iv = (T)77;                                                                 \
    long long lastk = -7;                                                         \
    int nth = 0;                                                                  \
    char buf[300];                                                                \
    reset();                                                                      \
    _Pragma("omp parallel shared(nth)")                                           \
    {                                                                             \
      long long prevk = -1;                                                       \
      (void)prevk;                                                                \
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();                 \
      switch (kind) {                                                             \
      case K_DYN: THE_LOOP(dynamic, CMP, OP, UP, 0) break;                        \
      case K_DYN_C: THE_LOOP(LIT_COMMA(dynamic, chunk), CMP, OP, UP, 0) break;    \
      case K_GUIDED: THE_LOOP(guided, CMP, OP, UP, 0) break;                      \
      case K_GUIDED_C: THE_LOOP(LIT_COMMA(guided, chunk), CMP, OP, UP, 0) break;  \
      case K_RUNTIME: THE_LOOP(runtime, CMP, OP, UP, 0) break;                    \
      case K_AUTO: THE_LOOP(auto, CMP, OP, UP, 0) break;                          \
      case K_MONO_DYN: THE_LOOP(monotonic: dynamic, CMP, OP, UP, 1) break;        \
      case K_NONMONO_DYN_C:                                                       \
        THE_LOOP(LIT_COMMA(nonmonotonic: dynamic, chunk), CMP, OP, UP, 0) break;  \
      case K_MONO_GUIDED: THE_LOOP(monotonic: guided, CMP, OP, UP, 1) break;      \
      }                                                                           \
    }                                                                             \
    char lab[240];                                                                \
    snprintf(lab, sizeof lab, "%s %s schedule(%s) chunk %d", #NAME, label,        \
             kind_name[kind], chunk);                                             \
    snprintf(buf, sizeof buf, "%s: iterations with a foreign loop value", lab);   \
    CHECK_EQ(buf, bad_iv, 0);                                                     \
    snprintf(buf, sizeof buf, "%s: monotonic order violated", lab);               \
    CHECK_EQ(buf, bad_order, 0);                                                  \
    check_loop(lab, hits, owner, tc, nth, rule, chunk);                           \
    if (tc > 0 && lastprivate_reliable(kind)) {                                   \
      snprintf(buf, sizeof buf, "%s: lastprivate body variable", lab);            \
      CHECK_EQ(buf, lastk, tc - 1);                                               \
      __int128 fin = UP ? (__int128)start + (__int128)tc * step                   \
                        : (__int128)start - (__int128)tc * step;                  \
      if (fin == (__int128)(T)fin) {                                              \
        snprintf(buf, sizeof buf, "%s: lastprivate loop variable", lab);          \
        CHECK_EQ(buf, iv, (T)fin);                                                \
      }                                                                           \
    }                                                                             \
  }
#define LIT_COMMA(a, b) a, b

typedef unsigned long long ull;
typedef long long ll;
DEF_TEST(int_lt, int, <, 0, +=, 1)
DEF_TEST(int_le, int, <=, 1, +=, 1)
DEF_TEST(int_gt, int, >, 2, -=, 0)
DEF_TEST(uns_lt, unsigned, <, 0, +=, 1)
DEF_TEST(uns_le, unsigned, <=, 1, +=, 1)
DEF_TEST(uns_gt, unsigned, >, 2, -=, 0)
DEF_TEST(uns_ge, unsigned, >=, 3, -=, 0)
DEF_TEST(ll_lt, ll, <, 0, +=, 1)
DEF_TEST(ll_le, ll, <=, 1, +=, 1)
DEF_TEST(ll_gt, ll, >, 2, -=, 0)
DEF_TEST(ull_lt, ull, <, 0, +=, 1)
DEF_TEST(ull_le, ull, <=, 1, +=, 1)
DEF_TEST(ull_gt, ull, >, 2, -=, 0)
DEF_TEST(ull_ge, ull, >=, 3, -=, 0)

/* all loop shapes with one schedule; rule/chunk describe the thread map */
static void all_shapes(int kind, int chunk, int rule) {
  int_lt("0..1000", 0, 1000, 1, kind, chunk, rule);
  int_lt("-50..250 step 7", -50, 250, 7, kind, chunk, rule);
  int_gt("100 down to -50 step 3", 100, -50, 3, kind, chunk, rule);
  int_le("-10..10 (<=)", -10, 10, 1, kind, chunk, rule);
  int_lt("empty 5..5", 5, 5, 1, kind, chunk, rule);
  int_gt("empty down 0..10", 0, 10, 2, kind, chunk, rule);
  int_lt("one iteration, step > range", 7, 100, 200, kind, chunk, rule);
  int_lt("INT_MAX-20 .. <INT_MAX step 3", INT_MAX - 20, INT_MAX, 3, kind, chunk, rule);
  int_gt("INT_MIN+20 down to >INT_MIN step 3", INT_MIN + 20, INT_MIN, 3, kind, chunk, rule);
  uns_lt("0..300", 0, 300, 1, kind, chunk, rule);
  uns_gt("100 down to >10 step 7", 100, 10, 7, kind, chunk, rule);
  uns_ge("10 down to >=1", 10, 1, 1, kind, chunk, rule);
  uns_lt("UINT_MAX-10 .. <UINT_MAX", UINT_MAX - 10, UINT_MAX, 1, kind, chunk, rule);
  uns_le("UINT_MAX-10 .. <=UINT_MAX-1", UINT_MAX - 10, UINT_MAX - 1, 1, kind, chunk, rule);
  uns_lt("2^31-40 .. 2^31+40 step 3", 0x80000000u - 40, 0x80000000u + 40, 3, kind, chunk, rule);
  uns_lt("empty", 9, 9, 1, kind, chunk, rule);
  ll_lt("-1000..1000 step 13", -1000, 1000, 13, kind, chunk, rule);
  ll_gt("100 down to -50 step 3", 100, -50, 3, kind, chunk, rule);
  ll_lt("LLONG_MAX-20 .. <LLONG_MAX step 3", LLONG_MAX - 20, LLONG_MAX, 3, kind, chunk, rule);
  ll_le("LLONG_MAX-20 .. <=LLONG_MAX-1", LLONG_MAX - 20, LLONG_MAX - 1, 1, kind, chunk, rule);
  ll_gt("LLONG_MIN+20 down to >LLONG_MIN", LLONG_MIN + 20, LLONG_MIN, 1, kind, chunk, rule);
  ll_lt("-2^61 .. 2^61 step 2^57", -(1LL << 61), 1LL << 61, 1LL << 57, kind, chunk, rule);
  ll_lt("one iteration", LLONG_MAX - 1, LLONG_MAX, 1, kind, chunk, rule);
  ull_lt("0..500", 0, 500, 1, kind, chunk, rule);
  ull_gt("ULLONG_MAX down to >ULLONG_MAX-100 step 9", ULLONG_MAX, ULLONG_MAX - 100, 9, kind,
         chunk, rule);
  ull_lt("ULLONG_MAX-10 .. <ULLONG_MAX", ULLONG_MAX - 10, ULLONG_MAX, 1, kind, chunk, rule);
  ull_le("ULLONG_MAX-10 .. <=ULLONG_MAX-1", ULLONG_MAX - 10, ULLONG_MAX - 1, 1, kind, chunk, rule);
  ull_lt("2^63-5 .. 2^63+5", (1ULL << 63) - 5, (1ULL << 63) + 5, 1, kind, chunk, rule);
  ull_ge("30 down to >=3 step 9", 30, 3, 9, kind, chunk, rule);
  ull_lt("empty", 0, 0, 1, kind, chunk, rule);
  ull_lt("one iteration", ULLONG_MAX - 1, ULLONG_MAX, 1, kind, chunk, rule);
}

/* ---- nowait dispatch loops back to back ---- */
#define NLOOPS 10
static int h2[NLOOPS][MAXIT];
static int o2[NLOOPS][MAXIT];
static void rec2(int l, long long k) {
  __atomic_fetch_add(&h2[l][k], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&o2[l][k], omp_get_thread_num(), __ATOMIC_RELAXED);
}

static void nowait_back_to_back(int reps) {
  memset(h2, 0, sizeof h2);
  static const long long tcs[NLOOPS] = {1000, 50, 17, 200, 129, 1, 0, 333, 63, 2000};
  int zero = 0;
#pragma omp parallel
  {
    int me = omp_get_thread_num();
    for (int r = 0; r < reps; r++) {
      /* hold one thread back so that the others run ahead into later loops */
      if (me == (r % omp_get_num_threads()))
        for (int y = 0; y < 3; y++) sched_yield();
#pragma omp for schedule(dynamic) nowait
      for (int i = 0; i < 1000; i++) rec2(0, i);
#pragma omp for schedule(dynamic, 1) nowait
      for (unsigned u = 100; u > 0; u -= 2) rec2(1, (100 - u) / 2);
#pragma omp for schedule(guided) nowait
      for (long long v = -8; v <= 8; v++) rec2(2, v + 8);
#pragma omp for schedule(dynamic, 16) nowait
      for (unsigned long long w = 1000; w < 1200; w++) rec2(3, (long long)(w - 1000));
#pragma omp for schedule(guided, 5) nowait
      for (int i = 258; i > 0; i -= 2) rec2(4, (258 - i) / 2);
#pragma omp for schedule(nonmonotonic: dynamic) nowait
      for (int i = 5; i < 6; i++) rec2(5, i - 5);
#pragma omp for schedule(dynamic) nowait
      for (int i = 0; i < zero; i++) rec2(6, i);
#pragma omp for schedule(runtime) nowait
      for (long long v = LLONG_MIN; v < LLONG_MIN + 333; v++) rec2(7, v - LLONG_MIN);
#pragma omp for schedule(monotonic: dynamic, 3) nowait
      for (unsigned u = UINT_MAX - 63; u < UINT_MAX; u++) rec2(8, u - (UINT_MAX - 63));
#pragma omp for schedule(auto) nowait
      for (int i = 0; i < 2000; i++) rec2(9, i);
    }
  }
  for (int l = 0; l < NLOOPS; l++) {
    char lab[100];
    snprintf(lab, sizeof lab, "nowait dispatch loop %d", l);
    long long tc = tcs[l];
    for (long long k = 0; k < tc; k++)
      if (h2[l][k] != reps) {
        char buf[200];
        snprintf(buf, sizeof buf, "%s: executions of iteration %lld over %d reps", lab, k, reps);
        CHECK_EQ(buf, h2[l][k], reps);
        break;
      }
    CHECK_EQ("iteration beyond the trip count ran", h2[l][tc], 0);
  }
}

/* same, one repetition at a time, so that the thread map can be checked */
static void nowait_single_rep(void) {
  int nth = 0;
  memset(h2, 0, sizeof h2);
  memset(o2, 0xff, sizeof o2);
#pragma omp parallel shared(nth)
  {
    if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
    if (omp_get_thread_num() == nth - 1)
      for (int y = 0; y < 3; y++) sched_yield();
#pragma omp for schedule(dynamic, 7) nowait
    for (int i = 0; i < 500; i++) rec2(0, i);
#pragma omp for schedule(dynamic, 16) nowait
    for (unsigned long long w = 0; w < 300; w++) rec2(1, (long long)w);
#pragma omp for schedule(dynamic, 1) nowait
    for (int i = 0; i < 77; i++) rec2(2, i);
#pragma omp for schedule(dynamic, 3) nowait
    for (long long v = 100; v > -100; v -= 2) rec2(3, (100 - v) / 2);
#pragma omp for schedule(dynamic, 5) nowait
    for (unsigned u = 0; u < 3; u++) rec2(4, u);
#pragma omp for schedule(guided, 4) nowait
    for (int i = 0; i < 1000; i++) rec2(5, i);
  }
  static const long long tcs[] = {500, 300, 77, 100, 3, 1000};
  static const int ch[] = {7, 16, 1, 3, 5, 1};
  static const int rule[] = {BLOCKS, BLOCKS, BLOCKS, BLOCKS, BLOCKS, ANY};
  for (int l = 0; l < 6; l++) {
    char lab[100];
    snprintf(lab, sizeof lab, "nowait single-rep loop %d", l);
    check_loop(lab, h2[l], o2[l], tcs[l], nth, rule[l], ch[l]);
  }
}

int main(void) {
  /* default run-sched-var (OMP_SCHEDULE is not set): any schedule, exactly once */
  all_shapes(K_RUNTIME, 1, ANY);

  all_shapes(K_DYN, 1, BLOCKS);
  static const int dyn_chunks[] = {1, 3, 16};
  for (int i = 0; i < 3; i++) all_shapes(K_DYN_C, dyn_chunks[i], BLOCKS);
  all_shapes(K_GUIDED, 1, ANY);
  all_shapes(K_GUIDED_C, 4, ANY);
  all_shapes(K_GUIDED_C, 64, ANY);
  all_shapes(K_AUTO, 1, ANY);
  all_shapes(K_MONO_DYN, 1, BLOCKS);
  all_shapes(K_NONMONO_DYN_C, 3, BLOCKS);
  all_shapes(K_MONO_GUIDED, 1, ANY);

  /* schedule(runtime) with each kind set through omp_set_schedule */
  struct {
    omp_sched_t kind;
    int chunk;
    int rule;
  } rs[] = {
      {omp_sched_static, 0, CONTIGUOUS},  {omp_sched_static, 1, ROUND_ROBIN},
      {omp_sched_static, 7, ROUND_ROBIN}, {omp_sched_dynamic, 0, ANY},
      {omp_sched_dynamic, 3, BLOCKS},     {omp_sched_guided, 0, ANY},
      {omp_sched_guided, 5, ANY},         {omp_sched_auto, 0, ANY},
      {(omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 2, BLOCKS},
  };
  for (unsigned i = 0; i < sizeof rs / sizeof rs[0]; i++) {
    omp_set_schedule(rs[i].kind, rs[i].chunk);
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    CHECK_EQ("omp_get_schedule kind after omp_set_schedule", k & ~omp_sched_monotonic,
             rs[i].kind & ~omp_sched_monotonic);
    all_shapes(K_RUNTIME, rs[i].chunk > 0 ? rs[i].chunk : 1, rs[i].rule);
  }

  for (int rep = 0; rep < 10; rep++) nowait_single_rep();
  omp_set_schedule(omp_sched_dynamic, 2);
  for (int i = 0; i < 5; i++) nowait_back_to_back(20);
  omp_set_schedule(omp_sched_guided, 1);
  nowait_back_to_back(20);

  if (failures) {
    fprintf(stderr, "for_dynamic: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok for_dynamic\n");
  return 0;
}
