// task_cancel_deps.c - cancel taskgroup among tasks with dependences (OMP_CANCELLATION=true).
// A cancelled task (discarded before it starts, or ended at its cancellation point) is
// complete, so its successors are released; the spec says no more than that, so only this is
// asserted:
//  * a DAG of NT sibling tasks in a taskgroup (each depend(in: obj[r]) depend(inout: obj[w]),
//    r and w from a fixed pseudo-random sequence), one of them (K, varied per round) cancels
//    the taskgroup. Every task records the sequence numbers of its start and of the end of its
//    work (before its only cancellation point). Checked: every task started at most once; K
//    ran and did not pass its cancel; for every pair p < s (creation order) that conflict on
//    an object (one writes it) and both started, p's work ended before s started (a successor
//    never starts before a predecessor, cancelled or not, completed); every transitive
//    successor of K that ran stopped at its cancellation point (it started after K completed,
//    so after the cancellation was activated); every transitive predecessor of K ran and
//    passed its cancellation point (it completed before K started: nothing was cancelled
//    yet); the taskgroup's end is reached (nothing waits forever for a discarded task)
//  * after the cancelled taskgroup, a new taskgroup with a chain on the same objects: every
//    task runs, in order, and passes its cancellation point (the old dependences are gone)
//  * levels: task A depend(out: x) in an outer taskgroup; an inner taskgroup holds B
//    depend(inout: x) (after A), C that cancels the inner taskgroup and D depend(in: y)
//    depend(inout: x) (after B and C, y written by C); after the inner end, E depend(inout: x)
//    in the outer taskgroup. A and E must run and pass (the outer taskgroup is not cancelled);
//    D, C's successor, must not pass; the order A < B < D < E holds for those that ran
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_CANCELLATION=true
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define NT 60
#define M 16
#define ROUNDS 40

static int obj[M], x, y;
static int rd[NT], wr[NT];
static atomic_int seq, runs[NT], passed[NT];
static int start_seq[NT], end_seq[NT];
static char succ_k[NT], pred_k[NT];

static void spin(int n) {
  for (volatile int i = 0; i < n; i++) {
  }
}

static void work(int i) {
  atomic_fetch_add(&runs[i], 1);
  start_seq[i] = atomic_fetch_add(&seq, 1) + 1;
  spin(2000 + 500 * (i % 7));
  end_seq[i] = atomic_fetch_add(&seq, 1) + 1;
}

static int conflict(int p, int s) {
  return wr[p] == wr[s] || wr[p] == rd[s] || rd[p] == wr[s];
}

static void reset(void) {
  atomic_store(&seq, 0);
  for (int i = 0; i < NT; i++) {
    atomic_store(&runs[i], 0), atomic_store(&passed[i], 0);
    start_seq[i] = end_seq[i] = 0;
  }
}

int main(void) {
  CHECK_EQ("omp_get_cancellation()", omp_get_cancellation(), 1);
  unsigned lcg = 12345;
  for (int i = 0; i < NT; i++) {
    lcg = lcg * 1103515245u + 12345u;
    rd[i] = (lcg >> 16) % M;
    lcg = lcg * 1103515245u + 12345u;
    wr[i] = (lcg >> 16) % M;
  }

  for (int round = 0; round < ROUNDS && !failures; round++) {
    const int K = 5 + (round * 13) % (NT - 10);
    /* the transitive successors and predecessors of K */
    memset(succ_k, 0, sizeof succ_k);
    memset(pred_k, 0, sizeof pred_k);
    succ_k[K] = pred_k[K] = 1;
    for (int s = K + 1; s < NT; s++)
      for (int p = K; p < s && !succ_k[s]; p++)
        if (succ_k[p] && conflict(p, s)) succ_k[s] = 1;
    for (int p = K - 1; p >= 0; p--)
      for (int s = p + 1; s <= K && !pred_k[p]; s++)
        if (pred_k[s] && conflict(p, s)) pred_k[p] = 1;
    succ_k[K] = pred_k[K] = 0;

    reset();
    int reached_end = 0, chain_runs = 0, chain_passed = 0, chain_order = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
      {
        for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i) depend(in : obj[rd[i]]) depend(inout : obj[wr[i]])
          {
            work(i);
            if (i == K) {
#pragma omp cancel taskgroup
            }
#pragma omp cancellation point taskgroup
            atomic_store(&passed[i], 1);
          }
        }
      }
      reached_end = 1;
      /* a new taskgroup on the same objects: nothing is cancelled there */
      int last = 0;
#pragma omp taskgroup
      {
        for (int i = 0; i < 2 * M; i++) {
#pragma omp task firstprivate(i) depend(inout : obj[i % M]) depend(inout : x) \
    shared(chain_runs, chain_passed, chain_order, last)
          {
            __atomic_fetch_add(&chain_runs, 1, __ATOMIC_RELAXED);
            if (last == i) chain_order++;
            last = i + 1;
#pragma omp cancellation point taskgroup
            __atomic_fetch_add(&chain_passed, 1, __ATOMIC_RELAXED);
          }
        }
      }
    }
    CHECK_EQ("the cancelled taskgroup's end was reached", reached_end, 1);
    int bad_runs = 0, bad_order = 0, succ_passed = 0, pred_not_passed = 0;
    for (int i = 0; i < NT; i++) {
      if (atomic_load(&runs[i]) > 1) bad_runs++;
      if (succ_k[i] && atomic_load(&passed[i])) succ_passed++;
      if (pred_k[i] && !(atomic_load(&runs[i]) == 1 && atomic_load(&passed[i]))) pred_not_passed++;
      for (int p = 0; p < i; p++)
        if (conflict(p, i) && start_seq[p] && start_seq[i] && !(end_seq[p] < start_seq[i])) {
          if (bad_order < 5)
            fprintf(stderr, "round %d (K %d): task %d started (seq %d) before its predecessor %d ended (seq %d)\n",
                    round, K, i, start_seq[i], p, end_seq[p]);
          bad_order++;
        }
    }
    CHECK_EQ("tasks that started more than once", bad_runs, 0);
    CHECK_EQ("the canceller ran once", atomic_load(&runs[K]), 1);
    CHECK_EQ("the canceller passed its cancel", atomic_load(&passed[K]), 0);
    CHECK_EQ("tasks that started before a conflicting earlier sibling's work ended", bad_order, 0);
    CHECK_EQ("successors of the canceller that passed their cancellation point", succ_passed, 0);
    CHECK_EQ("predecessors of the canceller that did not run to completion", pred_not_passed, 0);
    CHECK_EQ("next taskgroup: tasks run", chain_runs, 2 * M);
    CHECK_EQ("next taskgroup: tasks passed their cancellation point", chain_passed, 2 * M);
    CHECK_EQ("next taskgroup: tasks in creation order", chain_order, 2 * M);
  }

  /* levels: an outer taskgroup whose tasks surround a cancelled inner one */
  enum { A, B, C, D, E };
  for (int round = 0; round < ROUNDS && !failures; round++) {
    reset();
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
      {
#pragma omp task depend(out : x)
        {
          work(A);
          spin(20000);
#pragma omp cancellation point taskgroup
          atomic_store(&passed[A], 1);
        }
#pragma omp taskgroup
        {
#pragma omp task depend(inout : x)
          {
            work(B);
#pragma omp cancellation point taskgroup
            atomic_store(&passed[B], 1);
          }
#pragma omp task depend(out : y)
          {
            work(C);
#pragma omp cancel taskgroup
            atomic_store(&passed[C], 1);
          }
#pragma omp task depend(in : y) depend(inout : x)
          {
            work(D);
#pragma omp cancellation point taskgroup
            atomic_store(&passed[D], 1);
          }
        }
#pragma omp task depend(inout : x)
        {
          work(E);
#pragma omp cancellation point taskgroup
          atomic_store(&passed[E], 1);
        }
      }
    }
    CHECK_EQ("levels: A (outer taskgroup) ran", atomic_load(&runs[A]), 1);
    CHECK_EQ("levels: A passed its cancellation point", atomic_load(&passed[A]), 1);
    CHECK_EQ("levels: C (the canceller) ran", atomic_load(&runs[C]), 1);
    CHECK_EQ("levels: C passed its cancel", atomic_load(&passed[C]), 0);
    CHECK_EQ("levels: D (C's successor) passed its cancellation point", atomic_load(&passed[D]), 0);
    CHECK_EQ("levels: E (outer, after the inner taskgroup) ran", atomic_load(&runs[E]), 1);
    CHECK_EQ("levels: E passed its cancellation point", atomic_load(&passed[E]), 1);
    CHECK("levels: B ran at most once", atomic_load(&runs[B]) <= 1);
    CHECK("levels: D ran at most once", atomic_load(&runs[D]) <= 1);
    CHECK("levels: A's work ended before E started", end_seq[A] < start_seq[E]);
    if (start_seq[B]) {
      CHECK("levels: A's work ended before B started", end_seq[A] < start_seq[B]);
      CHECK("levels: B's work ended before E started", end_seq[B] < start_seq[E]);
    }
    if (start_seq[D]) {
      CHECK("levels: A's work ended before D started", end_seq[A] < start_seq[D]);
      CHECK("levels: C's work ended before D started", end_seq[C] < start_seq[D]);
      CHECK("levels: D's work ended before E started", end_seq[D] < start_seq[E]);
      if (start_seq[B]) CHECK("levels: B's work ended before D started", end_seq[B] < start_seq[D]);
    }
  }
  return failures != 0;
}
