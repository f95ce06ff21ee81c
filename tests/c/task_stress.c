// task_stress.c - random task trees with random dependences, a fixed amount of work (ROUNDS
// rounds, a fixed seed each): roots (the thread in `single`, or up to four implicit tasks at
// once) create children; a child may create children of its own (up to depth 3), with
// dependences among siblings on a handful of addresses shared by every parent (in, out, inout,
// mutexinoutset, inoutset, out: omp_all_memory; plain clauses, iterator clauses, some
// `task if(0)`), some `taskwait depend(...)` between creations, and then waits for its
// children with taskwait, with a taskgroup around the creations, or not at all. Checks:
//  * every created task runs exactly once, and all have finished when the region ends
//  * every task starts only after its predecessors (computed by its parent at creation, from
//    the sequential semantics of the dependence types) have finished
//  * siblings with conflicting accesses to one address never run at the same time (occupancy
//    word per parent and address), mutexinoutset members included
//  * after taskwait every child has finished; after a taskgroup every descendant has;
//    after taskwait depend(...) the predecessors it names have
// Parents that do not wait for their children give them no mutexinoutset dependence (libomp 19
// loses such tasks, see task_deps_mtx_orphan.c).
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: omp_all_memory, which gcc 12 does not support
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ROUNDS 60
#define MAXTASKS 8000
#define NADDR 6
#define MAXKIDS 160
#include "dep_model.h"
#define MAXD 3
#define MAXDEPTH 3

enum { K_ALL = NKINDS };
enum { WAIT_NONE, WAIT_TASKWAIT, WAIT_TASKGROUP };

struct node {
  int parent, depth, undeferred;
  uint64_t seed;
  int ndeps, all;
  int addr[MAXD], kind[MAXD];
  int npred;
  int *pred;
  int ran, done, outstanding; /* outstanding: descendants not finished */
  uint64_t occ[NADDR];        /* as a parent: its children's accesses */
};

static struct node nodes[MAXTASKS];
static int next_id;
static char A[NADDR]; /* dependence addresses, shared by every parent */

static int ld(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

/* ---- occupancy: 16-bit fields in / inoutset / mutexinoutset / writer ---- */
static const uint64_t occ_unit[NKINDS] = {1ull, 1ull << 48, 1ull << 48, 1ull << 32, 1ull << 16};
static const uint64_t occ_mask[NKINDS] = {0xffffull, 0xffffull << 48, 0xffffull << 48, 0xffffull << 32,
                                          0xffffull << 16};
static void occ_enter(uint64_t *occ, int k) {
  uint64_t old = __atomic_fetch_add(occ, occ_unit[k], __ATOMIC_SEQ_CST);
  CHECK_EQ("siblings with conflicting accesses to one address at the same time", (old & ~occ_mask[k]) != 0, 0);
  if (k != K_IN && k != K_SET)
    CHECK_EQ("two writers / mutexinoutset siblings at once on one address", (old & occ_mask[k]) != 0, 0);
}
static void occ_leave(uint64_t *occ, int k) { __atomic_fetch_sub(occ, occ_unit[k], __ATOMIC_SEQ_CST); }

/* the sequential semantics per parent and address: dep_model.h */

static void run_node(int id);

static void body(int id) {
  struct node *n = &nodes[id];
  CHECK_EQ("task runs exactly once", __atomic_fetch_add(&n->ran, 1, __ATOMIC_SEQ_CST), 0);
  for (int i = 0; i < n->npred; i++) {
    int p = n->pred[i];
    if (!ld(&nodes[p].done) && ld(&failures) < 20)
      fprintf(stderr, "task %d (depth %d) started before its predecessor %d finished\n", id, n->depth, p);
    CHECK("task starts after its predecessors finished", ld(&nodes[p].done));
  }
  uint64_t *occ = nodes[n->parent].occ;
  if (n->all)
    for (int a = 0; a < NADDR; a++) occ_enter(&occ[a], K_INOUT);
  for (int d = 0; d < n->ndeps; d++) occ_enter(&occ[n->addr[d]], n->kind[d]);
  run_node(id);
  for (int d = 0; d < n->ndeps; d++) occ_leave(&occ[n->addr[d]], n->kind[d]);
  if (n->all)
    for (int a = 0; a < NADDR; a++) occ_leave(&occ[a], K_INOUT);
  __atomic_store_n(&n->done, 1, __ATOMIC_SEQ_CST);
  for (int p = n->parent; p >= 0; p = nodes[p].parent) __atomic_fetch_sub(&nodes[p].outstanding, 1, __ATOMIC_SEQ_CST);
}

static int new_node(int parent, uint64_t seed) {
  int id = __atomic_fetch_add(&next_id, 1, __ATOMIC_SEQ_CST);
  if (id >= MAXTASKS) return -1;
  struct node *n = &nodes[id];
  memset(n, 0, sizeof *n);
  n->parent = parent;
  n->depth = parent >= 0 ? nodes[parent].depth + 1 : 0;
  n->seed = seed;
  for (int p = parent; p >= 0; p = nodes[p].parent) __atomic_fetch_add(&nodes[p].outstanding, 1, __ATOMIC_SEQ_CST);
  return id;
}

static void create_child(int id, int form) {
  struct node *c = &nodes[id];
  if (c->all) {
    if (c->undeferred) {
#pragma omp task if (0) firstprivate(id) depend(out : omp_all_memory)
      body(id);
    } else {
#pragma omp task firstprivate(id) depend(out : omp_all_memory)
      body(id);
    }
    return;
  }
  if (form == 0 && c->ndeps == 1 && !c->undeferred) {
    char *p = &A[c->addr[0]];
    switch (c->kind[0]) {
    case K_IN:
#pragma omp task firstprivate(id) depend(in : p[0])
      body(id);
      break;
    case K_OUT:
#pragma omp task firstprivate(id) depend(out : p[0])
      body(id);
      break;
    case K_INOUT:
#pragma omp task firstprivate(id) depend(inout : p[0])
      body(id);
      break;
    case K_MTX:
#pragma omp task firstprivate(id) depend(mutexinoutset : p[0])
      body(id);
      break;
    case K_SET:
#pragma omp task firstprivate(id) depend(inoutset : p[0])
      body(id);
      break;
    }
    return;
  }
  int l[NKINDS][MAXD], nl[NKINDS] = {0, 0, 0, 0, 0};
  for (int d = 0; d < c->ndeps; d++) l[c->kind[d]][nl[c->kind[d]]++] = c->addr[d];
  int *li = l[K_IN], *lo = l[K_OUT], *lio = l[K_INOUT], *lm = l[K_MTX], *ls = l[K_SET];
  int ni = nl[K_IN], no = nl[K_OUT], nio = nl[K_INOUT], nm = nl[K_MTX], ns = nl[K_SET];
#define ITER_DEPS                                                                                       \
  depend(iterator(k = 0 : ni), in : A[li[k]]) depend(iterator(k = 0 : no), out : A[lo[k]])                \
      depend(iterator(k = 0 : nio), inout : A[lio[k]]) depend(iterator(k = 0 : nm), mutexinoutset : A[lm[k]]) \
          depend(iterator(k = 0 : ns), inoutset : A[ls[k]])
  if (c->undeferred) {
#pragma omp task if (0) firstprivate(id) ITER_DEPS
    body(id);
  } else {
#pragma omp task firstprivate(id) ITER_DEPS
    body(id);
  }
}

/* creates the children of task id (their dependences follow the sequential semantics kept
   in h[]), with a taskwait depend(...) now and then */
static void create_kids(int id, uint64_t *s, int nkids, int allow_mtx, int *kids, int *nk) {
  struct hist h[NADDR];
  int fav[NADDR];
  int preds[NADDR * (MAXKIDS + 1)];
  for (int a = 0; a < NADDR; a++) {
    h[a].kind = -1;
    h[a].ncur = h[a].nprev = 0;
    fav[a] = rnd(s, NKINDS);
  }
  for (int i = 0; i < nkids; i++) {
    int cid = new_node(id, rng_next(s));
    if (cid < 0) break;
    struct node *c = &nodes[cid];
    int np = 0;
    if (rnd(s, 60) == 0) {
      c->all = 1;
      for (int a = 0; a < NADDR; a++) np = hist_access(&h[a], K_INOUT, cid, preds, np, 1);
    } else {
      c->ndeps = rnd(s, 4) == 0 ? 0 : 1 + rnd(s, MAXD);
      np = pick_deps(s, c->ndeps, fav, allow_mtx, h, cid, c->addr, c->kind, preds, np);
    }
    c->undeferred = rnd(s, 16) == 0;
    c->npred = np;
    c->pred = np ? malloc(sizeof(int) * (size_t)np) : NULL;
    if (np) memcpy(c->pred, preds, sizeof(int) * (size_t)np);
    kids[(*nk)++] = cid;
    create_child(cid, rnd(s, 2));
    if (c->undeferred) CHECK_EQ("task if(0) finished before its creator went on", ld(&c->done), 1);
    if (rnd(s, 12) == 0) {
      int a = rnd(s, NADDR), out = rnd(s, 2);
      int tp[MAXKIDS + 1];
      int ntp = hist_access(&h[a], out ? K_INOUT : K_IN, -1, tp, 0, 0);
      char *p = &A[a];
      if (out) {
#pragma omp taskwait depend(inout : p[0])
      } else {
#pragma omp taskwait depend(in : p[0])
      }
      for (int j = 0; j < ntp; j++)
        CHECK("taskwait depend(...): the predecessors it names finished", ld(&nodes[tp[j]].done));
    }
  }
}

/* the task's own work: maybe create children, and wait for them in one of three ways */
static void run_node(int id) {
  struct node *n = &nodes[id];
  uint64_t s = n->seed;
  int nkids;
  if (n->depth == 0)
    nkids = MAXKIDS / 2 + rnd(&s, MAXKIDS / 2);
  else if (n->depth < MAXDEPTH && rnd(&s, 100) < (n->depth == 1 ? 25 : 15))
    nkids = 2 + rnd(&s, n->depth == 1 ? 20 : 8);
  else {
    if (rnd(&s, 8) == 0) sched_yield();
    return;
  }
  int wait = rnd(&s, 3);
  /* a root is an implicit task, which does not complete before the region's barrier, so
     mutexinoutset is fine there whatever the wait */
  int allow_mtx = n->depth == 0 || wait != WAIT_NONE;
  int kids[MAXKIDS], nk = 0;
  if (wait == WAIT_TASKGROUP) {
#pragma omp taskgroup
    create_kids(id, &s, nkids, allow_mtx, kids, &nk);
    CHECK_EQ("after a taskgroup every descendant finished", ld(&n->outstanding), 0);
  } else {
    create_kids(id, &s, nkids, allow_mtx, kids, &nk);
    if (wait == WAIT_TASKWAIT) {
#pragma omp taskwait
      for (int j = 0; j < nk; j++) CHECK("after taskwait every child finished", ld(&nodes[kids[j]].done));
    }
  }
}

int main(void) {
  for (int round = 0; round < ROUNDS; round++) {
    next_id = 0;
    int roots[4] = {-1, -1, -1, -1};
#pragma omp parallel shared(roots)
    {
      int me = omp_get_thread_num();
      if (round % 2 == 0) {
#pragma omp single
        {
          roots[0] = new_node(-1, 1000 + (uint64_t)round);
          run_node(roots[0]);
        }
      } else if (me < 4) {
        roots[me] = new_node(-1, 2000 + (uint64_t)round * 4 + (uint64_t)me);
        run_node(roots[me]);
      }
    }
    int created = next_id < MAXTASKS ? next_id : MAXTASKS, notrun = 0, notdone = 0;
    for (int i = 0; i < created; i++) {
      int is_root = 0;
      for (int r = 0; r < 4; r++) is_root |= roots[r] == i;
      if (!is_root) notrun += nodes[i].ran != 1;
      if (!is_root) notdone += nodes[i].done != 1;
      free(nodes[i].pred);
    }
    CHECK_EQ("tasks that did not run exactly once by the end of the region", notrun, 0);
    CHECK_EQ("tasks not finished by the end of the region", notdone, 0);
  }
  return failures != 0;
}
