// task_taskloop_strict.c - the `strict` modifier of taskloop's grainsize / num_tasks, through
// __kmpc_taskloop_5 called by hand (clang-19 accepts `grainsize(strict: g)` and
// `num_tasks(strict: k)` but drops the modifier and calls __kmpc_taskloop: checked with
// -S -emit-llvm, kmpc-abi.md §6.6), with a pattern task laid out as clang lays out a taskloop
// task (kmp_taskloop_t: lb @40, ub @48, st @56, liter @64, a private tag after the header)
// and a task_dup that, like clang's, stores the lastprivate flag into liter. Each chunk task
// records its bounds, liter and tag; per iteration a counter. For loops of n iterations
// (n mostly not a multiple of the grainsize), with normalised bounds (0, 1) as clang passes
// them and with other lower bounds and positive strides, deferred (if -1) and
// undeferred (if 0), with the runtime's taskgroup (nogroup 0) and the caller's (nogroup 1):
//  * every iteration runs exactly once, every chunk carries the pattern's private tag, and the
//    loop is complete when the call (or the caller's taskgroup) ends
//  * grainsize(strict: g), sched 1 modifier 1: the chunks are exactly [0, g), [g, 2g), ...,
//    and a last shorter one [g*(c-1), n), c = ceil(n/g) (one chunk of n when g >= n)
//  * num_tasks(strict: k), sched 2 modifier 1: exactly min(k, n) chunks, contiguous, each of
//    floor(n/m) or ceil(n/m) iterations
//  * grainsize(g) without the modifier: every chunk has between g and 2g-1 iterations (n when
//    n < g), so the strict shape above (with its short last chunk) is really the modifier's
//  * exactly one chunk has liter != 0: the last one
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kmp_abi.h"

static ident_t loc = {0, 2, 0, 22, ";unknown;unknown;0;0;;"};
void __kmpc_taskgroup(ident_t *, int32_t);
void __kmpc_end_taskgroup(ident_t *, int32_t);

#define REPS 10
#define MAXN 1100
#define MAXCHUNKS 2048
#define TAG 0x5eed1234

/* the pattern task: clang's taskloop header, then one private */
struct tl_task {
  kmp_taskloop_t h;
  int32_t tag;
};

struct chunk {
  int64_t start, len; /* logical iterations */
  int32_t liter, tag;
};
static struct chunk chunks[MAXCHUNKS];
static int nchunks, bad_iter;
static int hits[MAXN];
static int64_t cur_lb, cur_st; /* the loop being run: read-only while it runs */

static int32_t chunk_entry(int32_t gtid, kmp_task_t *t) {
  (void)gtid;
  struct tl_task *x = (struct tl_task *)t;
  int64_t lb = (int64_t)x->h.lb, ub = (int64_t)x->h.ub, st = x->h.st;
  int k = __atomic_fetch_add(&nchunks, 1, __ATOMIC_RELAXED);
  if (k < MAXCHUNKS) {
    chunks[k].start = (lb - cur_lb) / cur_st;
    chunks[k].len = (ub - lb) / st + 1;
    chunks[k].liter = x->h.liter;
    chunks[k].tag = x->tag;
    if (st != cur_st || (lb - cur_lb) % cur_st != 0 || (ub - lb) % st != 0)
      __atomic_fetch_add(&bad_iter, 1, __ATOMIC_RELAXED);
  }
  int count = 0;
  for (int64_t v = lb; st > 0 ? v <= ub : v >= ub; v += st) {
    int64_t i = (v - cur_lb) / cur_st;
    if (i < 0 || i >= MAXN || ++count > MAXN) {
      __atomic_fetch_add(&bad_iter, 1, __ATOMIC_RELAXED);
      break;
    }
    __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  }
  return 0;
}

/* clang's task_dup stores the lastprivate flag into liter (and copies firstprivates) */
static void chunk_dup(kmp_task_t *dst, kmp_task_t *src, int32_t lastpriv) {
  (void)src;
  ((kmp_taskloop_t *)dst)->liter = lastpriv;
}

static int by_start(const void *a, const void *b) {
  int64_t x = ((const struct chunk *)a)->start, y = ((const struct chunk *)b)->start;
  return (x > y) - (x < y);
}

/* one taskloop of n iterations lb0, lb0 + st, ...; returns the chunk count (sorted chunks in
   `chunks`), after checking what holds for every shape */
static int run_loop(int gtid, int sched, uint64_t val, int modifier, int64_t n, int64_t lb0,
                    int64_t st, int if_val, int nogroup, const char *what) {
  memset(hits, 0, sizeof hits);
  memset(chunks, 0, sizeof chunks);
  nchunks = 0;
  bad_iter = 0;
  cur_lb = lb0;
  cur_st = st;
  struct tl_task *p =
      (struct tl_task *)__kmpc_omp_task_alloc(&loc, gtid, 1, sizeof(struct tl_task), 0, chunk_entry);
  p->h.lb = (uint64_t)lb0;
  p->h.ub = (uint64_t)(lb0 + (n - 1) * st);
  p->h.st = st;
  p->h.liter = 0;
  p->h.reductions = NULL;
  p->tag = TAG;
  if (nogroup) __kmpc_taskgroup(&loc, gtid);
  __kmpc_taskloop_5(&loc, gtid, &p->h.task, if_val ? -1 : 0, &p->h.lb, &p->h.ub, st, nogroup,
                    sched, val, modifier, chunk_dup);
  if (nogroup) __kmpc_end_taskgroup(&loc, gtid);

  char msg[200];
  int c = __atomic_load_n(&nchunks, __ATOMIC_SEQ_CST);
  snprintf(msg, sizeof msg, "%s n=%ld lb=%ld st=%ld if=%d nogroup=%d: chunk count in range", what,
           (long)n, (long)lb0, (long)st, if_val, nogroup);
  CHECK(msg, c >= 1 && c <= MAXCHUNKS);
  if (c < 1 || c > MAXCHUNKS) return 0;
  int wrong = 0;
  for (int64_t i = 0; i < MAXN; i++) wrong += hits[i] != (i < n);
  snprintf(msg, sizeof msg, "%s n=%ld lb=%ld st=%ld: iterations not run exactly once or past n",
           what, (long)n, (long)lb0, (long)st);
  CHECK_EQ(msg, wrong, 0);
  snprintf(msg, sizeof msg, "%s n=%ld: chunk bounds off the loop's lattice or outside it", what,
           (long)n);
  CHECK_EQ(msg, bad_iter, 0);
  qsort(chunks, c, sizeof chunks[0], by_start);
  int bad_tag = 0, bad_liter = 0, gaps = 0;
  int64_t next = 0;
  for (int k = 0; k < c; k++) {
    bad_tag += chunks[k].tag != TAG;
    bad_liter += (chunks[k].liter != 0) != (k == c - 1);
    gaps += chunks[k].start != next || chunks[k].len < 1;
    next = chunks[k].start + chunks[k].len;
  }
  snprintf(msg, sizeof msg, "%s n=%ld: chunk without the pattern's private tag", what, (long)n);
  CHECK_EQ(msg, bad_tag, 0);
  snprintf(msg, sizeof msg, "%s n=%ld: liter != 0 on other than exactly the last chunk", what,
           (long)n);
  CHECK_EQ(msg, bad_liter, 0);
  snprintf(msg, sizeof msg, "%s n=%ld: chunks not contiguous from 0", what, (long)n);
  CHECK_EQ(msg, gaps, 0);
  snprintf(msg, sizeof msg, "%s n=%ld: chunks end at n", what, (long)n);
  CHECK_EQ(msg, next, n);
  return c;
}

static const int64_t sizes[] = {1, 2, 7, 64, 97, 1000, 1009};
static const uint64_t vals[] = {1, 2, 3, 7, 10, 64, 100, 5000};
/* (lower bound, stride); no negative stride: libomp 19 mis-cuts those (with lb 100, st -7,
   n 5, grainsize(strict: 2) its first chunk runs all 5 iterations and two more chunks run
   past the loop's end), and clang always passes normalised bounds (0, 1) */
static const int64_t bounds[][2] = {{0, 1}, {10, 3}, {5000000000LL, 2}};

static void all_cases(int gtid) {
  int variant = 0;
  for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        int64_t n = sizes[s], lb0 = bounds[b][0], st = bounds[b][1];
        uint64_t g = vals[v];
        variant++;
        int if_val = variant % 5 != 4, nogroup = variant % 3 == 1;
        char msg[200];

        /* grainsize(strict: g): g, g, ..., rest */
        int c = run_loop(gtid, 1, g, 1, n, lb0, st, if_val, nogroup, "grainsize(strict)");
        int64_t want = ((int64_t)g >= n) ? 1 : (n + (int64_t)g - 1) / (int64_t)g;
        snprintf(msg, sizeof msg, "grainsize(strict: %lu) n=%ld st=%ld: chunk count", (unsigned long)g,
                 (long)n, (long)st);
        CHECK_EQ(msg, c, want);
        if (c == want) {
          int bad = 0;
          for (int k = 0; k < c; k++) {
            int64_t len = k < c - 1 ? (int64_t)g : n - (int64_t)g * (c - 1);
            bad += chunks[k].start != (int64_t)g * k || chunks[k].len != len;
          }
          snprintf(msg, sizeof msg,
                   "grainsize(strict: %lu) n=%ld st=%ld: chunks not exactly g, ..., g, rest",
                   (unsigned long)g, (long)n, (long)st);
          CHECK_EQ(msg, bad, 0);
        }

        /* num_tasks(strict: k): exactly min(k, n) chunks of floor/ceil(n/m) */
        c = run_loop(gtid, 2, g, 1, n, lb0, st, if_val, nogroup, "num_tasks(strict)");
        int64_t m = (int64_t)g < n ? (int64_t)g : n;
        snprintf(msg, sizeof msg, "num_tasks(strict: %lu) n=%ld st=%ld: chunk count", (unsigned long)g,
                 (long)n, (long)st);
        CHECK_EQ(msg, c, m);
        int bad = 0;
        for (int k = 0; k < c; k++) bad += chunks[k].len != n / m && chunks[k].len != (n + m - 1) / m;
        snprintf(msg, sizeof msg, "num_tasks(strict: %lu) n=%ld st=%ld: chunk sizes not floor/ceil(n/m)",
                 (unsigned long)g, (long)n, (long)st);
        CHECK_EQ(msg, bad, 0);

        /* grainsize(g), no modifier: g <= len <= 2g-1 (n when n < g) */
        c = run_loop(gtid, 1, g, 0, n, lb0, st, if_val, nogroup, "grainsize");
        bad = 0;
        for (int k = 0; k < c; k++) {
          int64_t len = chunks[k].len;
          bad += (int64_t)g >= n ? len != n : len < (int64_t)g || len > 2 * (int64_t)g - 1;
        }
        snprintf(msg, sizeof msg, "grainsize(%lu) n=%ld st=%ld: chunk size outside [g, 2g-1]",
                 (unsigned long)g, (long)n, (long)st);
        CHECK_EQ(msg, bad, 0);
        if (failures) return;
      }
}

int main(void) {
  for (int rep = 0; rep < REPS && !failures; rep++) {
#pragma omp parallel
#pragma omp single
    all_cases(__kmpc_global_thread_num(&loc));
  }
  /* outside any parallel region: the initial thread's team of one */
  if (!failures) all_cases(__kmpc_global_thread_num(&loc));
  if (failures) {
    fprintf(stderr, "task_taskloop_strict: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_taskloop_strict\n");
  return 0;
}
