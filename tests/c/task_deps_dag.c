// task_deps_dag.c - random task dependence graphs (fixed seeds, 200-400 sibling tasks over 4-8
// addresses, 1-3 dependences per task; __kmpc_omp_task_with_deps) checked against the
// sequential semantics of the depend clause:
//  * every address holds a 64-bit value; in tasks read it, out/inout tasks (and
//    depend(out: omp_all_memory), an inout on every address) read it and replace it by a
//    non-commutative function of (value, task id); inoutset and mutexinoutset tasks add their id
//    (commutative, so members of one inoutset / mutexinoutset group may run in any order); a
//    sequential replay in creation order gives the value each in/out/inout task must read and the
//    final values
//  * mutexinoutset members update with a plain load ... yield ... store, so two at once would
//    also lose an update; an occupancy word per address (readers / inoutset / mutexinoutset /
//    writers fields) checks that no conflicting tasks ever run at the same time
//  * every task runs exactly once
//  * dependences are given in every form clang emits: plain clauses, iterator(...) clauses
//    (zero-length ones included), depobj objects, and omp_all_memory
//  * creators: the thread in `single` (the region's closing barrier waits), an explicit task
//    (taskwait), three explicit tasks each building its own graph at once (returning before
//    their children complete, or ending with taskwait), and up to four implicit tasks building
//    their own graphs at once
//  * mutexinoutset is left out where the creating task returns before its children complete:
//    libomp 19 loses such tasks (task_deps_mtx_orphan.c)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: omp_all_memory, which gcc 12 does not support
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

enum { K_IN, K_OUT, K_INOUT, K_MTX, K_SET, NKINDS, K_ALL = NKINDS };
enum { FORM_ITER, FORM_PLAIN, FORM_DEPOBJ, FORM_ALL };
#define MAXT 400
#define MAXD 3
#define NADDR 8
#define NDAGS 4
#define REPS 25

struct tdesc {
  int form, ndeps, spin;
  int addr[MAXD], kind[MAXD];
  int lst[NKINDS][MAXD], nl[NKINDS]; /* per-kind address lists, for the iterator form */
  uint64_t exp[NADDR];               /* value an in/out/inout access must read, by address */
};

struct dag {
  int ntasks, naddr;
  struct tdesc t[MAXT];
  uint64_t val[NADDR];  /* the dependence addresses */
  uint64_t fin[NADDR];  /* expected final values */
  uint64_t occ[NADDR];  /* occupancy: 16-bit fields in / inoutset / mutexinoutset / writer */
  int ran[MAXT];
  omp_depend_t obj[NKINDS][NADDR];
};

static struct dag dags[NDAGS];

static uint64_t f_ord(uint64_t x, int id) { return x * 0x9E3779B97F4A7C15ull + (uint64_t)id; }
static uint64_t f_comm(uint64_t x, int id) { return x + (uint64_t)id * 0x1000003ull; }

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static int rnd(uint64_t *s, int n) { return (int)(rng_next(s) % (uint64_t)n); }

static void generate(struct dag *g, uint64_t seed, int allow_mtx) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
  g->naddr = 4 + rnd(&s, NADDR - 3);
  g->ntasks = 200 + rnd(&s, MAXT - 199);
  uint64_t v[NADDR];
  int fav[NADDR];
  for (int a = 0; a < NADDR; a++) {
    v[a] = g->val[a] = rng_next(&s);
    fav[a] = rnd(&s, NKINDS);
    g->occ[a] = 0;
  }
  memset(g->ran, 0, sizeof g->ran);
  for (int i = 0; i < g->ntasks; i++) {
    struct tdesc *t = &g->t[i];
    int id = i + 1;
    memset(t, 0, sizeof *t);
    t->spin = rnd(&s, 8) == 0 ? 1 + rnd(&s, 3) : 0;
    if (rnd(&s, 80) == 0) {
      t->form = FORM_ALL;
      for (int a = 0; a < g->naddr; a++) {
        t->exp[a] = v[a];
        v[a] = f_ord(v[a], id);
      }
      continue;
    }
    int r = rnd(&s, 3);
    t->form = r == 0 ? FORM_ITER : r == 1 ? FORM_PLAIN : FORM_DEPOBJ;
    t->ndeps = t->form == FORM_PLAIN ? 1 : 1 + rnd(&s, MAXD);
    for (int d = 0; d < t->ndeps; d++) {
      int a, dup;
      do {
        a = rnd(&s, g->naddr);
        dup = 0;
        for (int e = 0; e < d; e++) dup |= t->addr[e] == a;
      } while (dup);
      /* each address has a favoured kind that drifts, so groups of in / inoutset /
         mutexinoutset tasks form */
      if (rnd(&s, 5) == 0) fav[a] = rnd(&s, NKINDS);
      int k = rnd(&s, 10) < 7 ? fav[a] : rnd(&s, NKINDS);
      if (k == K_MTX && !allow_mtx) k = K_SET;
      t->addr[d] = a;
      t->kind[d] = k;
      t->lst[k][t->nl[k]++] = a;
      switch (k) {
      case K_IN: t->exp[a] = v[a]; break;
      case K_OUT:
      case K_INOUT: t->exp[a] = v[a]; v[a] = f_ord(v[a], id); break;
      default: v[a] = f_comm(v[a], id); break;
      }
    }
  }
  for (int a = 0; a < NADDR; a++) g->fin[a] = v[a];
}

static const uint64_t occ_unit[NKINDS] = {1ull, 1ull << 48, 1ull << 48, 1ull << 32, 1ull << 16};
static const uint64_t occ_mask[NKINDS] = {0xffffull, 0xffffull << 48, 0xffffull << 48, 0xffffull << 32,
                                          0xffffull << 16};

static void spin_a_little(int n) {
  for (int k = 0; k < n; k++) {
    for (volatile int j = 0; j < 200; j++) {
    }
    sched_yield();
  }
}

static void access_enter(struct dag *g, int a, int k) {
  uint64_t old = __atomic_fetch_add(&g->occ[a], occ_unit[k], __ATOMIC_SEQ_CST);
  uint64_t others = old & ~occ_mask[k];
  CHECK_EQ("conflicting tasks run at the same time on one address (other kinds)", others != 0, 0);
  if (k != K_IN && k != K_SET)
    CHECK_EQ("two writers / mutexinoutset members at once on one address", (old & occ_mask[k]) != 0, 0);
}
static void access_leave(struct dag *g, int a, int k) {
  __atomic_fetch_sub(&g->occ[a], occ_unit[k], __ATOMIC_SEQ_CST);
}

static void body(struct dag *g, int i) {
  struct tdesc *t = &g->t[i];
  int id = i + 1;
  CHECK_EQ("task runs exactly once", __atomic_fetch_add(&g->ran[i], 1, __ATOMIC_RELAXED), 0);
  if (t->form == FORM_ALL) {
    for (int a = 0; a < g->naddr; a++) access_enter(g, a, K_INOUT);
    for (int a = 0; a < g->naddr; a++) {
      uint64_t x = __atomic_load_n(&g->val[a], __ATOMIC_RELAXED);
      CHECK_EQ("value read by an out: omp_all_memory task", x, t->exp[a]);
      __atomic_store_n(&g->val[a], f_ord(x, id), __ATOMIC_RELAXED);
    }
    spin_a_little(t->spin);
    for (int a = 0; a < g->naddr; a++) access_leave(g, a, K_INOUT);
    return;
  }
  for (int d = 0; d < t->ndeps; d++) access_enter(g, t->addr[d], t->kind[d]);
  for (int d = 0; d < t->ndeps; d++) {
    int a = t->addr[d];
    uint64_t x;
    switch (t->kind[d]) {
    case K_IN:
      x = __atomic_load_n(&g->val[a], __ATOMIC_RELAXED);
      CHECK_EQ("value read by an in task", x, t->exp[a]);
      break;
    case K_OUT:
    case K_INOUT:
      x = __atomic_load_n(&g->val[a], __ATOMIC_RELAXED);
      CHECK_EQ("value read by an out/inout task", x, t->exp[a]);
      __atomic_store_n(&g->val[a], f_ord(x, id), __ATOMIC_RELAXED);
      break;
    case K_SET: __atomic_fetch_add(&g->val[a], f_comm(0, id), __ATOMIC_RELAXED); break;
    case K_MTX:
      /* not atomic on purpose: mutual exclusion must protect it */
      x = __atomic_load_n(&g->val[a], __ATOMIC_RELAXED);
      if (t->spin) sched_yield();
      __atomic_store_n(&g->val[a], f_comm(x, id), __ATOMIC_RELAXED);
      break;
    }
  }
  spin_a_little(t->spin);
  for (int d = 0; d < t->ndeps; d++) access_leave(g, t->addr[d], t->kind[d]);
}

static void create_task(struct dag *g, int i) {
  struct tdesc *t = &g->t[i];
  switch (t->form) {
  case FORM_ALL:
#pragma omp task firstprivate(g, i) depend(out : omp_all_memory)
    body(g, i);
    break;
  case FORM_ITER: {
    int *li = t->lst[K_IN], *lo = t->lst[K_OUT], *lio = t->lst[K_INOUT], *lm = t->lst[K_MTX], *ls = t->lst[K_SET];
    int ni = t->nl[K_IN], no = t->nl[K_OUT], nio = t->nl[K_INOUT], nm = t->nl[K_MTX], ns = t->nl[K_SET];
#pragma omp task firstprivate(g, i) depend(iterator(k = 0 : ni), in : g->val[li[k]])                   \
    depend(iterator(k = 0 : no), out : g->val[lo[k]]) depend(iterator(k = 0 : nio), inout : g->val[lio[k]]) \
    depend(iterator(k = 0 : nm), mutexinoutset : g->val[lm[k]])                                        \
    depend(iterator(k = 0 : ns), inoutset : g->val[ls[k]])
    body(g, i);
    break;
  }
  case FORM_PLAIN: {
    uint64_t *p = &g->val[t->addr[0]];
    switch (t->kind[0]) {
    case K_IN:
#pragma omp task firstprivate(g, i) depend(in : p[0])
      body(g, i);
      break;
    case K_OUT:
#pragma omp task firstprivate(g, i) depend(out : p[0])
      body(g, i);
      break;
    case K_INOUT:
#pragma omp task firstprivate(g, i) depend(inout : p[0])
      body(g, i);
      break;
    case K_MTX:
#pragma omp task firstprivate(g, i) depend(mutexinoutset : p[0])
      body(g, i);
      break;
    case K_SET:
#pragma omp task firstprivate(g, i) depend(inoutset : p[0])
      body(g, i);
      break;
    }
    break;
  }
  case FORM_DEPOBJ: {
    omp_depend_t o0 = g->obj[t->kind[0]][t->addr[0]];
    if (t->ndeps == 1) {
#pragma omp task firstprivate(g, i) depend(depobj : o0)
      body(g, i);
    } else if (t->ndeps == 2) {
      omp_depend_t o1 = g->obj[t->kind[1]][t->addr[1]];
#pragma omp task firstprivate(g, i) depend(depobj : o0, o1)
      body(g, i);
    } else {
      omp_depend_t o1 = g->obj[t->kind[1]][t->addr[1]], o2 = g->obj[t->kind[2]][t->addr[2]];
#pragma omp task firstprivate(g, i) depend(depobj : o0, o1, o2)
      body(g, i);
    }
    break;
  }
  }
}

static void create_all(struct dag *g) {
  for (int i = 0; i < g->ntasks; i++) create_task(g, i);
}

static void check_dag(struct dag *g, const char *how) {
  int notrun = 0;
  for (int i = 0; i < g->ntasks; i++) notrun += g->ran[i] != 1;
  if (notrun) fprintf(stderr, "%s:\n", how);
  CHECK_EQ("tasks that did not run exactly once", notrun, 0);
  for (int a = 0; a < g->naddr; a++) {
    if (g->val[a] != g->fin[a]) fprintf(stderr, "%s: address %d\n", how, a);
    CHECK_EQ("final value", g->val[a], g->fin[a]);
  }
}

int main(void) {
  for (int d = 0; d < NDAGS; d++) {
    struct dag *g = &dags[d];
    for (int a = 0; a < NADDR; a++) {
      uint64_t *p = &g->val[a];
#pragma omp depobj(g->obj[K_IN][a]) depend(in : p[0])
#pragma omp depobj(g->obj[K_OUT][a]) depend(out : p[0])
#pragma omp depobj(g->obj[K_INOUT][a]) depend(inout : p[0])
#pragma omp depobj(g->obj[K_MTX][a]) depend(mutexinoutset : p[0])
#pragma omp depobj(g->obj[K_SET][a]) depend(inoutset : p[0])
    }
  }

  for (int rep = 0; rep < REPS; rep++) {
    /* 1. one thread in single creates; the closing barrier waits */
    generate(&dags[0], rep * 16 + 1, 1);
#pragma omp parallel
#pragma omp single nowait
    create_all(&dags[0]);
    check_dag(&dags[0], "single creator");

    /* 2. an explicit task creates, then waits with taskwait */
    generate(&dags[0], rep * 16 + 2, 1);
#pragma omp parallel
#pragma omp single
    {
#pragma omp task
      {
        create_all(&dags[0]);
#pragma omp taskwait
        check_dag(&dags[0], "explicit task creator, after taskwait");
      }
    }
    check_dag(&dags[0], "explicit task creator");

    /* 3. three explicit tasks each build their own graph at once; they return at once, before
       their children complete (without mutexinoutset: see task_deps_mtx_orphan.c) */
    for (int d = 0; d < 3; d++) generate(&dags[d], rep * 16 + 3 + d, 0);
#pragma omp parallel
#pragma omp single
    for (int d = 0; d < 3; d++) {
#pragma omp task firstprivate(d)
      create_all(&dags[d]);
    }
    for (int d = 0; d < 3; d++) check_dag(&dags[d], "three explicit task creators, no wait");

    /* 3b. the same with every kind, each creator ending with taskwait */
    for (int d = 0; d < 3; d++) generate(&dags[d], rep * 16 + 12 + d, 1);
#pragma omp parallel
#pragma omp single
    for (int d = 0; d < 3; d++) {
#pragma omp task firstprivate(d)
      {
        create_all(&dags[d]);
#pragma omp taskwait
      }
    }
    for (int d = 0; d < 3; d++) check_dag(&dags[d], "three explicit task creators, taskwait");

    /* 4. up to four implicit tasks build their own graphs at once */
    for (int d = 0; d < NDAGS; d++) generate(&dags[d], rep * 16 + 6 + d, 1);
    int creators = 0;
#pragma omp parallel
    {
      int me = omp_get_thread_num();
#pragma omp single
      creators = omp_get_num_threads() < NDAGS ? omp_get_num_threads() : NDAGS;
      if (me < NDAGS) create_all(&dags[me]);
      if (me == 0) {
#pragma omp taskwait
        check_dag(&dags[0], "implicit task creator, after taskwait");
      }
    }
    for (int d = 0; d < creators; d++) check_dag(&dags[d], "implicit task creators");
  }

  for (int d = 0; d < NDAGS; d++)
    for (int k = 0; k < NKINDS; k++)
      for (int a = 0; a < NADDR; a++) {
#pragma omp depobj(dags[d].obj[k][a]) destroy
      }
  return failures != 0;
}
