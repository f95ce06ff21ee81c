// for_static.c - worksharing loops with schedule(static) and schedule(static, c)
// (__kmpc_for_static_init_4/4u/8/8u + __kmpc_for_static_fini):
//  * loop variables int, unsigned, long long, unsigned long long; increasing
//    and decreasing loops (<, <=, >, >=), step 1 and non-1, empty loops,
//    one-iteration loops, loops next to the type limits
//  * every iteration runs exactly once (per-iteration atomic hit counters)
//  * static with chunk c (1, 2, 3, 7, 64, literal and run-time values):
//    iteration k goes to thread (k / c) % nthreads (round-robin chunks in
//    thread order, as the spec mandates)
//  * static without chunk: each thread gets at most one contiguous block of
//    at most ceil(tc / nthreads) iterations, and two loops with the same trip
//    count get the same assignment (nowait producer / consumer loops may rely
//    on it, also across loop variable types)
//  * lastprivate of the loop variable and of a body variable: sequential value
//  * several nowait static loops back to back in one region
//  * collapse(2) over rectangular nests (mixed types, negative inner step)
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: gcc=skip: gcc 12 computes the trip count of a loop ending near INT_MAX or INT_MIN in the loop's own type, which overflows (libgomp fails alike)
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXIT 4096
static int hits[MAXIT];
static int owner[MAXIT];
static int bad_iv; /* iterations whose variable value is not in the sequential set */

static void reset(void) {
  memset(hits, 0, sizeof hits);
  memset(owner, 0xff, sizeof owner);
  bad_iv = 0;
}

/* iteration k of a loop with tc iterations ran on the calling thread */
static void record(unsigned long long k, int divisible, long long tc) {
  if (!divisible || k >= (unsigned long long)tc || k >= MAXIT) {
    __atomic_fetch_add(&bad_iv, 1, __ATOMIC_RELAXED);
    return;
  }
  __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&owner[k], omp_get_thread_num(), __ATOMIC_RELAXED);
}

/* checks hits[]/owner[] of a loop with tc iterations, chunk 0 = unchunked */
static void check_loop(const char *label, const int *h, const int *own, long long tc, int nth,
                       int chunk) {
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
  if (chunk > 0) {
    for (long long k = 0; k < tc && k < MAXIT; k++)
      if (own[k] != (int)((k / chunk) % nth) && nbad++ < 3) {
        snprintf(buf, sizeof buf, "%s: thread of iteration %lld (chunk %d, %d threads)", label, k,
                 chunk, nth);
        CHECK_EQ(buf, own[k], (k / chunk) % nth);
      }
  } else {
    /* one contiguous block per thread, no bigger than ceil(tc/nth) */
    long long lo[1024], hi[1024], cnt[1024];
    for (int t = 0; t < nth && t < 1024; t++) lo[t] = -1, hi[t] = -1, cnt[t] = 0;
    for (long long k = 0; k < tc && k < MAXIT; k++) {
      int t = own[k];
      if (t < 0 || t >= nth || t >= 1024) continue;
      if (lo[t] < 0) lo[t] = k;
      hi[t] = k;
      cnt[t]++;
    }
    long long maxblk = (tc + nth - 1) / nth;
    for (int t = 0; t < nth && t < 1024; t++) {
      if (cnt[t] == 0) continue;
      snprintf(buf, sizeof buf, "%s: thread %d's iterations are not one contiguous block", label, t);
      CHECK_EQ(buf, hi[t] - lo[t] + 1, cnt[t]);
      if (cnt[t] > maxblk) {
        snprintf(buf, sizeof buf, "%s: thread %d's block is bigger than ceil(tc/nth)", label, t);
        CHECK_EQ(buf, cnt[t], maxblk);
      }
    }
  }
}

/* trip count of for (v = s; v CMP e; v +/-= st), cmp: 0 <, 1 <=, 2 >, 3 >= */
static long long trip_count(__int128 s, __int128 e, __int128 st, int cmp) {
  switch (cmp) {
  case 0: return s < e ? (long long)((e - s - 1) / st + 1) : 0;
  case 1: return s <= e ? (long long)((e - s) / st + 1) : 0;
  case 2: return s > e ? (long long)((s - e - 1) / st + 1) : 0;
  default: return s >= e ? (long long)((s - e) / st + 1) : 0;
  }
}

/* One parallel region running `for (iv = start; iv CMP end; iv OP step)` with
   schedule(static) (chunk == 0) or schedule(static, chunk); lastprivate of the
   loop variable and of the logical iteration number. */
#define DEF_TEST(NAME, T, CMP, CMPK, OP, UP)                                      \
  static void NAME(const char *label, T start, T end, T step, int chunk) {        \
    long long tc = trip_count(start, end, step, CMPK);                            \
    T iv = (T)77;                                                                 \
    long long lastk = -7;                                                         \
    int nth = 0;                                                                  \
    char buf[300];                                                                \
    reset();                                                                      \
    _Pragma("omp parallel shared(nth)")                                           \
    {                                                                             \
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();                 \
      if (chunk > 0) {                                                            \
        _Pragma("omp for schedule(static, chunk) lastprivate(iv, lastk)")         \
        for (iv = start; iv CMP end; iv OP step) {                                \
          unsigned long long d = UP ? (unsigned long long)iv - (unsigned long long)start \
                                    : (unsigned long long)start - (unsigned long long)iv; \
          record(d / (unsigned long long)step, d % (unsigned long long)step == 0, tc); \
          lastk = (long long)(d / (unsigned long long)step);                      \
        }                                                                         \
      } else {                                                                    \
        _Pragma("omp for schedule(static) lastprivate(iv, lastk)")                \
        for (iv = start; iv CMP end; iv OP step) {                                \
          unsigned long long d = UP ? (unsigned long long)iv - (unsigned long long)start \
                                    : (unsigned long long)start - (unsigned long long)iv; \
          record(d / (unsigned long long)step, d % (unsigned long long)step == 0, tc); \
          lastk = (long long)(d / (unsigned long long)step);                      \
        }                                                                         \
      }                                                                           \
    }                                                                             \
    char lab[200];                                                                \
    snprintf(lab, sizeof lab, "%s %s chunk %d", #NAME, label, chunk);             \
    snprintf(buf, sizeof buf, "%s: iterations with a foreign loop value", lab);   \
    CHECK_EQ(buf, bad_iv, 0);                                                     \
    check_loop(lab, hits, owner, tc, nth, chunk);                                 \
    if (tc > 0) {                                                                 \
      snprintf(buf, sizeof buf, "%s: lastprivate body variable", lab);            \
      CHECK_EQ(buf, lastk, tc - 1);                                               \
      __int128 fin = UP ? (__int128)start + (__int128)tc * step                   \
                        : (__int128)start - (__int128)tc * step;                  \
      if (fin == (__int128)(T)fin) { /* representable: no overflow */             \
        snprintf(buf, sizeof buf, "%s: lastprivate loop variable", lab);          \
        CHECK_EQ(buf, iv, (T)fin);                                                \
      }                                                                           \
    }                                                                             \
  }

typedef unsigned long long ull;
typedef long long ll;
DEF_TEST(int_lt, int, <, 0, +=, 1)
DEF_TEST(int_le, int, <=, 1, +=, 1)
DEF_TEST(int_gt, int, >, 2, -=, 0)
DEF_TEST(int_ge, int, >=, 3, -=, 0)
DEF_TEST(uns_lt, unsigned, <, 0, +=, 1)
DEF_TEST(uns_le, unsigned, <=, 1, +=, 1)
DEF_TEST(uns_gt, unsigned, >, 2, -=, 0)
DEF_TEST(uns_ge, unsigned, >=, 3, -=, 0)
DEF_TEST(ll_lt, ll, <, 0, +=, 1)
DEF_TEST(ll_le, ll, <=, 1, +=, 1)
DEF_TEST(ll_gt, ll, >, 2, -=, 0)
DEF_TEST(ll_ge, ll, >=, 3, -=, 0)
DEF_TEST(ull_lt, ull, <, 0, +=, 1)
DEF_TEST(ull_le, ull, <=, 1, +=, 1)
DEF_TEST(ull_gt, ull, >, 2, -=, 0)
DEF_TEST(ull_ge, ull, >=, 3, -=, 0)

static void all_shapes(int c) {
  /* int */
  int_lt("0..100", 0, 100, 1, c);
  int_lt("0..1000", 0, 1000, 1, c);
  int_lt("-50..250 step 7", -50, 250, 7, c);
  int_gt("100 down to -50 step 3", 100, -50, 3, c);
  int_ge("100 down to -50 step 3 (>=)", 100, -50, 3, c);
  int_le("-10..10 (<=) step 1", -10, 10, 1, c);
  int_lt("empty 5..5", 5, 5, 1, c);
  int_lt("empty 10..0", 10, 0, 3, c);
  int_gt("empty down 0..10", 0, 10, 2, c);
  int_lt("one iteration 7..8", 7, 8, 1, c);
  int_lt("one iteration, step > range", 7, 100, 200, c);
  int_ge("one iteration down (>=)", 3, 3, 5, c);
  int_lt("INT_MAX-20 .. <INT_MAX step 3", INT_MAX - 20, INT_MAX, 3, c);
  int_le("INT_MAX-20 .. <=INT_MAX-1", INT_MAX - 20, INT_MAX - 1, 1, c);
  int_gt("INT_MIN+20 down to >INT_MIN step 3", INT_MIN + 20, INT_MIN, 3, c);
  int_lt("INT_MIN .. INT_MIN+1", INT_MIN, INT_MIN + 1, 1, c);
  /* unsigned */
  uns_lt("0..100", 0, 100, 1, c);
  uns_gt("100 down to >10 step 7", 100, 10, 7, c);
  uns_gt("20 down to >0 step 3", 20, 0, 3, c);
  uns_ge("10 down to >=1", 10, 1, 1, c);
  uns_lt("UINT_MAX-10 .. <UINT_MAX", UINT_MAX - 10, UINT_MAX, 1, c);
  uns_le("UINT_MAX-10 .. <=UINT_MAX-1", UINT_MAX - 10, UINT_MAX - 1, 1, c);
  uns_lt("UINT_MAX-30 .. <UINT_MAX step 4", UINT_MAX - 30, UINT_MAX, 4, c);
  uns_ge("UINT_MAX down to >= UINT_MAX-500 step 9", UINT_MAX, UINT_MAX - 500, 9, c);
  uns_lt("empty 5..5", 5, 5, 1, c);
  uns_lt("one iteration UINT_MAX-1", UINT_MAX - 1, UINT_MAX, 1, c);
  /* long long */
  ll_lt("-1000..1000 step 13", -1000, 1000, 13, c);
  ll_gt("100 down to -50 step 3", 100, -50, 3, c);
  ll_lt("LLONG_MAX-20 .. <LLONG_MAX step 3", LLONG_MAX - 20, LLONG_MAX, 3, c);
  ll_le("LLONG_MAX-20 .. <=LLONG_MAX-1", LLONG_MAX - 20, LLONG_MAX - 1, 1, c);
  ll_gt("LLONG_MIN+20 down to >LLONG_MIN step 3", LLONG_MIN + 20, LLONG_MIN, 3, c);
  ll_lt("-2^61 .. 2^61 step 2^57", -(1LL << 61), 1LL << 61, 1LL << 57, c);
  ll_lt("2^40 .. 2^40+300", 1LL << 40, (1LL << 40) + 300, 1, c);
  ll_ge("empty down", -5, 5, 1, c);
  ll_lt("one iteration", LLONG_MAX - 1, LLONG_MAX, 1, c);
  /* unsigned long long */
  ull_lt("0..100", 0, 100, 1, c);
  ull_gt("ULLONG_MAX down to >ULLONG_MAX-100 step 9", ULLONG_MAX, ULLONG_MAX - 100, 9, c);
  ull_lt("ULLONG_MAX-10 .. <ULLONG_MAX", ULLONG_MAX - 10, ULLONG_MAX, 1, c);
  ull_le("ULLONG_MAX-10 .. <=ULLONG_MAX-1", ULLONG_MAX - 10, ULLONG_MAX - 1, 1, c);
  ull_lt("2^63-5 .. 2^63+5 step 1", (1ULL << 63) - 5, (1ULL << 63) + 5, 1, c);
  ull_lt("0 .. <2^63 step 2^59", 0, 1ULL << 63, 1ULL << 59, c);
  ull_ge("30 down to >=3 step 9", 30, 3, 9, c);
  ull_lt("empty", 0, 0, 1, c);
  ull_lt("one iteration", ULLONG_MAX - 1, ULLONG_MAX, 1, c);
}

/* ---- literal chunks, nowait loops back to back ---- */
#define NLOOPS 6
static int h2[NLOOPS][MAXIT];
static int o2[NLOOPS][MAXIT];
static void rec2(int l, long long k) {
  __atomic_fetch_add(&h2[l][k], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&o2[l][k], omp_get_thread_num(), __ATOMIC_RELAXED);
}

static void nowait_back_to_back(int rep) {
  int nth = 0;
  memset(h2, 0, sizeof h2);
  memset(o2, 0xff, sizeof o2);
  /* trip counts: 1000, 50, 17, 200, 129, 1 */
#pragma omp parallel shared(nth)
  {
    if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
#pragma omp for schedule(static) nowait
    for (int i = 0; i < 1000; i++) rec2(0, i);
#pragma omp for schedule(static, 1) nowait
    for (unsigned u = 100; u > 0; u -= 2) rec2(1, (100 - u) / 2);
#pragma omp for schedule(static, 2) nowait
    for (long long v = -8; v <= 8; v++) rec2(2, v + 8);
#pragma omp for schedule(static, 3) nowait
    for (unsigned long long w = 1000; w < 1200; w++) rec2(3, (long long)(w - 1000));
#pragma omp for schedule(static, 7) nowait
    for (int i = 0; i < 129; i++) rec2(4, i);
#pragma omp for schedule(static, 64) nowait
    for (int i = 5; i < 6; i++) rec2(5, i - 5);
  }
  static const long long tcs[NLOOPS] = {1000, 50, 17, 200, 129, 1};
  static const int chunks[NLOOPS] = {0, 1, 2, 3, 7, 64};
  for (int l = 0; l < NLOOPS; l++) {
    char lab[100];
    snprintf(lab, sizeof lab, "nowait loop %d (rep %d)", l, rep);
    check_loop(lab, h2[l], o2[l], tcs[l], nth, chunks[l]);
  }
}

/* ---- same schedule, same trip count => same assignment (nowait producer/consumer) ---- */
static int data[MAXIT];
static void same_assignment(int chunk) {
  int wrong_thread = 0, wrong_data = 0;
  const int n = 777;
  memset(data, 0, sizeof data);
  memset(owner, 0xff, sizeof owner);
#pragma omp parallel shared(wrong_thread, wrong_data)
  {
    if (chunk > 0) {
#pragma omp for schedule(static, chunk) nowait
      for (int i = 0; i < n; i++) {
        data[i] = 3 * i + 1;
        owner[i] = omp_get_thread_num();
      }
      /* no barrier: the same thread gets the same iterations (other type, other bounds) */
#pragma omp for schedule(static, chunk)
      for (unsigned long long w = 5000; w < 5000 + 2ULL * n; w += 2) {
        int i = (int)((w - 5000) / 2);
        if (owner[i] != omp_get_thread_num()) __atomic_fetch_add(&wrong_thread, 1, __ATOMIC_RELAXED);
        if (data[i] != 3 * i + 1) __atomic_fetch_add(&wrong_data, 1, __ATOMIC_RELAXED);
      }
    } else {
#pragma omp for schedule(static) nowait
      for (int i = 0; i < n; i++) {
        data[i] = 3 * i + 1;
        owner[i] = omp_get_thread_num();
      }
#pragma omp for schedule(static)
      for (long long v = -1; v > -1 - (long long)n; v--) {
        int i = (int)(-1 - v);
        if (owner[i] != omp_get_thread_num()) __atomic_fetch_add(&wrong_thread, 1, __ATOMIC_RELAXED);
        if (data[i] != 3 * i + 1) __atomic_fetch_add(&wrong_data, 1, __ATOMIC_RELAXED);
      }
    }
  }
  char buf[200];
  snprintf(buf, sizeof buf, "same-assignment chunk %d: iteration on another thread than in the first loop", chunk);
  CHECK_EQ(buf, wrong_thread, 0);
  snprintf(buf, sizeof buf, "same-assignment chunk %d: data of the nowait loop not seen", chunk);
  CHECK_EQ(buf, wrong_data, 0);
}

/* ---- collapse(2) ---- */
static void collapse_tests(void) {
  char buf[200];
  for (int c = 0; c <= 7; c += 7) {
    /* int x int, inner negative step: 9 x 8 */
    int i = -1, j = -1, nth = 0;
    reset();
#pragma omp parallel shared(nth)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
      if (c > 0) {
#pragma omp for collapse(2) schedule(static, 7) lastprivate(i, j)
        for (i = 0; i < 9; i++)
          for (j = 10; j > -5; j -= 2) record((unsigned long long)(i * 8 + (10 - j) / 2), 1, 72);
      } else {
#pragma omp for collapse(2) schedule(static) lastprivate(i, j)
        for (i = 0; i < 9; i++)
          for (j = 10; j > -5; j -= 2) record((unsigned long long)(i * 8 + (10 - j) / 2), 1, 72);
      }
    }
    snprintf(buf, sizeof buf, "collapse int x int chunk %d", c);
    check_loop(buf, hits, owner, 72, nth, c);
    CHECK_EQ("collapse lastprivate i", i, 9);
    CHECK_EQ("collapse lastprivate j", j, -6);
    CHECK_EQ("collapse foreign iterations", bad_iv, 0);
  }
  static const int cs[] = {1, 3, 64};
  for (int ci = 0; ci < 3; ci++) {
    /* unsigned x long long: 13 x 11, run-time chunk */
    int c = cs[ci], nth = 0;
    unsigned u = 0;
    long long v = 0;
    reset();
#pragma omp parallel shared(nth)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
#pragma omp for collapse(2) schedule(static, c) lastprivate(u, v)
      for (u = UINT_MAX - 13; u < UINT_MAX; u++)
        for (v = 50; v >= -50; v -= 10)
          record((unsigned long long)(u - (UINT_MAX - 13)) * 11 + (unsigned long long)((50 - v) / 10),
                 1, 143);
    }
    snprintf(buf, sizeof buf, "collapse unsigned x long long chunk %d", c);
    check_loop(buf, hits, owner, 143, nth, c);
    CHECK_EQ("collapse unsigned x long long lastprivate u", u, UINT_MAX);
    CHECK_EQ("collapse unsigned x long long lastprivate v", v, -60);
    CHECK_EQ("collapse unsigned x long long foreign iterations", bad_iv, 0);
  }
  /* empty nests: outer empty, inner empty */
  {
    int ran = 0, n0 = 0, m0 = 0, lo = 5, hi = 5;
#pragma omp parallel shared(ran)
    {
#pragma omp for collapse(2) schedule(static, 2)
      for (int i = lo; i < hi; i++)
        for (int j = 0; j < 10; j++) __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
#pragma omp for collapse(2) schedule(static)
      for (int i = 0; i < 10; i++)
        for (int j = n0; j > m0; j--) __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("collapse with an empty loop ran iterations", ran, 0);
  }
}

int main(void) {
  static const int chunks[] = {0, 1, 2, 3, 7, 64};
  for (unsigned c = 0; c < sizeof chunks / sizeof chunks[0]; c++) all_shapes(chunks[c]);
  for (int rep = 0; rep < 20; rep++) nowait_back_to_back(rep);
  for (unsigned c = 0; c < sizeof chunks / sizeof chunks[0]; c++) same_assignment(chunks[c]);
  collapse_tests();
  if (failures) {
    fprintf(stderr, "for_static: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok for_static\n");
  return 0;
}
