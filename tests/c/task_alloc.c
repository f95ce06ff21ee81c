// task_alloc.c - the memory allocator routines and the allocate clause /
// directive (omp_alloc, omp_aligned_alloc, omp_calloc, omp_aligned_calloc,
// omp_realloc, omp_free; __kmpc_alloc / __kmpc_aligned_alloc / __kmpc_free
// emitted by clang for allocate):
//  * every predefined allocator (omp_default_mem_alloc, omp_large_cap_mem_alloc,
//    omp_const_mem_alloc, omp_high_bw_mem_alloc, omp_low_lat_mem_alloc,
//    omp_cgroup_mem_alloc, omp_pteam_mem_alloc, omp_thread_mem_alloc) and
//    omp_null_allocator (the default allocator): sizes 1 .. 256 KiB (1 MiB through realloc), non-NULL,
//    at least 8-byte aligned (libomp gives 8, not 16), usable over the whole
//    size, no two live blocks overlap (each keeps its own pattern), freed
//    with the same allocator or omp_null_allocator; libomp prints "allocator
//    not available, will use default allocator" warnings for the memory kinds
//    it lacks, which is fine
//  * size 0 (omp_alloc, omp_aligned_alloc, omp_calloc with nmemb or size 0)
//    returns NULL; omp_free(NULL, ...) does nothing
//  * omp_aligned_alloc / omp_aligned_calloc with alignments 1 .. 4096: the
//    result is aligned; calloc'd memory is zero, also when it reuses memory
//    just freed after being dirtied
//  * omp_realloc: NULL -> allocates; grows and shrinks keep the first
//    min(old, new) bytes; to a different allocator; allocator
//    omp_null_allocator (= free_allocator) and free_allocator
//    omp_null_allocator (found automatically); size 0 frees and returns NULL;
//    realloc of aligned memory keeps its contents
//  * every thread allocating, checking and freeing concurrently (thread,
//    pteam and default allocators), blocks freed by another thread
//  * the allocate clause: parallel private(x, arr) firstprivate(d) with
//    allocate(omp_high_bw_mem_alloc: x) etc.: every thread has its own copy
//    (distinct addresses, not the original), naturally aligned, firstprivate
//    value copied, the original untouched; also on for private and single
//    firstprivate
//  * the allocate directive: `#pragma omp allocate(lv) allocator(...) align(64)`
//    on locals (also align(256), align(4096), and in every thread of a
//    parallel region): aligned, usable, distinct per thread
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: the allocate clause's align modifier, which gcc 12 does not parse
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NALLOC 9
static const omp_allocator_handle_t allocs[NALLOC] = {
    omp_default_mem_alloc, omp_large_cap_mem_alloc, omp_const_mem_alloc,
    omp_high_bw_mem_alloc, omp_low_lat_mem_alloc,   omp_cgroup_mem_alloc,
    omp_pteam_mem_alloc,   omp_thread_mem_alloc,    omp_null_allocator,
};
static const char *names[NALLOC] = {
    "omp_default_mem_alloc", "omp_large_cap_mem_alloc", "omp_const_mem_alloc",
    "omp_high_bw_mem_alloc", "omp_low_lat_mem_alloc",   "omp_cgroup_mem_alloc",
    "omp_pteam_mem_alloc",   "omp_thread_mem_alloc",    "omp_null_allocator",
};

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}
/* index of the first byte that differs from the pattern, or n */
static size_t verify(const unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8))) return i;
  return n;
}
static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}
#define ALIGNED(p, a) (((uintptr_t)(p) & ((uintptr_t)(a) - 1)) == 0)

static void report(const char *what, const char *name, long long got, long long exp) {
  char buf[200];
  snprintf(buf, sizeof buf, "%s [%s]", what, name);
  CHECK_EQ(buf, got, exp);
}

#define NSIZES 11
static const size_t sizes[NSIZES] = {1, 7, 8, 16, 24, 100, 1000, 4096, 4097, 65536, 1 << 18};

static void test_basic(int ai) {
  omp_allocator_handle_t a = allocs[ai];
  const char *nm = names[ai];
  report("omp_alloc(0) is NULL", nm, omp_alloc(0, a) == NULL, 1);
  report("omp_aligned_alloc(64, 0) is NULL", nm, omp_aligned_alloc(64, 0, a) == NULL, 1);
  report("omp_calloc(0, 8) is NULL", nm, omp_calloc(0, 8, a) == NULL, 1);
  report("omp_calloc(8, 0) is NULL", nm, omp_calloc(8, 0, a) == NULL, 1);
  omp_free(NULL, a);

  unsigned char *blk[NSIZES];
  for (int k = 0; k < NSIZES; k++) {
    blk[k] = omp_alloc(sizes[k], a);
    report("omp_alloc returned NULL", nm, blk[k] != NULL, 1);
    if (!blk[k]) return;
    report("omp_alloc result 8-byte aligned", nm, ALIGNED(blk[k], 8), 1);
    fill(blk[k], sizes[k], (unsigned)k + 1);
  }
  /* all blocks live at once: none overwrote another */
  for (int k = 0; k < NSIZES; k++) report("omp_alloc block overlaps another", nm, verify(blk[k], sizes[k], (unsigned)k + 1), sizes[k]);
  for (int k = 0; k < NSIZES; k += 2) omp_free(blk[k], a);
  for (int k = 1; k < NSIZES; k += 2) {
    report("omp_alloc block changed by freeing others", nm, verify(blk[k], sizes[k], (unsigned)k + 1), sizes[k]);
    omp_free(blk[k], omp_null_allocator); /* the implementation finds the allocator */
  }
}

static void test_aligned(int ai) {
  omp_allocator_handle_t a = allocs[ai];
  const char *nm = names[ai];
  static const size_t aligns[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096};
  for (int k = 0; k < (int)(sizeof aligns / sizeof aligns[0]); k++) {
    size_t al = aligns[k], sz = al * (size_t)(1 + k % 3) * 8;
    unsigned char *p = omp_aligned_alloc(al, sz, a);
    report("omp_aligned_alloc returned NULL", nm, p != NULL, 1);
    if (!p) continue;
    if (!ALIGNED(p, al)) report("omp_aligned_alloc misaligned for alignment", nm, (long long)al, -1);
    fill(p, sz, (unsigned)al);
    /* while p is live: an aligned zeroed block of the same size */
    unsigned char *q = omp_aligned_calloc(al, sz / al, al, a);
    report("omp_aligned_calloc returned NULL", nm, q != NULL, 1);
    if (q) {
      if (!ALIGNED(q, al)) report("omp_aligned_calloc misaligned for alignment", nm, (long long)al, -1);
      report("omp_aligned_calloc not zero", nm, all_zero(q, sz), 1);
      memset(q, 0xEE, sz);
    }
    report("omp_aligned_alloc block overwritten", nm, verify(p, sz, (unsigned)al), sz);
    omp_free(p, a);
    omp_free(q, a);
  }
}

static void test_calloc(int ai) {
  omp_allocator_handle_t a = allocs[ai];
  const char *nm = names[ai];
  static const size_t n[] = {1, 3, 16, 100, 512, 8192, 131072};
  for (int k = 0; k < (int)(sizeof n / sizeof n[0]); k++) {
    for (int round = 0; round < 3; round++) {
      /* dirty memory of the same size first, so reuse would show */
      unsigned char *d = omp_alloc(n[k] * 8, a);
      if (d) memset(d, 0xA5, n[k] * 8);
      omp_free(d, a);
      unsigned char *z = omp_calloc(n[k], 8, a);
      report("omp_calloc returned NULL", nm, z != NULL, 1);
      if (!z) continue;
      report("omp_calloc 8-byte aligned", nm, ALIGNED(z, 8), 1);
      report("omp_calloc not zero", nm, all_zero(z, n[k] * 8), 1);
      memset(z, 0x5A, n[k] * 8);
      omp_free(z, a);
    }
  }
}

static void test_realloc(int ai, int bi) {
  omp_allocator_handle_t a = allocs[ai], b = allocs[bi];
  const char *nm = names[ai];
  unsigned char *p = omp_realloc(NULL, 100, a, omp_null_allocator);
  report("omp_realloc(NULL, 100) returned NULL", nm, p != NULL, 1);
  if (!p) return;
  fill(p, 100, 77);
  p = omp_realloc(p, 5000, a, a); /* grow */
  report("omp_realloc grow returned NULL", nm, p != NULL, 1);
  if (!p) return;
  report("omp_realloc grow kept the contents", nm, verify(p, 100, 77), 100);
  fill(p, 5000, 78);
  p = omp_realloc(p, 37, b, a); /* shrink, to another allocator */
  report("omp_realloc shrink returned NULL", nm, p != NULL, 1);
  if (!p) return;
  report("omp_realloc shrink to another allocator kept the contents", nm, verify(p, 37, 78), 37);
  p = omp_realloc(p, 1 << 20, omp_null_allocator, b); /* allocator = free_allocator */
  report("omp_realloc(null allocator) returned NULL", nm, p != NULL, 1);
  if (!p) return;
  report("omp_realloc to 1 MiB kept the contents", nm, verify(p, 37, 78), 37);
  memset(p + 37, 0x33, (1 << 20) - 37);
  p = omp_realloc(p, 64, a, omp_null_allocator); /* free_allocator found automatically */
  report("omp_realloc(free null allocator) returned NULL", nm, p != NULL, 1);
  if (!p) return;
  report("omp_realloc with null free_allocator kept the contents", nm, verify(p, 37, 78), 37);
  report("omp_realloc(p, 0) returns NULL", nm, omp_realloc(p, 0, a, a) == NULL, 1);

  /* aligned memory reallocated keeps its contents */
  unsigned char *q = omp_aligned_alloc(256, 512, a);
  report("omp_aligned_alloc(256, 512) returned NULL", nm, q != NULL, 1);
  if (!q) return;
  fill(q, 512, 99);
  q = omp_realloc(q, 4096, a, a);
  report("omp_realloc of aligned memory returned NULL", nm, q != NULL, 1);
  if (!q) return;
  report("omp_realloc of aligned memory kept the contents", nm, verify(q, 512, 99), 512);
  omp_free(q, a);
}

/* every thread allocates, checks and frees concurrently; some blocks are
   freed by the next thread */
#define PER 32
static unsigned char *handoff[64][PER];
static size_t handoff_sz[64][PER];

static void test_threads(void) {
  int errs = 0;
#pragma omp parallel shared(errs)
  {
    int me = omp_get_thread_num(), nth = omp_get_num_threads();
    unsigned char *mine[PER];
    size_t msz[PER];
    omp_allocator_handle_t own = (me % 3 == 0) ? omp_thread_mem_alloc : (me % 3 == 1) ? omp_pteam_mem_alloc : omp_default_mem_alloc;
    for (int k = 0; k < PER; k++) {
      msz[k] = 1 + (size_t)((k * 2654435761u + (unsigned)me * 40503u) % 3000u);
      mine[k] = omp_alloc(msz[k], own);
      if (!mine[k]) {
        __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
        msz[k] = 0;
        continue;
      }
      fill(mine[k], msz[k], (unsigned)(me * PER + k));
      handoff_sz[me][k] = msz[k] / 2 + 8;
      handoff[me][k] = omp_alloc(handoff_sz[me][k], omp_default_mem_alloc);
      if (handoff[me][k]) fill(handoff[me][k], handoff_sz[me][k], (unsigned)(1000 + me * PER + k));
    }
    for (int k = 0; k < PER; k += 3) {
      unsigned char *r = omp_realloc(mine[k], msz[k] * 3, own, own);
      if (!r) {
        __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
        mine[k] = NULL;
        msz[k] = 0;
        continue;
      }
      if (verify(r, msz[k], (unsigned)(me * PER + k)) != msz[k]) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
      mine[k] = r;
    }
#pragma omp barrier
    for (int k = 0; k < PER; k++) {
      if (mine[k] && verify(mine[k], msz[k], (unsigned)(me * PER + k)) != msz[k]) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
      omp_free(mine[k], own);
    }
    /* free the next thread's blocks */
    int other = (me + 1) % nth;
    for (int k = 0; k < PER; k++) {
      unsigned char *h = handoff[other][k];
      if (!h || verify(h, handoff_sz[other][k], (unsigned)(1000 + other * PER + k)) != handoff_sz[other][k])
        __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
      omp_free(h, k % 2 ? omp_default_mem_alloc : omp_null_allocator);
    }
  }
  CHECK_EQ("concurrent allocations", errs, 0);
}

/* ---------- allocate clause ---------- */
#define MAXT 64
static uintptr_t addr_x[MAXT], addr_d[MAXT], addr_arr[MAXT], addr_y[MAXT];

static void test_clause(void) {
  int x = -1;
  double d = 1.5;
  long arr[10];
  long long y = 5, sv = 7;
  for (int k = 0; k < 10; k++) arr[k] = -k;
  int nth = 1, errs = 0;
  memset(addr_x, 0, sizeof addr_x);
#pragma omp parallel private(x, arr) firstprivate(d) allocate(omp_high_bw_mem_alloc: x) \
    allocate(omp_large_cap_mem_alloc: d) allocate(omp_pteam_mem_alloc: arr) shared(nth, errs, sv)
  {
    int me = omp_get_thread_num();
    if (me == 0) nth = omp_get_num_threads();
    if (d != 1.5) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED); /* firstprivate value */
    x = me * 3;
    d += me;
    for (int k = 0; k < 10; k++) arr[k] = me * 100 + k;
    if (me < MAXT) {
      addr_x[me] = (uintptr_t)&x;
      addr_d[me] = (uintptr_t)&d;
      addr_arr[me] = (uintptr_t)arr;
    }
    if (!ALIGNED(&x, _Alignof(int)) || !ALIGNED(&d, _Alignof(double)) || !ALIGNED(arr, _Alignof(long)))
      __atomic_fetch_add(&errs, 1000, __ATOMIC_RELAXED);
#pragma omp barrier
    /* no other thread's copy overlapped ours */
    if (x != me * 3 || d != 1.5 + me) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
    for (int k = 0; k < 10; k++)
      if (arr[k] != me * 100 + k) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);

#pragma omp for private(y) allocate(omp_low_lat_mem_alloc: y)
    for (int i = 0; i < 100; i++) {
      y = i;
      if (me < MAXT) addr_y[me] = (uintptr_t)&y;
      if (y != i || !ALIGNED(&y, _Alignof(long long))) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
    }
#pragma omp single firstprivate(sv) allocate(omp_cgroup_mem_alloc: sv)
    {
      if (sv != 7 || !ALIGNED(&sv, _Alignof(long long))) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
      sv = -100;
    }
    if (sv != 7) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("allocate clause: private copies", errs, 0);
  CHECK_EQ("allocate clause: original x untouched", x, -1);
  CHECK("allocate clause: original d untouched", d == 1.5);
  CHECK_EQ("allocate clause: original y untouched", y, 5);
  for (int k = 0; k < 10; k++) CHECK_EQ("allocate clause: original arr untouched", arr[k], -k);
  int n = nth < MAXT ? nth : MAXT;
  for (int t = 0; t < n; t++) {
    CHECK("allocate clause: private x is not the original", addr_x[t] != (uintptr_t)&x);
    CHECK("allocate clause: private arr is not the original", addr_arr[t] != (uintptr_t)arr);
    for (int u = 0; u < t; u++) {
      CHECK("allocate clause: two threads share a private x", addr_x[t] != addr_x[u]);
      CHECK("allocate clause: two threads share a firstprivate d", addr_d[t] != addr_d[u]);
      CHECK("allocate clause: two threads' arr overlap",
            addr_arr[t] + sizeof arr <= addr_arr[u] || addr_arr[u] + sizeof arr <= addr_arr[t]);
    }
  }
}

/* ---------- allocate directive ---------- */
__attribute__((noinline)) static int use_block(void *p, size_t n, unsigned seed) {
  fill(p, n, seed);
  return verify(p, n, seed) == n;
}

static void test_directive(void) {
  int lv[12];
#pragma omp allocate(lv) allocator(omp_high_bw_mem_alloc) align(64)
  double dv[5];
#pragma omp allocate(dv) allocator(omp_large_cap_mem_alloc) align(256)
  char page[100];
#pragma omp allocate(page) allocator(omp_default_mem_alloc) align(4096)
  long plain;
#pragma omp allocate(plain) allocator(omp_low_lat_mem_alloc)
  CHECK("allocate directive align(64)", ALIGNED(lv, 64));
  CHECK("allocate directive align(256)", ALIGNED(dv, 256));
  CHECK("allocate directive align(4096)", ALIGNED(page, 4096));
  CHECK("allocate directive without align", ALIGNED(&plain, _Alignof(long)));
  CHECK("allocate directive: int lv[12] usable", use_block(lv, sizeof lv, 1));
  CHECK("allocate directive: double dv[5] usable", use_block(dv, sizeof dv, 2));
  CHECK("allocate directive: char page[100] usable", use_block(page, sizeof page, 3));
  plain = 42;
  CHECK_EQ("allocate directive: long usable", plain, 42);
  CHECK("allocate directive: lv intact", verify((unsigned char *)lv, sizeof lv, 1) == sizeof lv);
  CHECK("allocate directive: dv intact", verify((unsigned char *)dv, sizeof dv, 2) == sizeof dv);

  /* in every thread: own, aligned */
  int errs = 0, nth = 1;
  static uintptr_t where[MAXT];
#pragma omp parallel shared(errs, nth)
  {
    int me = omp_get_thread_num();
    char buf[200];
#pragma omp allocate(buf) allocator(omp_thread_mem_alloc) align(128)
    if (me == 0) nth = omp_get_num_threads();
    if (!ALIGNED(buf, 128)) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
    fill((unsigned char *)buf, sizeof buf, (unsigned)me);
    if (me < MAXT) where[me] = (uintptr_t)buf;
#pragma omp barrier
    if (verify((unsigned char *)buf, sizeof buf, (unsigned)me) != sizeof buf) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("allocate directive in every thread", errs, 0);
  int n = nth < MAXT ? nth : MAXT;
  for (int t = 0; t < n; t++)
    for (int u = 0; u < t; u++) CHECK("allocate directive: two threads share a block", where[t] + 200 <= where[u] || where[u] + 200 <= where[t]);
}

int main(void) {
  for (int rep = 0; rep < 20; rep++) {
    for (int ai = 0; ai < NALLOC; ai++) {
      test_basic(ai);
      test_aligned(ai);
      if (rep % 5 == 0) test_calloc(ai);
      test_realloc(ai, (ai + 3) % NALLOC);
    }
    test_threads();
    test_clause();
    test_directive();
  }
  /* the same from inside a parallel region (one thread per allocator) */
  for (int rep = 0; rep < 5; rep++) {
#pragma omp parallel for schedule(dynamic)
    for (int ai = 0; ai < NALLOC; ai++) {
      test_basic(ai);
      test_aligned(ai);
      test_realloc(ai, (ai + 1) % NALLOC);
    }
  }
  return failures != 0;
}
