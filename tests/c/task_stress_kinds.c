// task_stress_kinds.c - random task trees with tasks of every kind, a fixed amount of work
// (ROUNDS rounds) and a new seed each run (from the time and pid; STRESS_SEED=<n> repeats one:
// it is printed on stderr at start and in every failure line). Given the seed the trees are
// fixed: every task's clauses, dependences, children, taskloops and way of waiting come from its
// own generator, seeded by its parent's. The interleaving is not, nor therefore who fulfils an
// event, nor which tasks a cancellation discards (and a discarded task creates no children).
// Roots (the thread in `single`, or up to four implicit tasks at once) create children, which
// create children of their own (up to depth 3). A child is tied or untied (an untied one passes
// a `taskyield` in its own region between the two halves of its work), has priority(0..5),
// maybe final(1), and mergeable, if(0) or detach(ev), and dependences among its siblings on a
// handful of addresses (in, out, inout, mutexinoutset, inoutset, as iterators). Some creation
// steps are a taskloop (grainsize / num_tasks, with or without nogroup), some are followed by a
// `taskwait depend(...)`. A parent waits for its children with taskwait, a taskgroup (a third
// of them cancellable: some children run `cancel taskgroup` after their work) or not at all.
// An event is fulfilled by a fulfiller task the parent creates a few steps later, by whichever
// task pops it from a shared queue first, by the detached task itself, or by the parent: before
// it may block on an undeferred child, and in a cancellable set (a fulfiller may be discarded),
// the parent fulfils its events itself; before a taskwait depend or its end it creates the
// fulfillers not made yet and drains the queue up to its own events. So one thread suffices.
// Checks:
//  * every task body runs exactly once, every taskloop iteration once, all complete (body
//    done, event fulfilled) at the region end; in a cancelled taskgroup's task set at most
//    once, and a task that started completed its work (an untied one: after its taskyield too)
//  * a task starts only after its predecessors (computed by the parent from the sequential
//    semantics) completed: a detached predecessor's event fulfilled, not just its body ended
//    (in a cancellable set a predecessor may have been discarded: then it must never run)
//  * conflicting siblings never run at the same time (mutexinoutset members included)
//  * after taskwait every child and nogroup taskloop iteration completed, after a taskgroup
//    every descendant (in a cancelled group: every descendant that started), after taskwait
//    depend(...) the predecessors it names, after a taskloop without nogroup its iterations;
//    nothing starts after a wait that covers it has returned
//  * an untied task keeps its locals across its taskyield; omp_in_final() in final tasks and
//    the tasks they include
// Parents that do not wait give their children no mutexinoutset (libomp 19 loses them, see
// task_deps_mtx_orphan.c). A watchdog reports the seed if a run does not end in 90 s.
// libomp 19 fails this (so no reference run): it hangs with priorities and taskwait (as in
// task_priority_wait.c) and in a lock inside __kmpc_end_taskgroup with taskloops, aborts on
// untied if(0) tasks (assertion td_last_tied, kmp_tasking.cpp:1836), and, once a detachable
// task gave a 1-thread team a task queue, starts tied tasks inside their suspended tied sibling
// (mutexinoutset members overlap).
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_MAX_TASK_PRIORITY=5
// oxiomp-test: env=OMP_CANCELLATION=true
// oxiomp-test: reference=skip
// oxiomp-test: gcc=skip: the inoutset dependence kind, which gcc 12 does not parse
#include <omp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define ROUNDS 150
#define NADDR 5
#define MAXD 3
#define MAXDEPTH 3
#define MAXKIDS 64 /* a root's creation steps; depth 1: up to 13, depth 2: up to 7 */
#include "dep_model.h"
#define MAXTASKS (4 * (1 + MAXKIDS * (1 + 13 * (1 + 7))))
#define MAXITER 48

static unsigned long long seed0;
static int round_no, nthreads;
static long n_tasks, n_iters, n_cancelled, n_by[4]; /* totals for the last line; n_by: fulfilled by */
enum { BY_TASK, BY_QUEUE, BY_SELF, BY_PARENT };

/* every failure line names the seed and round */
#undef CHECK_EQ
static void fail_at(const char *what, long long got, long long exp, int id) {
  if (__atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST) < 50)
    fprintf(stderr, "FAIL: %s (got %lld, expected %lld; task %d) [STRESS_SEED=%llu round %d threads %d]\n", what, got,
            exp, id, seed0, round_no, nthreads);
}
#define CHECK_ID(what, got, exp, id)                                                                                   \
  do {                                                                                                                 \
    long long g_ = (long long)(got), e_ = (long long)(exp);                                                            \
    if (g_ != e_) fail_at(what, g_, e_, id);                                                                           \
  } while (0)
#define CHECK_EQ(what, got, exp) CHECK_ID(what, got, exp, -1)

enum { WAIT_NONE, WAIT_TASKWAIT, WAIT_TASKGROUP };
enum { F_SIBLING, F_QUEUE, F_SELF }; /* who fulfils a detached task's event (besides the parent) */

struct node {
  int parent, depth;
  uint64_t seed;
  /* clauses, chosen by the parent */
  int undeferred, untied, mergeable, fin, detach, cancels, prio, in_final, may_cancel;
  int ndeps, addr[MAXD], kind[MAXD], npred, *pred;
  /* detach */
  int fmode, fdue, fcreated, published, claimed;
  omp_event_handle_t ev;
  /* progress */
  int ran, cmpl, complete, early_pred;
  /* descendants and loop iterations: not complete (only those outside cancellable sets, which
     cannot be discarded) / started and not complete */
  int outstanding, running;
  /* as a parent */
  int wait, cancellable, cancel_hit, tw_closed, tg_closed;
  uint64_t occ[NADDR];
};

struct loop { int parent, n, base, nogroup, ended, may_cancel; }; /* may_cancel: in a cancellable set */

static struct node nodes[MAXTASKS];
static struct loop loops[MAXTASKS];
static int iters[MAXTASKS * MAXITER]; /* per iteration: +1 at start, +1 at end */
static int next_id, next_loop, next_iter;
static int evq[MAXTASKS], evq_head, evq_tail; /* queued events (node id + 1) */
static char A[NADDR];

static uint64_t mix(uint64_t x) { /* splitmix64: never 0 for the seeds used */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (x ^ (x >> 31)) | 1;
}
static int ld(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void st(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static void add(int *p, int v) { __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

/* ---- occupancy: 16-bit fields in / inoutset / mutexinoutset / writer (as task_stress.c) ---- */
static const uint64_t occ_unit[NKINDS] = {1ull, 1ull << 48, 1ull << 48, 1ull << 32, 1ull << 16};
static const uint64_t occ_mask[NKINDS] = {0xffffull, 0xffffull << 48, 0xffffull << 48, 0xffffull << 32,
                                          0xffffull << 16};
static void occ_enter(uint64_t *occ, int k, int id) {
  uint64_t old = __atomic_fetch_add(occ, occ_unit[k], __ATOMIC_SEQ_CST);
  CHECK_ID("siblings with conflicting accesses to one address at the same time", (old & ~occ_mask[k]) != 0, 0, id);
  if (k != K_IN && k != K_SET)
    CHECK_ID("two writers / mutexinoutset siblings at once on one address", (old & occ_mask[k]) != 0, 0, id);
}
static void occ_leave(uint64_t *occ, int k) { __atomic_fetch_sub(occ, occ_unit[k], __ATOMIC_SEQ_CST); }

/* the sequential semantics per parent and address: dep_model.h */

/* ---- completion: a body end, and for a detached task its fulfilment; the last one counts ---- */
static void complete_side(int id) {
  struct node *n = &nodes[id];
  if (__atomic_fetch_sub(&n->cmpl, 1, __ATOMIC_SEQ_CST) != 1) return;
  st(&n->complete, 1);
  for (int a = n->parent; a >= 0; a = nodes[a].parent) {
    if (!n->may_cancel) add(&nodes[a].outstanding, -1);
    add(&nodes[a].running, -1);
  }
}

static void fulfil_once(int d, int by) {
  struct node *n = &nodes[d];
  if (__atomic_exchange_n(&n->claimed, 1, __ATOMIC_SEQ_CST)) return;
  __atomic_fetch_add(&n_by[by], 1, __ATOMIC_RELAXED);
  CHECK_ID("event fulfilled after its handle was published", ld(&n->published), 1, d);
  complete_side(d); /* before the runtime may complete the task */
  omp_fulfill_event(n->ev);
}

static void pop_event(void) {
  int h = ld(&evq_head);
  if (h >= ld(&evq_tail)) return;
  int v = ld(&evq[h]);
  if (v && __atomic_compare_exchange_n(&evq_head, &h, h + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    fulfil_once(v - 1, BY_QUEUE);
}

/* nothing may start once a wait covering it has returned */
static void check_not_closed(int parent, int id) {
  CHECK_ID("task started after its parent's taskwait returned", ld(&nodes[parent].tw_closed), 0, id);
  for (int a = parent; a >= 0; a = nodes[a].parent)
    CHECK_ID("task started after the end of a taskgroup it belongs to", ld(&nodes[a].tg_closed), 0, id);
}

static void run_node(int id);

static long token(int id) { return (long)id * 7919 + (long)(nodes[id].seed & 0xffff); }

/* the first half of a task's work: checks at its start, its accesses entered */
static long begin(int id) {
  struct node *n = &nodes[id];
  CHECK_ID("task body runs at most once", __atomic_fetch_add(&n->ran, 1, __ATOMIC_SEQ_CST), 0, id);
  check_not_closed(n->parent, id);
  for (int i = 0; i < n->npred; i++) {
    int p = n->pred[i];
    if (ld(&nodes[p].complete)) continue;
    if (n->may_cancel && !ld(&nodes[p].ran)) { /* discarded, or a violation if it ever runs */
      __atomic_compare_exchange_n(&n->early_pred, &(int){-1}, p, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      continue;
    }
    if (ld(&failures) < 20)
      fprintf(stderr, "task %d (depth %d) started before its predecessor %d completed (ran %d, detach %d, fulfilled %d)\n",
              id, n->depth, p, ld(&nodes[p].ran), nodes[p].detach, ld(&nodes[p].claimed));
    CHECK_ID("task starts after its predecessors completed", 0, 1, id);
  }
  for (int a = n->parent; a >= 0; a = nodes[a].parent) add(&nodes[a].running, 1);
  if (!n->mergeable || nodes[n->parent].in_final)
    CHECK_ID("omp_in_final() in a (final or included) task", omp_in_final(), n->in_final, id);
  uint64_t *occ = nodes[n->parent].occ;
  for (int d = 0; d < n->ndeps; d++) occ_enter(&occ[n->addr[d]], n->kind[d], id);
  if (n->seed & 1) pop_event();
  return token(id);
}

/* the second half: the task's children, accesses left, completion */
static void finish(int id, long tok) {
  struct node *n = &nodes[id];
  CHECK_ID("a task's local kept across its taskyield", tok == token(id), 1, id);
  if (n->detach && n->fmode == F_SELF && ld(&n->published)) fulfil_once(id, BY_SELF);
  if (!n->untied && (n->seed & 6) == 0) {
#pragma omp taskyield
  }
  run_node(id);
  uint64_t *occ = nodes[n->parent].occ;
  for (int d = 0; d < n->ndeps; d++) occ_leave(&occ[n->addr[d]], n->kind[d]);
  complete_side(id);
}

static void iteration(int L, int i) {
  struct loop *l = &loops[L];
  int *it = &iters[l->base + i];
  CHECK_ID("taskloop iteration runs at most once", __atomic_fetch_add(it, 1, __ATOMIC_SEQ_CST), 0, l->parent);
  check_not_closed(l->parent, l->parent);
  if (!l->nogroup) CHECK_ID("taskloop iteration started after its taskloop ended", ld(&l->ended), 0, l->parent);
  for (int a = l->parent; a >= 0; a = nodes[a].parent) add(&nodes[a].running, 1);
  if ((i & 7) == 3) pop_event();
  if ((i & 15) == 5) {
#pragma omp taskyield
  }
  add(it, 1);
  for (int a = l->parent; a >= 0; a = nodes[a].parent) {
    if (!l->may_cancel) add(&nodes[a].outstanding, -1);
    add(&nodes[a].running, -1);
  }
}

/* whether loop L's iterations completed after a wait for them (in a cancellable set: each
   either completed or never started) */
static void check_loop_done(int L, const char *what) {
  struct loop *l = &loops[L];
  for (int i = 0; i < l->n; i++) {
    int v = ld(&iters[l->base + i]);
    if (v != 2 && !(v == 0 && l->may_cancel)) CHECK_ID(what, v, 2, l->parent);
  }
}

static int make_loop(int id, uint64_t *s, int may_cancel) {
  int L = __atomic_fetch_add(&next_loop, 1, __ATOMIC_SEQ_CST);
  struct loop *l = &loops[L];
  l->parent = id;
  l->n = rnd(s, MAXITER + 1);
  l->base = __atomic_fetch_add(&next_iter, l->n, __ATOMIC_SEQ_CST);
  l->nogroup = rnd(s, 2);
  l->ended = 0, l->may_cancel = may_cancel;
  memset(&iters[l->base], 0, sizeof(int) * (size_t)l->n);
  if (!may_cancel)
    for (int a = id; a >= 0; a = nodes[a].parent) add(&nodes[a].outstanding, l->n);
  int n = l->n, g = 1 + rnd(s, 8), nt = 1 + rnd(s, 8), pr = rnd(s, 6), fin = rnd(s, 8) == 0;
  switch (rnd(s, 2) + 2 * l->nogroup) {
  case 0:
#pragma omp taskloop grainsize(g) priority(pr) final(fin) firstprivate(L)
    for (int i = 0; i < n; i++) iteration(L, i);
    break;
  case 1:
#pragma omp taskloop num_tasks(nt) priority(pr) final(fin) firstprivate(L)
    for (int i = 0; i < n; i++) iteration(L, i);
    break;
  case 2:
#pragma omp taskloop grainsize(g) priority(pr) final(fin) firstprivate(L) nogroup
    for (int i = 0; i < n; i++) iteration(L, i);
    break;
  case 3:
#pragma omp taskloop num_tasks(nt) priority(pr) final(fin) firstprivate(L) nogroup
    for (int i = 0; i < n; i++) iteration(L, i);
    break;
  }
  if (!l->nogroup) {
    st(&l->ended, 1);
    check_loop_done(L, "after a taskloop without nogroup its iterations completed");
  }
  return L;
}

enum { V_TIED, V_UNTIED, V_TIED_MERGE, V_UNTIED_MERGE, V_TIED_DETACH, V_UNTIED_DETACH, V_CANCEL };

#define TASK_CLAUSES                                                                                                   \
  firstprivate(id) priority(pr) final(fin) depend(iterator(k = 0 : ni), in : A[li[k]])                                 \
      depend(iterator(k = 0 : no), out : A[lo[k]]) depend(iterator(k = 0 : nio), inout : A[lio[k]])                    \
          depend(iterator(k = 0 : nm), mutexinoutset : A[lm[k]]) depend(iterator(k = 0 : ns), inoutset : A[ls[k]])
#define TIED_BODY { long tok_ = begin(id); finish(id, tok_); }
/* the taskyield is a task scheduling point of the untied region itself (a new part for clang) */
#define UNTIED_BODY { long tok_ = begin(id); _Pragma("omp taskyield") finish(id, tok_); }

static void create_child(int id) {
  struct node *c = &nodes[id];
  int l[NKINDS][MAXD], nl[NKINDS] = {0, 0, 0, 0, 0};
  for (int d = 0; d < c->ndeps; d++) l[c->kind[d]][nl[c->kind[d]]++] = c->addr[d];
  int *li = l[K_IN], *lo = l[K_OUT], *lio = l[K_INOUT], *lm = l[K_MTX], *ls = l[K_SET];
  int ni = nl[K_IN], no = nl[K_OUT], nio = nl[K_INOUT], nm = nl[K_MTX], ns = nl[K_SET];
  int pr = c->prio, fin = c->fin, ifc = !c->undeferred;
  omp_event_handle_t ev = (omp_event_handle_t)0;
  int v = c->cancels ? V_CANCEL : c->detach ? V_TIED_DETACH + c->untied : c->mergeable ? V_TIED_MERGE + c->untied : c->untied;
  switch (v) {
  case V_TIED:
#pragma omp task if (ifc) TASK_CLAUSES
    TIED_BODY
    break;
  case V_UNTIED:
#pragma omp task untied if (ifc) TASK_CLAUSES
    UNTIED_BODY
    break;
  case V_TIED_MERGE:
#pragma omp task mergeable if (ifc) TASK_CLAUSES
    TIED_BODY
    break;
  case V_UNTIED_MERGE:
#pragma omp task untied mergeable if (ifc) TASK_CLAUSES
    UNTIED_BODY
    break;
  case V_TIED_DETACH:
#pragma omp task detach(ev) TASK_CLAUSES
    TIED_BODY
    break;
  case V_UNTIED_DETACH:
#pragma omp task untied detach(ev) TASK_CLAUSES
    UNTIED_BODY
    break;
  case V_CANCEL:
#pragma omp task TASK_CLAUSES
    {
      long tok_ = begin(id);
      finish(id, tok_);
      st(&nodes[nodes[id].parent].cancel_hit, 1);
#pragma omp cancel taskgroup
    }
    break;
  }
  if (c->detach) {
    c->ev = ev;
    st(&c->published, 1);
    if (c->fmode == F_QUEUE) {
      int t = __atomic_fetch_add(&evq_tail, 1, __ATOMIC_SEQ_CST);
      st(&evq[t], id + 1);
    }
  }
}

static void create_fulfiller(int d, int pr) {
  nodes[d].fcreated = 1;
#pragma omp task firstprivate(d) priority(pr)
  fulfil_once(d, BY_TASK);
}

/* the parent's detached children: at creation step `step`, fulfiller tasks that are due
   (FL_DUE); before the parent blocks in a taskwait depend or returns (FL_TASKS), fulfiller tasks
   for all sibling-mode ones, the queue drained (any events) up to its own, and self-mode ones
   that ran before their handle was published fulfilled here (the others will run, see it and
   fulfil); before it may block on an undeferred child, or in a cancellable set (a fulfiller or
   the task itself may be discarded), all fulfilled here (FL_HERE) */
enum { FL_DUE, FL_TASKS, FL_HERE };
static void flush_events(const int *det, int ndet, int how, int step) {
  for (int j = 0; j < ndet; j++) {
    struct node *d = &nodes[det[j]];
    if (how == FL_HERE || (how == FL_TASKS && d->fmode == F_SELF && ld(&d->ran)))
      fulfil_once(det[j], BY_PARENT);
    else if (d->fmode == F_SIBLING && !d->fcreated && (how == FL_TASKS || d->fdue <= step))
      create_fulfiller(det[j], (int)((d->seed >> 8) % 6));
    else if (how == FL_TASKS && d->fmode == F_QUEUE)
      while (!ld(&d->claimed)) pop_event();
  }
}

static int new_node(int parent, uint64_t seed) {
  int id = __atomic_fetch_add(&next_id, 1, __ATOMIC_SEQ_CST);
  struct node *n = &nodes[id];
  memset(n, 0, sizeof *n);
  n->parent = parent;
  n->depth = parent >= 0 ? nodes[parent].depth + 1 : 0;
  n->seed = seed;
  n->cmpl = 1;
  n->early_pred = -1;
  return id;
}

static void create_kids(int id, uint64_t *s, int nsteps, int allow_mtx, int *kids, int *nk, int *lps, int *nlp) {
  struct node *n = &nodes[id];
  struct hist h[NADDR];
  int fav[NADDR], preds[NADDR * (MAXKIDS + 1)], det[MAXKIDS], ndet = 0;
  int kid_may_cancel = n->may_cancel || (n->wait == WAIT_TASKGROUP && n->cancellable);
  for (int a = 0; a < NADDR; a++) {
    h[a].kind = -1;
    h[a].ncur = h[a].nprev = 0;
    fav[a] = rnd(s, NKINDS);
  }
  for (int i = 0; i < nsteps; i++) {
    flush_events(det, ndet, FL_DUE, i);
    if (rnd(s, 16) == 0) {
      lps[(*nlp)++] = make_loop(id, s, kid_may_cancel);
      continue;
    }
    int cid = new_node(id, rng_next(s));
    struct node *c = &nodes[cid];
    int np = 0;
    c->ndeps = rnd(s, 4) == 0 ? 0 : 1 + rnd(s, MAXD);
    np = pick_deps(s, c->ndeps, fav, allow_mtx, h, cid, c->addr, c->kind, preds, np);
    c->npred = np;
    c->pred = np ? malloc(sizeof(int) * (size_t)np) : NULL;
    if (np) memcpy(c->pred, preds, sizeof(int) * (size_t)np);
    c->may_cancel = kid_may_cancel;
    if (!kid_may_cancel)
      for (int a = id; a >= 0; a = nodes[a].parent) add(&nodes[a].outstanding, 1);
    c->prio = rnd(s, 6);
    c->fin = rnd(s, 12) == 0;
    c->in_final = c->fin || n->in_final;
    c->untied = rnd(s, 4) == 0;
    if (n->wait == WAIT_TASKGROUP && n->cancellable && rnd(s, 10) == 0) {
      c->cancels = 1;
      c->untied = 0;
    } else if (rnd(s, 6) == 0) {
      c->detach = 1;
      c->cmpl = 2;
      c->fmode = rnd(s, 3);
      c->fdue = i + 1 + rnd(s, 4);
    } else {
      c->mergeable = rnd(s, 5) == 0;
      c->undeferred = rnd(s, 12) == 0;
    }
    kids[(*nk)++] = cid;
    if (c->undeferred || n->in_final) flush_events(det, ndet, FL_HERE, i); /* the parent may block here */
    create_child(cid);
    if (c->detach) det[ndet++] = cid;
    if (c->undeferred && !(kid_may_cancel && !ld(&c->ran)))
      CHECK_ID("task if(0) finished its body before its creator went on", ld(&c->cmpl), 0, cid);
    if (rnd(s, 12) == 0) {
      int a = rnd(s, NADDR), out = rnd(s, 2), tp[MAXKIDS + 1];
      int ntp = hist_access(&h[a], out ? K_INOUT : K_IN, -1, tp, 0, 0);
      flush_events(det, ndet, kid_may_cancel ? FL_HERE : FL_TASKS, i);
      char *p = &A[a];
      if (out) {
#pragma omp taskwait depend(inout : p[0])
      } else {
#pragma omp taskwait depend(in : p[0])
      }
      for (int j = 0; j < ntp; j++)
        if (!(kid_may_cancel && !ld(&nodes[tp[j]].ran)))
          CHECK_ID("taskwait depend(...): the predecessors it names completed", ld(&nodes[tp[j]].complete), 1, tp[j]);
    }
  }
  flush_events(det, ndet, kid_may_cancel ? FL_HERE : FL_TASKS, nsteps);
}

static void run_node(int id) {
  struct node *n = &nodes[id];
  uint64_t s = n->seed;
  int nsteps;
  if (n->depth == 0)
    nsteps = MAXKIDS / 2 + rnd(&s, MAXKIDS / 2);
  else if (n->depth < MAXDEPTH && rnd(&s, 100) < (n->depth == 1 ? 30 : 20))
    nsteps = 2 + rnd(&s, n->depth == 1 ? 12 : 6);
  else
    return;
  int wait = rnd(&s, 3);
  n->wait = wait;
  n->cancellable = wait == WAIT_TASKGROUP && rnd(&s, 3) == 0;
  int allow_mtx = n->depth == 0 || wait != WAIT_NONE;
  int kids[MAXKIDS], nk = 0, lps[MAXKIDS], nlp = 0;
  if (wait == WAIT_TASKGROUP) {
#pragma omp taskgroup
    create_kids(id, &s, nsteps, allow_mtx, kids, &nk, lps, &nlp);
    st(&n->tg_closed, 1);
    CHECK_ID("after a taskgroup every descendant that started completed", ld(&n->running), 0, id);
    CHECK_ID("after a taskgroup every descendant completed", ld(&n->outstanding), 0, id);
  } else {
    create_kids(id, &s, nsteps, allow_mtx, kids, &nk, lps, &nlp);
    if (wait == WAIT_TASKWAIT) {
#pragma omp taskwait
      st(&n->tw_closed, 1);
      for (int j = 0; j < nk; j++)
        if (!(n->may_cancel && !ld(&nodes[kids[j]].ran)))
          CHECK_ID("after taskwait every child completed", ld(&nodes[kids[j]].complete), 1, kids[j]);
      for (int j = 0; j < nlp; j++)
        if (loops[lps[j]].nogroup) check_loop_done(lps[j], "after taskwait every nogroup taskloop iteration completed");
    }
  }
}

/* whether tasks created by p belong to a taskgroup that was cancelled */
static int cancelled_set(int p) {
  for (int a = p; a >= 0; a = nodes[a].parent)
    if (nodes[a].wait == WAIT_TASKGROUP && nodes[a].cancel_hit) return 1;
  return 0;
}

static char alarm_msg[160];
static void on_alarm(int sig) {
  (void)sig;
  (void)!write(2, alarm_msg, strlen(alarm_msg));
  _exit(3);
}

int main(void) {
  const char *e = getenv("STRESS_SEED");
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  seed0 = e && *e ? strtoull(e, NULL, 0)
                  : mix((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 16);
  fprintf(stderr, "task_stress_kinds: STRESS_SEED=%llu\n", seed0);
  snprintf(alarm_msg, sizeof alarm_msg, "FAIL: task_stress_kinds: no end after 90 s, a hang? [STRESS_SEED=%llu]\n", seed0);
  nthreads = omp_get_max_threads();
  signal(SIGALRM, on_alarm);
  alarm(90);
  for (int round = 0; round < ROUNDS; round++) {
    round_no = round;
    next_id = next_loop = next_iter = evq_head = evq_tail = 0;
    memset(evq, 0, sizeof evq);
    int roots[4] = {-1, -1, -1, -1};
#pragma omp parallel shared(roots)
    {
      int me = omp_get_thread_num();
      if (round % 2 == 0) {
#pragma omp single
        {
          roots[0] = new_node(-1, mix(seed0 + (uint64_t)round * 4));
          run_node(roots[0]);
        }
      } else if (me < 4) {
        roots[me] = new_node(-1, mix(seed0 + (uint64_t)round * 4 + (uint64_t)me));
        run_node(roots[me]);
      }
    }
    int created = next_id, bad = 0, badloop = 0;
    for (int i = 0; i < created; i++) {
      struct node *n = &nodes[i];
      if (n->parent >= 0) {
        int may = cancelled_set(n->parent);
        if (may ? n->complete != n->ran : n->ran != 1 || n->complete != 1) {
          if (bad++ < 5)
            fprintf(stderr, "task %d (depth %d, untied %d detach %d%s): ran %d times, complete %d\n", i, n->depth,
                    n->untied, n->detach, may ? ", cancelled set" : "", n->ran, n->complete);
        }
        if (n->early_pred >= 0)
          CHECK_ID("task started before a predecessor that ran later", nodes[n->early_pred].ran, 0, i);
        if (n->detach) CHECK_ID("every event fulfilled once", n->claimed, 1, i);
      }
      n_cancelled += n->cancel_hit;
      free(n->pred);
    }
    CHECK_EQ("tasks that did not run (at most, in a cancelled set) once and complete by the region end", bad, 0);
    for (int L = 0; L < next_loop; L++) {
      struct loop *l = &loops[L];
      int may = cancelled_set(l->parent);
      for (int i = 0; i < l->n; i++) badloop += !(iters[l->base + i] == 2 || (may && iters[l->base + i] == 0));
    }
    n_tasks += created;
    n_iters += next_iter;
    CHECK_EQ("taskloop iterations that did not run (at most, cancelled) once by the region end", badloop, 0);
  }
  fprintf(stderr,
          "task_stress_kinds: %ld tasks, %ld taskloop iterations, %ld cancelled taskgroups, events fulfilled by a "
          "sibling task %ld, from the queue %ld, by the task itself %ld, by the parent %ld\n",
          n_tasks, n_iters, n_cancelled, n_by[BY_TASK], n_by[BY_QUEUE], n_by[BY_SELF], n_by[BY_PARENT]);
  if (failures) fprintf(stderr, "task_stress_kinds: %d failures [STRESS_SEED=%llu]\n", failures, seed0);
  return failures != 0;
}
