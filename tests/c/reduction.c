// reduction.c - reduction clauses (__kmpc_reduce / __kmpc_reduce_nowait and
// their end calls; all three methods: inline/tree (1 and 0), atomic (2)):
//  * operators +, *, -, min, max, &, |, ^, &&, || on int, long long and
//    unsigned; +, *, -, min, max on float, double and long double; +, *, - on
//    _Complex double (16-byte atomic fallback needs libatomic: -latomic);
//    values are exactly representable, so results are exact
//  * ~60 reduction variables in one construct (several per clause)
//  * on parallel (one contribution per thread), for (blocking: every thread
//    sees the final values right after the loop's barrier, 20 times in one
//    region), for nowait, parallel for, sections, and in a team of one
//    (num_threads(1), if(0))
//  * 100 nowait for reductions back to back in one region
//  * array reductions: reduction(+: arr[0:8]), a whole array, a partial
//    section max: m[2:4] (other elements untouched), a run-time length
//    section of a pointer p[0:n], *: on a double array section
//  * user-defined reductions: declare reduction on a struct with an
//    initializer function, on a struct without initializer (zero-initialised
//    private copies), on int with initializer(omp_priv = omp_orig)
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: cflags=-latomic
#include <complex.h>
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
static void fail_fp(const char *what, long double got, long double exp) {
  if (__atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST) < 50)
    fprintf(stderr, "FAIL: %s (got %.21Lg, expected %.21Lg)\n", what, got, exp);
}
#define CHECK_FP(what, got, exp)                                               \
  do {                                                                         \
    long double g_ = (long double)(got), e_ = (long double)(exp);              \
    if (g_ != e_) fail_fp(what, g_, e_);                                       \
  } while (0)

/* ---------- the big multi-type, multi-operator set ---------- */

typedef struct {
  int isum, iprod, iminus, imin, imax, iand, ior, ixor, iland, ilor, iland_f, ilor_f;
  long long lsum, lprod, lminus, lmin, lmax, land, lor, lxor, lland, llor;
  unsigned usum, uprod, uminus, umin, umax, uand, uor, uxor;
  float fsum, fprod, fminus, fmin, fmax;
  double dsum, dprod, dminus, dmin, dmax;
  long double ldsum, ldprod, ldminus, ldmin, ldmax;
  _Complex double csum, cprod, cminus;
} vals;

#define DECL_INIT                                                                  \
  int isum = 5, iprod = 3, iminus = 100, imin = INT_MAX, imax = INT_MIN, iand = -1, \
      ior = 0x100000, ixor = 0x1234, iland = 1, ilor = 0, iland_f = 1, ilor_f = 0;  \
  long long lsum = -7, lprod = 1, lminus = 0, lmin = LLONG_MAX, lmax = LLONG_MIN,  \
            land = -1, lor = 0, lxor = 0, lland = 1, llor = 0;                     \
  unsigned usum = 1, uprod = 1, uminus = 0, umin = UINT_MAX, umax = 0, uand = ~0u, \
           uor = 0, uxor = 0;                                                      \
  float fsum = 0.5f, fprod = 1.0f, fminus = 0.0f, fmin = 1e30f, fmax = -1e30f;     \
  double dsum = 0.25, dprod = 3.0, dminus = 1.0, dmin = 1e300, dmax = -1e300;      \
  long double ldsum = 0.0L, ldprod = 1.0L, ldminus = 0.0L, ldmin = 1e4000L,        \
              ldmax = -1e4000L;                                                    \
  _Complex double csum = 1.0, cprod = 2.0, cminus = 0.0

/* apply contribution i (0 <= i < 4096) to the accumulators */
#define BODY(i)                                                                    \
  do {                                                                             \
    int i_ = (i);                                                                  \
    isum += i_;                                                                    \
    iprod *= (i_ % 100 == 7) ? 2 : 1;                                              \
    iminus -= i_ % 13;                                                             \
    imin = imin < ((i_ * 37) % 1001) - 500 ? imin : ((i_ * 37) % 1001) - 500;      \
    imax = imax > ((i_ * 53) % 997) - 300 ? imax : ((i_ * 53) % 997) - 300;        \
    iand &= ~(1 << (i_ % 31)) | (i_ % 2 ? -1 : 0x00ff00ff);                         \
    ior |= (i_ % 3 == 0) ? 1 << (i_ % 29) : 0;                                     \
    ixor ^= (int)((unsigned)i_ * 2654435761u);                                     \
    iland = iland && (i_ != 4000);                                                 \
    ilor = ilor || (i_ == 2);                                                      \
    iland_f = iland_f && (i_ != 1);                                                \
    ilor_f = ilor_f || (i_ == 5000);                                               \
    lsum += (long long)i_ * 1000000007LL;                                          \
    lprod *= (i_ % 25 == 3) ? 2 : 1;                                               \
    lminus -= (long long)i_ << 20;                                                 \
    lmin = lmin < (long long)((i_ * 7919) % 4099) * 1000000000000LL - 2 ? lmin     \
                 : (long long)((i_ * 7919) % 4099) * 1000000000000LL - 2;          \
    lmax = lmax > -(long long)((i_ * 104729) % 4093) * 1000000000LL                \
               ? lmax : -(long long)((i_ * 104729) % 4093) * 1000000000LL;          \
    land &= ~(1LL << (i_ % 63));                                                   \
    lor |= 1LL << ((i_ * 5) % 61);                                                 \
    lxor ^= (long long)i_ * 0x9E3779B97F4A7C15LL;                                  \
    lland = lland && (i_ >= 0);                                                    \
    llor = llor || (i_ > 3000);                                                    \
    usum += (unsigned)i_ * 4000000000u;                                            \
    uprod *= 2u * (unsigned)i_ + 1u;                                               \
    uminus -= (unsigned)i_;                                                        \
    umin = umin < 4000000000u - (unsigned)((i_ * 31) % 1009) ? umin                \
                : 4000000000u - (unsigned)((i_ * 31) % 1009);                      \
    umax = umax > (unsigned)((i_ * 17) % 1013) + 3000000000u ? umax                \
                : (unsigned)((i_ * 17) % 1013) + 3000000000u;                      \
    uand &= ~(1u << (i_ % 32)) | 0x80000001u;                                      \
    uor |= 1u << (i_ % 30);                                                        \
    uxor ^= (unsigned)i_ * 0x01000193u;                                            \
    fsum += (float)(i_ % 8) * 0.25f;                                               \
    fprod *= (i_ % 100 == 50) ? 0.5f : 1.0f;                                       \
    fminus -= (float)(i_ % 4);                                                     \
    fmin = fmin < (float)((i_ * 13) % 101) - 50.5f ? fmin : (float)((i_ * 13) % 101) - 50.5f; \
    fmax = fmax > (float)((i_ * 29) % 103) * 0.5f ? fmax : (float)((i_ * 29) % 103) * 0.5f; \
    dsum += i_ * 0.5;                                                              \
    dprod *= (i_ % 64 == 1) ? 2.0 : ((i_ % 64 == 2) ? 0.25 : 1.0);                 \
    dminus -= i_ * 0.125;                                                          \
    dmin = dmin < ((i_ * 41) % 211) * 0.75 - 30.0 ? dmin : ((i_ * 41) % 211) * 0.75 - 30.0; \
    dmax = dmax > -((i_ * 43) % 223) * 1.25 ? dmax : -((i_ * 43) % 223) * 1.25;    \
    ldsum += i_ * 0.25L;                                                           \
    ldprod *= (i_ % 128 == 5) ? 4.0L : 1.0L;                                       \
    ldminus -= i_ * 0.0625L;                                                       \
    ldmin = ldmin < ((i_ * 47) % 227) * 0.5L ? ldmin : ((i_ * 47) % 227) * 0.5L;   \
    ldmax = ldmax > ((i_ * 59) % 229) * -0.5L ? ldmax : ((i_ * 59) % 229) * -0.5L; \
    csum += (double)i_ + (double)(i_ % 3) * I;                                     \
    cprod *= (i_ % 100 == 0) ? I : 1.0;                                            \
    cminus -= (double)(i_ % 5) - 0.5 * I;                                          \
  } while (0)

#define CLAUSES                                                                    \
  reduction(+: isum, lsum, usum, fsum, dsum, ldsum, csum)                          \
  reduction(*: iprod, lprod, uprod, fprod, dprod, ldprod, cprod)                   \
  reduction(-: iminus, lminus, uminus, fminus, dminus, ldminus, cminus)            \
  reduction(min: imin, lmin, umin, fmin, dmin, ldmin)                              \
  reduction(max: imax, lmax, umax, fmax, dmax, ldmax)                              \
  reduction(&: iand, land, uand) reduction(|: ior, lor, uor)                       \
  reduction(^: ixor, lxor, uxor) reduction(&&: iland, iland_f, lland)              \
  reduction(||: ilor, ilor_f, llor)

#define SAVE(v)                                                                    \
  do {                                                                             \
    v.isum = isum; v.iprod = iprod; v.iminus = iminus; v.imin = imin; v.imax = imax; \
    v.iand = iand; v.ior = ior; v.ixor = ixor; v.iland = iland; v.ilor = ilor;     \
    v.iland_f = iland_f; v.ilor_f = ilor_f;                                        \
    v.lsum = lsum; v.lprod = lprod; v.lminus = lminus; v.lmin = lmin; v.lmax = lmax; \
    v.land = land; v.lor = lor; v.lxor = lxor; v.lland = lland; v.llor = llor;     \
    v.usum = usum; v.uprod = uprod; v.uminus = uminus; v.umin = umin; v.umax = umax; \
    v.uand = uand; v.uor = uor; v.uxor = uxor;                                     \
    v.fsum = fsum; v.fprod = fprod; v.fminus = fminus; v.fmin = fmin; v.fmax = fmax; \
    v.dsum = dsum; v.dprod = dprod; v.dminus = dminus; v.dmin = dmin; v.dmax = dmax; \
    v.ldsum = ldsum; v.ldprod = ldprod; v.ldminus = ldminus; v.ldmin = ldmin;      \
    v.ldmax = ldmax;                                                               \
    v.csum = csum; v.cprod = cprod; v.cminus = cminus;                             \
  } while (0)

/* sequential expectation for contributions 0..n-1 */
static vals expect(int n) {
  DECL_INIT;
  for (int i = 0; i < n; i++) BODY(i);
  vals v;
  SAVE(v);
  return v;
}

/* number of differing fields; report them when label != NULL */
static int compare(const vals *g, const vals *e, const char *label) {
  int bad = 0;
  char buf[200];
#define CI(f)                                                                      \
  if (g->f != e->f) {                                                              \
    bad++;                                                                         \
    if (label) {                                                                   \
      snprintf(buf, sizeof buf, "%s: %s", label, #f);                              \
      CHECK_EQ(buf, g->f, e->f);                                                   \
    }                                                                              \
  }
#define CF(f)                                                                      \
  if (g->f != e->f) {                                                              \
    bad++;                                                                         \
    if (label) {                                                                   \
      snprintf(buf, sizeof buf, "%s: %s", label, #f);                              \
      CHECK_FP(buf, g->f, e->f);                                                   \
    }                                                                              \
  }
#define CC(f)                                                                      \
  if (creal(g->f) != creal(e->f) || cimag(g->f) != cimag(e->f)) {                  \
    bad++;                                                                         \
    if (label) {                                                                   \
      snprintf(buf, sizeof buf, "%s: %s (real)", label, #f);                       \
      CHECK_FP(buf, creal(g->f), creal(e->f));                                     \
      snprintf(buf, sizeof buf, "%s: %s (imag)", label, #f);                       \
      CHECK_FP(buf, cimag(g->f), cimag(e->f));                                     \
    }                                                                              \
  }
  CI(isum) CI(iprod) CI(iminus) CI(imin) CI(imax) CI(iand) CI(ior) CI(ixor) CI(iland) CI(ilor)
  CI(iland_f) CI(ilor_f)
  CI(lsum) CI(lprod) CI(lminus) CI(lmin) CI(lmax) CI(land) CI(lor) CI(lxor) CI(lland) CI(llor)
  CI(usum) CI(uprod) CI(uminus) CI(umin) CI(umax) CI(uand) CI(uor) CI(uxor)
  CF(fsum) CF(fprod) CF(fminus) CF(fmin) CF(fmax)
  CF(dsum) CF(dprod) CF(dminus) CF(dmin) CF(dmax)
  CF(ldsum) CF(ldprod) CF(ldminus) CF(ldmin) CF(ldmax)
  CC(csum) CC(cprod) CC(cminus)
  return bad;
}

#define N 1000

static void big_set(void) {
  const vals eN = expect(N);
  int nth = 0;

  /* parallel: one contribution per thread */
  {
    DECL_INIT;
#pragma omp parallel CLAUSES shared(nth)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
      BODY(omp_get_thread_num());
    }
    vals g, e = expect(nth);
    SAVE(g);
    compare(&g, &e, "parallel reduction");
  }

  /* parallel for */
  {
    DECL_INIT;
#pragma omp parallel for CLAUSES
    for (int i = 0; i < N; i++) BODY(i);
    vals g;
    SAVE(g);
    compare(&g, &eN, "parallel for reduction");
  }
  /* parallel for, dynamic schedule, decreasing loop */
  {
    DECL_INIT;
#pragma omp parallel for schedule(dynamic, 7) CLAUSES
    for (int i = N - 1; i >= 0; i--) BODY(i);
    vals g;
    SAVE(g);
    compare(&g, &eN, "parallel for schedule(dynamic,7) reduction");
  }

  /* for (blocking), 20 times in one region: every thread checks the values
     right after the loop's implicit barrier */
  {
    int bad_seen = 0;
    DECL_INIT;
#pragma omp parallel shared(bad_seen)
    {
      for (int r = 0; r < 20; r++) {
#pragma omp for CLAUSES
        for (int i = 0; i < N; i++) BODY(i);
        vals g;
        SAVE(g);
        int b = compare(&g, &eN, r == 0 && omp_get_thread_num() == 0 ? "for reduction" : NULL);
        if (b) __atomic_fetch_add(&bad_seen, 1, __ATOMIC_RELAXED);
#pragma omp barrier
#pragma omp single
        {
          /* reset the shared originals for the next round */
          isum = 5, iprod = 3, iminus = 100, imin = INT_MAX, imax = INT_MIN, iand = -1,
          ior = 0x100000, ixor = 0x1234, iland = 1, ilor = 0, iland_f = 1, ilor_f = 0;
          lsum = -7, lprod = 1, lminus = 0, lmin = LLONG_MAX, lmax = LLONG_MIN, land = -1, lor = 0,
          lxor = 0, lland = 1, llor = 0;
          usum = 1, uprod = 1, uminus = 0, umin = UINT_MAX, umax = 0, uand = ~0u, uor = 0, uxor = 0;
          fsum = 0.5f, fprod = 1.0f, fminus = 0.0f, fmin = 1e30f, fmax = -1e30f;
          dsum = 0.25, dprod = 3.0, dminus = 1.0, dmin = 1e300, dmax = -1e300;
          ldsum = 0.0L, ldprod = 1.0L, ldminus = 0.0L, ldmin = 1e4000L, ldmax = -1e4000L;
          csum = 1.0, cprod = 2.0, cminus = 0.0;
        }
      }
    }
    CHECK_EQ("for reduction: threads that saw wrong values after the loop", bad_seen, 0);
  }

  /* for nowait: values checked after the region */
  {
    DECL_INIT;
#pragma omp parallel
    {
#pragma omp for schedule(guided) nowait CLAUSES
      for (int i = 0; i < N; i++) BODY(i);
    }
    vals g;
    SAVE(g);
    compare(&g, &eN, "for nowait reduction");
  }

  /* sections: 5 sections, contributions 0..4 */
  {
    DECL_INIT;
#pragma omp parallel
    {
#pragma omp sections CLAUSES
      {
#pragma omp section
        BODY(0);
#pragma omp section
        BODY(1);
#pragma omp section
        BODY(2);
#pragma omp section
        BODY(3);
#pragma omp section
        BODY(4);
      }
    }
    vals g, e = expect(5);
    SAVE(g);
    compare(&g, &e, "sections reduction");
  }

  /* team of one */
  {
    DECL_INIT;
#pragma omp parallel for num_threads(1) CLAUSES
    for (int i = 0; i < N; i++) BODY(i);
    vals g;
    SAVE(g);
    compare(&g, &eN, "parallel for num_threads(1) reduction");
  }
  {
    int zero = 0;
    DECL_INIT;
#pragma omp parallel if (zero)
    {
#pragma omp for CLAUSES
      for (int i = 0; i < N; i++) BODY(i);
    }
    vals g;
    SAVE(g);
    compare(&g, &eN, "if(0) parallel + for reduction");
  }
}

/* ---------- array reductions ---------- */
static void arrays(void) {
  char buf[200];
  int arr[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ea[8];
  long long whole[5] = {0}, ew[5] = {0};
  int m[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
  double dp[4] = {1.0, 2.0, 3.0, 4.0};
  int n = 37;
  long *p = calloc((size_t)n, sizeof *p), *ep = calloc((size_t)n, sizeof *ep);
  memcpy(ea, arr, sizeof ea);
  for (int i = 0; i < N; i++) {
    ea[i % 8] += i;
    ew[i % 5] += (long long)i * i;
    ep[(i * 7) % n] += i + 1;
  }
#pragma omp parallel for reduction(+: arr[0:8]) reduction(+: whole) reduction(max: m[2:4]) \
    reduction(*: dp[1:2]) reduction(+: p[0:n])
  for (int i = 0; i < N; i++) {
    arr[i % 8] += i;
    whole[i % 5] += (long long)i * i;
    if (m[2 + i % 4] < (i * 17) % 389) m[2 + i % 4] = (i * 17) % 389;
    dp[1 + i % 2] *= (i % 250 == 3 || i % 250 == 10) ? 2.0 : 1.0;
    p[(i * 7) % n] += i + 1;
  }
  for (int k = 0; k < 8; k++) {
    snprintf(buf, sizeof buf, "reduction(+: arr[0:8]) element %d", k);
    CHECK_EQ(buf, arr[k], ea[k]);
  }
  for (int k = 0; k < 5; k++) {
    snprintf(buf, sizeof buf, "reduction(+: whole array) element %d", k);
    CHECK_EQ(buf, whole[k], ew[k]);
  }
  int em[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
  for (int i = 0; i < N; i++)
    if (em[2 + i % 4] < (i * 17) % 389) em[2 + i % 4] = (i * 17) % 389;
  for (int k = 0; k < 8; k++) {
    snprintf(buf, sizeof buf, "reduction(max: m[2:4]) element %d", k);
    CHECK_EQ(buf, m[k], em[k]);
  }
  CHECK_FP("reduction(*: dp[1:2]) element 0 (outside)", dp[0], 1.0);
  CHECK_FP("reduction(*: dp[1:2]) element 1", dp[1], 2.0 * 16.0);
  CHECK_FP("reduction(*: dp[1:2]) element 2", dp[2], 3.0 * 16.0);
  CHECK_FP("reduction(*: dp[1:2]) element 3 (outside)", dp[3], 4.0);
  for (int k = 0; k < n; k++)
    if (p[k] != ep[k]) {
      snprintf(buf, sizeof buf, "reduction(+: p[0:n]) element %d", k);
      CHECK_EQ(buf, p[k], ep[k]);
      break;
    }

  /* array section reduction on a for inside a region, repeated */
  {
    int bad = 0;
    int h[8];
#pragma omp parallel shared(bad, h)
    {
      for (int r = 0; r < 20; r++) {
#pragma omp single
        memset(h, 0, sizeof h);
#pragma omp for reduction(+: h[0:8])
        for (int i = 0; i < 800; i++) h[i % 8] += 1;
        for (int k = 0; k < 8; k++)
          if (h[k] != 100) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
#pragma omp barrier
      }
    }
    CHECK_EQ("for reduction(+: h[0:8]) repeated: wrong elements seen", bad, 0);
  }
  free(p);
  free(ep);
}

/* ---------- user-defined reductions ---------- */
struct stats {
  long long sum;
  int lo, hi;
  int cnt;
};
static struct stats stats_init(void) {
  struct stats s = {0, INT_MAX, INT_MIN, 0};
  return s;
}
static struct stats stats_merge(struct stats a, struct stats b) {
  struct stats r;
  r.sum = a.sum + b.sum;
  r.lo = a.lo < b.lo ? a.lo : b.lo;
  r.hi = a.hi > b.hi ? a.hi : b.hi;
  r.cnt = a.cnt + b.cnt;
  return r;
}
static void stats_add(struct stats *s, int v) {
  s->sum += v;
  if (v < s->lo) s->lo = v;
  if (v > s->hi) s->hi = v;
  s->cnt++;
}
#pragma omp declare reduction(merge : struct stats : omp_out = stats_merge(omp_out, omp_in)) \
    initializer(omp_priv = stats_init())

struct vec2 {
  long long x, y;
};
/* no initializer: private copies are zero-initialised, the identity of + */
#pragma omp declare reduction(vadd : struct vec2 : omp_out.x += omp_in.x, omp_out.y += omp_in.y)

#pragma omp declare reduction(keepmax : int : omp_out = omp_in > omp_out ? omp_in : omp_out) \
    initializer(omp_priv = omp_orig)

static void udrs(void) {
  int nth = 0;
  struct stats es = stats_init();
  struct vec2 ev = {3, 4};
  for (int i = 0; i < N; i++) {
    stats_add(&es, (i * 7919) % 1543 - 700);
    ev.x += i;
    ev.y -= 2 * i;
  }
  /* parallel for */
  {
    struct stats s = stats_init();
    struct vec2 v = {3, 4};
    int km = 250;
#pragma omp parallel for reduction(merge : s) reduction(vadd : v) reduction(keepmax : km)
    for (int i = 0; i < N; i++) {
      stats_add(&s, (i * 7919) % 1543 - 700);
      v.x += i;
      v.y -= 2 * i;
      if ((i * 13) % 211 > km) km = (i * 13) % 211;
    }
    CHECK_EQ("UDR merge: sum", s.sum, es.sum);
    CHECK_EQ("UDR merge: lo", s.lo, es.lo);
    CHECK_EQ("UDR merge: hi", s.hi, es.hi);
    CHECK_EQ("UDR merge: cnt", s.cnt, N);
    CHECK_EQ("UDR vadd (no initializer): x", v.x, ev.x);
    CHECK_EQ("UDR vadd (no initializer): y", v.y, ev.y);
    CHECK_EQ("UDR keepmax (omp_priv = omp_orig) keeps the larger original", km, 250);
  }
  {
    int km = 7;
#pragma omp parallel for reduction(keepmax : km)
    for (int i = 0; i < N; i++)
      if ((i * 13) % 211 > km) km = (i * 13) % 211;
    CHECK_EQ("UDR keepmax over the loop", km, 210);
  }
  /* parallel: one contribution per thread; for blocking inside a region; sections */
  {
    struct stats s = stats_init(), s2 = stats_init(), s3 = stats_init();
    struct vec2 v = {0, 0};
#pragma omp parallel reduction(merge : s) reduction(vadd : v) shared(nth, s2, s3)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
      stats_add(&s, 10 + omp_get_thread_num());
      v.x += 1;
      v.y += omp_get_thread_num();
#pragma omp for reduction(merge : s2)
      for (int i = 0; i < N; i++) stats_add(&s2, (i * 7919) % 1543 - 700);
#pragma omp sections reduction(merge : s3)
      {
#pragma omp section
        stats_add(&s3, 5);
#pragma omp section
        stats_add(&s3, -5);
#pragma omp section
        stats_add(&s3, 50);
      }
    }
    CHECK_EQ("UDR on parallel: cnt", s.cnt, nth);
    CHECK_EQ("UDR on parallel: sum", s.sum, 10LL * nth + (long long)nth * (nth - 1) / 2);
    CHECK_EQ("UDR on parallel: lo", s.lo, 10);
    CHECK_EQ("UDR on parallel: hi", s.hi, 10 + nth - 1);
    CHECK_EQ("UDR vadd on parallel: x", v.x, nth);
    CHECK_EQ("UDR vadd on parallel: y", v.y, (long long)nth * (nth - 1) / 2);
    CHECK_EQ("UDR on for: sum", s2.sum, es.sum);
    CHECK_EQ("UDR on for: lo", s2.lo, es.lo);
    CHECK_EQ("UDR on for: hi", s2.hi, es.hi);
    CHECK_EQ("UDR on for: cnt", s2.cnt, N);
    CHECK_EQ("UDR on sections: sum", s3.sum, 50);
    CHECK_EQ("UDR on sections: lo", s3.lo, -5);
    CHECK_EQ("UDR on sections: hi", s3.hi, 50);
    CHECK_EQ("UDR on sections: cnt", s3.cnt, 3);
  }
}

/* ---------- many nowait reductions in a row in one region ---------- */
static void repeated(void) {
  long long tot[100] = {0}, total = 0;
  int bad = 0;
#pragma omp parallel shared(tot, total, bad)
  {
    for (int r = 0; r < 100; r++) {
      /* one element per loop: the loops' combining steps may overlap */
#pragma omp for reduction(+: tot[r:1]) nowait
      for (int i = 0; i < 100; i++) tot[r] += i + r;
    }
#pragma omp for reduction(+: total) schedule(dynamic) nowait
    for (int i = 0; i < 1000; i++) total += i;
#pragma omp barrier
    for (int r = 0; r < 100; r++)
      if (tot[r] != 4950 + 100 * r) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    if (total != 499500) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("100 nowait for reductions: wrong values seen after the barrier", bad, 0);
  CHECK_EQ("nowait dynamic for reduction", total, 499500);
}

int main(void) {
  big_set();
  arrays();
  udrs();
  repeated();
  if (failures) {
    fprintf(stderr, "reduction: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok reduction\n");
  return 0;
}
