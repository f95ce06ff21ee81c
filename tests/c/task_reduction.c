// task_reduction.c - task reductions (__kmpc_taskred_init,
// __kmpc_task_reduction_get_th_data, __kmpc_taskred_modifier_init /
// __kmpc_task_reduction_modifier_fini, the combining in __kmpc_end_taskgroup):
//  * taskgroup task_reduction(+: x) with tasks in_reduction(+: x) on int,
//    long long and double (exact values), several items with different
//    operators (+, *, max, min, &, |) in one clause; tasks that do not take
//    part; a taskgroup whose tasks contribute nothing leaves x unchanged;
//    the result is visible right after the taskgroup
//  * user-defined reductions (declare reduction): a struct with an
//    initializer function, and a struct whose initializer copies a field of
//    omp_orig (checks the runtime passes the original item to init)
//  * nested taskgroups with different reduction variables: tasks of the
//    inner taskgroup contribute to both the inner and the outer variable
//    (the outer one is found by walking to the enclosing taskgroup), also
//    from a task nested two levels below the outer taskgroup
//  * in_reduction from tasks created by different threads: the taskgroup's
//    tasks create more in_reduction tasks (run/created wherever the team
//    schedules them), and every thread of the team running its own
//    taskgroup reduction concurrently
//  * parallel reduction(task, +: s): the implicit tasks contribute directly,
//    tasks created by every thread contribute with in_reduction
//  * for reduction(task, +: s, x): each iteration contributes directly and
//    through a task with in_reduction; every thread sees the result after the
//    loop's barrier; again with schedule(dynamic, 3)
//  * taskloop reduction(+: y) and taskloop in_reduction(+: x) (also taskloop
//    simd in_reduction) inside a taskgroup task_reduction(+: x)
//  * array reductions of run-time length (clang marks them lazy, flags=1): a
//    whole VLA and a pointer section p[1:n] (n computed from argc), with
//    child tasks taking part through the parent's private copy; the elements
//    outside the section are untouched. The constant-length form arr[0:64]
//    gets a wrong reduce_size from clang-19 and is avoided (kmp-abi.md §6.7).
//    (clang-19 segfaults compiling `task in_reduction(+: p[0:n])` when the
//    task's body does not mention n and the taskgroup is not lexically inside
//    a parallel region; the bodies here use n.)
// oxiomp-test: threads=1,2,4,16
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---------- user-defined reductions ---------- */
typedef struct {
  long long sum;
  int count;
  int max;
} stat_t;
static void stat_init(stat_t *p) {
  p->sum = 0;
  p->count = 0;
  p->max = INT_MIN;
}
static void stat_comb(stat_t *out, const stat_t *in) {
  out->sum += in->sum;
  out->count += in->count;
  if (in->max > out->max) out->max = in->max;
}
#pragma omp declare reduction(stat : stat_t : stat_comb(&omp_out, &omp_in)) initializer(stat_init(&omp_priv))

/* the private copies take `scale` from the original item */
typedef struct {
  int scale;
  long long total;
} scaled_t;
static void scaled_init(scaled_t *priv, const scaled_t *orig) {
  priv->scale = orig->scale;
  priv->total = 0;
}
#pragma omp declare reduction(scaled : scaled_t : omp_out.total += omp_in.total) \
    initializer(scaled_init(&omp_priv, &omp_orig))

#define NT 64 /* tasks per taskgroup */

static void test_basic(void) {
  int x = 5;
  long long lx = -3;
  double dx = 0.5;
  int untouched = 0;
#pragma omp taskgroup task_reduction(+: x, lx, dx)
  {
    for (int t = 0; t < NT; t++) {
#pragma omp task in_reduction(+: x, lx, dx) firstprivate(t)
      {
        x += t + 1;
        lx += (long long)t * 10000000000LL;
        dx += 0.25 * t;
      }
      /* a task that does not take part */
#pragma omp task shared(untouched)
      __atomic_fetch_add(&untouched, 1, __ATOMIC_RELAXED);
    }
  }
  CHECK_EQ("taskgroup task_reduction(+: int)", x, 5 + NT * (NT + 1) / 2);
  CHECK_EQ("taskgroup task_reduction(+: long long)", lx, -3 + (long long)NT * (NT - 1) / 2 * 10000000000LL);
  CHECK("taskgroup task_reduction(+: double)", dx == 0.5 + 0.25 * NT * (NT - 1) / 2);
  CHECK_EQ("non-participating tasks done", untouched, NT);

  /* several operators */
  long long prod = 3;
  int mx = -1000, mn = 1000, band = -1, bor = 0x100;
#pragma omp taskgroup task_reduction(*: prod) task_reduction(max: mx) task_reduction(min: mn) \
    task_reduction(&: band) task_reduction(|: bor)
  {
    for (int t = 0; t < 40; t++) {
#pragma omp task in_reduction(*: prod) in_reduction(max: mx) in_reduction(min: mn) \
    in_reduction(&: band) in_reduction(|: bor) firstprivate(t)
      {
        if (t % 8 == 3) prod *= 2;
        int v = (t * 37) % 41 - 20;
        if (v > mx) mx = v;
        if (v < mn) mn = v;
        band &= ~(1 << (t % 30));
        bor |= 1 << (t % 8);
      }
    }
  }
  CHECK_EQ("task_reduction(*)", prod, 3 * 32);
  int emx = -1000, emn = 1000;
  for (int t = 0; t < 40; t++) {
    int v = (t * 37) % 41 - 20;
    if (v > emx) emx = v;
    if (v < emn) emn = v;
  }
  CHECK_EQ("task_reduction(max)", mx, emx);
  CHECK_EQ("task_reduction(min)", mn, emn);
  CHECK_EQ("task_reduction(&)", band, (int)0xC0000000);
  CHECK_EQ("task_reduction(|)", bor, 0x1ff);

  /* no contributing tasks */
  int z = 77;
#pragma omp taskgroup task_reduction(+: z)
  {
#pragma omp task
    { (void)0; }
  }
  CHECK_EQ("task_reduction without in_reduction tasks", z, 77);
}

static void test_udr(void) {
  stat_t st = {1000, 1, 5};
  scaled_t sc = {7, 11};
#pragma omp taskgroup task_reduction(stat: st) task_reduction(scaled: sc)
  {
    for (int t = 0; t < NT; t++) {
#pragma omp task in_reduction(stat: st) in_reduction(scaled: sc) firstprivate(t)
      {
        st.sum += t;
        st.count++;
        if (t * 3 > st.max) st.max = t * 3;
        sc.total += (long long)sc.scale * t; /* scale copied from omp_orig */
      }
    }
  }
  CHECK_EQ("declare reduction (struct) sum", st.sum, 1000 + NT * (NT - 1) / 2);
  CHECK_EQ("declare reduction (struct) count", st.count, 1 + NT);
  CHECK_EQ("declare reduction (struct) max", st.max, (NT - 1) * 3);
  CHECK_EQ("declare reduction initializer(omp_orig)", sc.total, 11 + 7LL * NT * (NT - 1) / 2);
  CHECK_EQ("declare reduction: original scale unchanged", sc.scale, 7);
}

static void test_nested(void) {
  long long a = 1, b = 2, c = 3;
#pragma omp taskgroup task_reduction(+: a)
  {
    for (int t = 0; t < 8; t++) {
#pragma omp task in_reduction(+: a) firstprivate(t)
      a += 100 + t;
    }
#pragma omp taskgroup task_reduction(+: b)
    {
      for (int t = 0; t < 16; t++) {
        /* contributes to the inner b and to the outer a */
#pragma omp task in_reduction(+: a, b) firstprivate(t)
        {
          a += t;
          b += 2 * t;
        }
      }
      /* a task in the inner taskgroup creating a third-level taskgroup */
#pragma omp task in_reduction(+: b) shared(a, c)
      {
        b += 1000;
#pragma omp taskgroup task_reduction(+: c)
        {
          for (int t = 0; t < 10; t++) {
#pragma omp task in_reduction(+: a, b, c) firstprivate(t)
            {
              a += 10000;
              b += 10000;
              c += t;
            }
          }
        }
        /* c is complete after its taskgroup; b, a still pending */
        if (c != 3 + 45) fail_int("innermost task_reduction result in the task", c, 3 + 45);
      }
    }
    /* the inner taskgroup ended: b is complete, a is still being reduced */
    if (b != 2 + 2 * 120 + 1000 + 10 * 10000) fail_int("inner task_reduction result", b, 2 + 2 * 120 + 1000 + 10 * 10000);
    for (int t = 0; t < 8; t++) {
#pragma omp task in_reduction(+: a) firstprivate(t)
      {
        /* two levels below the taskgroup */
#pragma omp task in_reduction(+: a)
        a += 1000000;
        a += 1;
      }
    }
  }
  CHECK_EQ("nested taskgroups: outer a", a, 1 + (8 * 100 + 28) + 120 + 10 * 10000 + 8 * 1000001);
  CHECK_EQ("nested taskgroups: inner b", b, 2 + 2 * 120 + 1000 + 10 * 10000);
  CHECK_EQ("nested taskgroups: innermost c", c, 3 + 45);
}

/* in_reduction tasks created by the taskgroup's tasks (on whatever thread runs
   them) */
static void test_spawned(void) {
  long long s = 0;
  double d = 0;
#pragma omp taskgroup task_reduction(+: s, d)
  {
    for (int t = 0; t < 16; t++) {
      /* not taking part, creates tasks that do; s and d must be shared here
         (an orphaned task's default would make them firstprivate) */
#pragma omp task firstprivate(t) shared(s, d)
      {
        for (int u = 0; u < 8; u++) {
#pragma omp task in_reduction(+: s, d) firstprivate(t, u)
          {
            s += t * 8 + u;
            d += 1.5;
#pragma omp task in_reduction(+: s) firstprivate(t, u)
            s += 1000000;
          }
        }
      }
    }
  }
  CHECK_EQ("in_reduction from tasks created by tasks", s, 127 * 128 / 2 + 128 * 1000000LL);
  CHECK("in_reduction from tasks created by tasks (double)", d == 1.5 * 128);
}

/* every thread of the team runs its own taskgroup reduction at the same time */
static void test_per_thread(void) {
  int errs = 0;
#pragma omp parallel shared(errs)
  {
    int me = omp_get_thread_num();
    long long mine = me;
#pragma omp taskgroup task_reduction(+: mine)
    {
      for (int t = 0; t < 20; t++) {
#pragma omp task in_reduction(+: mine) firstprivate(t)
        mine += (long long)(me + 1) * t;
      }
    }
    if (mine != me + (long long)(me + 1) * 190) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("per-thread taskgroup task_reduction", errs, 0);
}

/* parallel reduction(task, +: s) */
static void test_parallel_task_modifier(void) {
  long long s = 10;
  double d = 0.25;
  int nth = 0;
#pragma omp parallel reduction(task, +: s, d) shared(nth)
  {
    int me = omp_get_thread_num();
#pragma omp single nowait
    nth = omp_get_num_threads();
    s += 1; /* the implicit task's own copy */
    for (int t = 0; t < 10; t++) {
#pragma omp task in_reduction(+: s, d) firstprivate(t)
      {
        s += t + 100;
        d += 0.5;
#pragma omp task in_reduction(+: s)
        s += 7;
      }
    }
    (void)me;
  }
  CHECK_EQ("parallel reduction(task, +)", s, 10 + nth * (1 + 45 + 1000 + 70));
  CHECK("parallel reduction(task, +: double)", d == 0.25 + nth * 5.0);
}

/* for reduction(task, +: s) */
static void test_for_task_modifier(void) {
  long long s = -100;
  int x = 3;
#pragma omp parallel shared(s, x)
  {
#pragma omp for reduction(task, +: s, x)
    for (int i = 0; i < 200; i++) {
      s += i;
#pragma omp task in_reduction(+: s, x) firstprivate(i)
      {
        s += 1000LL * i;
        x += 1;
      }
    }
    /* after the loop's barrier every thread sees the result */
    if (s != -100 + 1001LL * 199 * 200 / 2) fail_int("for reduction(task) seen after the loop", s, -100 + 1001LL * 199 * 200 / 2);
#pragma omp barrier
#pragma omp for schedule(dynamic, 3) reduction(task, +: s)
    for (int i = 0; i < 60; i++) {
#pragma omp task in_reduction(+: s) firstprivate(i)
      s += i;
    }
  }
  CHECK_EQ("for reduction(task, +)", s, -100 + 1001LL * 199 * 200 / 2 + 59 * 60 / 2);
  CHECK_EQ("for reduction(task, +: int)", x, 203);
}

/* taskloop reduction / in_reduction inside a taskgroup task_reduction */
static void test_taskloop(int g) {
  long long x = 1, y = 2;
  int z = 0;
#pragma omp taskgroup task_reduction(+: x, z)
  {
#pragma omp taskloop in_reduction(+: x) grainsize(g)
    for (int i = 0; i < 300; i++) x += i;
#pragma omp taskloop reduction(+: y) num_tasks(g)
    for (int i = 0; i < 100; i++) y += 3 * i;
    /* the taskloop reduction is complete when its construct ends */
    if (y != 2 + 3 * 4950) fail_int("taskloop reduction inside a taskgroup", y, 2 + 3 * 4950);
#pragma omp taskloop simd in_reduction(+: z) grainsize(g)
    for (int i = 0; i < 64; i++) z += 2;
#pragma omp task in_reduction(+: x)
    x += 1000000;
#pragma omp taskloop nogroup in_reduction(+: x) num_tasks(g)
    for (int i = 0; i < 10; i++) x += 10;
  }
  CHECK_EQ("taskloop in_reduction", x, 1 + 299 * 300 / 2 + 1000000 + 100);
  CHECK_EQ("taskloop reduction", y, 2 + 3 * 4950);
  CHECK_EQ("taskloop simd in_reduction", z, 128);
}

/* run-time length arrays: a whole VLA and a pointer section */
static void test_arrays(int n) {
  long vla[n];
  double *p = malloc(sizeof(double) * (size_t)(n + 2));
  for (int k = 0; k < n; k++) vla[k] = k;
  for (int k = 0; k < n + 2; k++) p[k] = -1.0;
#pragma omp taskgroup task_reduction(+: vla)
  {
    /* clang-19 keeps a run-time-length item's size in a thread_local that only its task
     * entries store, and its combiner (run by the thread ending the taskgroup) reads it: if
     * that thread ran none of the tasks, the combiner uses a stale size and drops elements.
     * An undeferred task on this thread stores the size first. */
#pragma omp task if (0) in_reduction(+: vla)
    vla[0] += 0;
    for (int t = 0; t < 32; t++) {
#pragma omp task in_reduction(+: vla) firstprivate(t)
      {
        for (int k = 0; k < n; k++) vla[k] += t * (k + 1);
      }
    }
  }
  for (int k = 0; k < n; k++) CHECK_EQ("task_reduction(+: vla)", vla[k], k + 496L * (k + 1));

#pragma omp taskgroup task_reduction(+: p[1:n])
  {
    /* the same clang-19 thread_local size: store it on this thread first */
#pragma omp task if (0) in_reduction(+: p[1:n])
    p[n] += 0.0; /* (mentions n: clang-19 crashes on an in_reduction section whose body does not) */
    for (int t = 0; t < 32; t++) {
#pragma omp task in_reduction(+: p[1:n]) firstprivate(t)
      {
        for (int k = 1; k <= n; k++) p[k] += 0.5 * k;
#pragma omp task in_reduction(+: p[1:n])
        p[n] += 1.0;
      }
    }
  }
  for (int k = 1; k <= n; k++) CHECK("task_reduction(+: p[1:n])", p[k] == -1.0 + 16.0 * k + (k == n ? 32.0 : 0.0));
  CHECK("task_reduction(+: p[1:n]) p[0] untouched", p[0] == -1.0);
  CHECK("task_reduction(+: p[1:n]) p[n+1] untouched", p[n + 1] == -1.0);
  free(p);
}

int main(int argc, char **argv) {
  (void)argv;
  int n = 37 + argc; /* a run-time length */
  for (int rep = 0; rep < 50; rep++) {
#pragma omp parallel
#pragma omp single
    {
      test_basic();
      test_udr();
      test_nested();
      test_spawned();
      test_taskloop(1 + rep % 7);
      test_arrays(n + rep % 5);
    }
    test_per_thread();
    test_parallel_task_modifier();
    test_for_task_modifier();
  }
  return failures != 0;
}
