// task_basic.c - explicit tasks: creation, execution, data environment
// (__kmpc_omp_task_alloc, __kmpc_omp_task, __kmpc_omp_taskwait,
// __kmpc_omp_task_begin_if0 / _complete_if0, omp_in_final, omp_in_explicit_task):
//  * recursive fib(n) with a task per call and taskwait, compared with the
//    sequential value; the tasks use final(depth == K): tasks created at depth
//    K are final through the clause, their descendants (created with the clause
//    false) are final because their parent is, so omp_in_final() is 1 exactly in
//    the tasks at depth > K and 0 above; one of the two tasks is mergeable;
//    inside a final task a child task is included (runs at once on the
//    encountering thread), so its result is visible right after the construct
//  * recursive fib(n) with `if(n > FIB_CUTOFF)` on its tasks: the right value, and the
//    tasks made with the clause false are undeferred (their result is visible right after
//    the construct, before the taskwait)
//  * omp_in_final() / omp_in_explicit_task() are 0 in the implicit task (inside
//    and outside a parallel region) and omp_in_explicit_task() is 1 in every
//    explicit task (deferred, final/included, if(0), mergeable)
//  * if(0) tasks are undeferred: the encountering task waits for the whole body
//    (which itself creates and waits for a deferred child), so the values it
//    wrote are visible right after the construct; an if(0) task is not final;
//    if(expr) with a run-time expression; `if(0) mergeable`
//  * final(1) task: its children, created without taskwait, are included and
//    have completed when the construct returns
//  * every thread of the team creates NPER tasks: each runs exactly once
//  * one producer (single) creates many tasks: each runs exactly once
//  * firstprivate of an array and a struct (snapshot at creation, later changes
//    by the producer are not seen, changes by the task stay private), implicit
//    firstprivate of a variable private to the implicit task, shared variables
//    written by tasks and read after taskwait
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: omp_in_explicit_task (OpenMP 5.2), which gcc 12's libgomp lacks
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPS 30
#define FIB_N 18
#define FINAL_K 4 /* tasks created at depth FINAL_K are final through the clause */

static int bad_final, bad_explicit, bad_included;

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

/* called in a task at `depth` (the implicit task is depth 0) */
static void check_task_state(int depth) {
  if (omp_in_final() != (depth > FINAL_K)) __atomic_fetch_add(&bad_final, 1, __ATOMIC_RELAXED);
  if (omp_in_explicit_task() != 1) __atomic_fetch_add(&bad_explicit, 1, __ATOMIC_RELAXED);
}

static long fib_task(int n, int depth) {
  if (n < 2) return n;
  long a = -1, b = -1;
  int in_final = omp_in_final();
#pragma omp task shared(a) final(depth == FINAL_K) mergeable
  {
    check_task_state(depth + 1);
    a = fib_task(n - 1, depth + 1);
  }
  /* in a final task the child task is included: complete already */
  if (in_final && a == -1) __atomic_fetch_add(&bad_included, 1, __ATOMIC_RELAXED);
#pragma omp task shared(b) final(depth == FINAL_K)
  {
    check_task_state(depth + 1);
    b = fib_task(n - 2, depth + 1);
  }
  if (in_final && b == -1) __atomic_fetch_add(&bad_included, 1, __ATOMIC_RELAXED);
#pragma omp taskwait
  return a + b;
}

/* fib with if(n > FIB_CUTOFF): the calls at n <= FIB_CUTOFF make undeferred tasks */
#define FIB_CUTOFF 10
static int bad_undeferred;

static long fib_if(int n) {
  if (n < 2) return n;
  long a = -1, b = -1;
#pragma omp task shared(a) if (n > FIB_CUTOFF)
  a = fib_if(n - 1);
  if (n <= FIB_CUTOFF && a == -1) __atomic_fetch_add(&bad_undeferred, 1, __ATOMIC_RELAXED);
#pragma omp task shared(b) if (n > FIB_CUTOFF)
  b = fib_if(n - 2);
  if (n <= FIB_CUTOFF && b == -1) __atomic_fetch_add(&bad_undeferred, 1, __ATOMIC_RELAXED);
#pragma omp taskwait
  return a + b;
}

#define NPER 100
#define MAXT 64
static int per_thread_hits[MAXT * NPER];

#define NSINGLE 2000
static int single_hits[NSINGLE];

struct rec {
  int a[12];
  double d;
  char name[20];
};

#define NFP 200
static long fp_result[NFP];

static long expected_fp(int r) {
  long s = 0;
  for (int k = 0; k < 16; k++) s += r * 100 + k;
  for (int k = 0; k < 12; k++) s += r * 7 + k;
  s += (long)((r + 0.5) * 2);
  s += 'T' + r % 10;
  return s;
}

int main(void) {
  long fib_expected = fib_seq(FIB_N);

  /* implicit task queries, outside any parallel region */
  CHECK_EQ("omp_in_final() in the initial implicit task", omp_in_final(), 0);
  CHECK_EQ("omp_in_explicit_task() in the initial implicit task", omp_in_explicit_task(), 0);

  /* fib with final/mergeable tasks */
  for (int rep = 0; rep < REPS; rep++) {
    long result = -1;
    int bad_implicit = 0;
#pragma omp parallel shared(result, bad_implicit)
    {
      if (omp_in_final() != 0 || omp_in_explicit_task() != 0)
        __atomic_fetch_add(&bad_implicit, 1, __ATOMIC_RELAXED);
#pragma omp single
      result = fib_task(FIB_N, 0);
    }
    CHECK_EQ("fib with tasks", result, fib_expected);
    CHECK_EQ("omp_in_final()/omp_in_explicit_task() != 0 in an implicit task", bad_implicit, 0);
    CHECK_EQ("omp_in_final() wrong in a task (must be depth > K)", bad_final, 0);
    CHECK_EQ("omp_in_explicit_task() != 1 in a task", bad_explicit, 0);
    CHECK_EQ("child of a final task not complete right after its construct", bad_included, 0);
    if (failures) break;
  }

  /* fib with if(n > cutoff) */
  for (int rep = 0; rep < REPS; rep++) {
    long result = -1;
#pragma omp parallel shared(result)
#pragma omp single
    result = fib_if(FIB_N);
    CHECK_EQ("fib with tasks if(n > cutoff)", result, fib_expected);
    CHECK_EQ("fib if(n > cutoff): an if(false) task's result not visible right after its construct",
             bad_undeferred, 0);
    if (failures) break;
  }

  /* if(0): undeferred, body complete when the construct returns */
  for (int rep = 0; rep < REPS; rep++) {
    int bad_value = 0, bad_state = 0, runs = 0;
#pragma omp parallel shared(bad_value, bad_state, runs)
    {
      int me = omp_get_thread_num();
      for (int k = 0; k < 10; k++) {
        int x = -1, child = -1, st_final = -1, st_expl = -1;
#pragma omp task if (0) shared(x, child, st_final, st_expl) firstprivate(me, k)
        {
          st_final = omp_in_final();
          st_expl = omp_in_explicit_task();
          /* a deferred child of the undeferred task, waited for by it */
#pragma omp task shared(child) firstprivate(me, k)
          child = me * 1000 + k;
#pragma omp taskwait
          x = child + 1;
        }
        /* no taskwait: the undeferred task has completed */
        if (x != me * 1000 + k + 1) __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
        if (st_final != 0 || st_expl != 1) __atomic_fetch_add(&bad_state, 1, __ATOMIC_RELAXED);
        /* if(expr) evaluated at run time: deferred on odd k, undeferred on even k */
        int y = -1;
#pragma omp task if (k % 2) shared(y) firstprivate(k)
        y = k;
        if (k % 2 == 0 && y != k) __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
#pragma omp taskwait
        if (y != k) __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
        /* if(0) mergeable */
        int z = -1;
#pragma omp task if (0) mergeable shared(z) firstprivate(k)
        z = 2 * k;
        if (z != 2 * k) __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&runs, 1, __ATOMIC_RELAXED);
      }
    }
    CHECK("if(0) tasks ran", runs >= 10);
    CHECK_EQ("if(0)/if(expr) task result not visible right after the construct", bad_value, 0);
    CHECK_EQ("if(0) task: omp_in_final() != 0 or omp_in_explicit_task() != 1", bad_state, 0);
    if (failures) break;
  }

  /* final(1): children are included */
  for (int rep = 0; rep < REPS; rep++) {
    int bad = 0, state_bad = 0;
#pragma omp parallel shared(bad, state_bad)
    {
#pragma omp single
      {
        int c[8];
        for (int k = 0; k < 8; k++) c[k] = -1;
#pragma omp task final(1) shared(c, bad, state_bad)
        {
          if (omp_in_final() != 1) __atomic_fetch_add(&state_bad, 1, __ATOMIC_RELAXED);
          for (int k = 0; k < 8; k++) {
#pragma omp task shared(c, state_bad) firstprivate(k)
            {
              if (omp_in_final() != 1 || omp_in_explicit_task() != 1)
                __atomic_fetch_add(&state_bad, 1, __ATOMIC_RELAXED);
              c[k] = k * k;
            }
            if (c[k] != k * k) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
          }
        }
#pragma omp taskwait
        for (int k = 0; k < 8; k++)
          if (c[k] != k * k) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      }
    }
    CHECK_EQ("final(1) task: child results not visible right after their constructs", bad, 0);
    CHECK_EQ("final(1) task or its child: omp_in_final() != 1", state_bad, 0);
    if (failures) break;
  }

  /* every thread creates NPER tasks */
  for (int rep = 0; rep < REPS; rep++) {
    int nth = 0, bad_expl = 0;
    memset(per_thread_hits, 0, sizeof per_thread_hits);
#pragma omp parallel shared(nth, bad_expl)
    {
      int me = omp_get_thread_num();
#pragma omp single
      nth = omp_get_num_threads();
      if (me < MAXT) {
        for (int i = 0; i < NPER; i++) {
#pragma omp task firstprivate(me, i)
          {
            if (omp_in_explicit_task() != 1) __atomic_fetch_add(&bad_expl, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&per_thread_hits[me * NPER + i], 1, __ATOMIC_RELAXED);
          }
        }
      }
    }
    int wrong = 0, limit = nth < MAXT ? nth : MAXT;
    for (int t = 0; t < MAXT; t++)
      for (int i = 0; i < NPER; i++) wrong += per_thread_hits[t * NPER + i] != (t < limit ? 1 : 0);
    CHECK_EQ("tasks from every thread: tasks not run exactly once", wrong, 0);
    CHECK_EQ("omp_in_explicit_task() != 1 in a task", bad_expl, 0);
    if (failures) break;
  }

  /* a single producer, the other threads execute */
  for (int rep = 0; rep < REPS; rep++) {
    memset(single_hits, 0, sizeof single_hits);
#pragma omp parallel
    {
#pragma omp single nowait
      for (int i = 0; i < NSINGLE; i++) {
#pragma omp task firstprivate(i)
        __atomic_fetch_add(&single_hits[i], 1, __ATOMIC_RELAXED);
      }
    }
    int wrong = 0;
    for (int i = 0; i < NSINGLE; i++) wrong += single_hits[i] != 1;
    CHECK_EQ("single producer: tasks not run exactly once", wrong, 0);
    if (failures) break;
  }

  /* firstprivate array / struct, implicit firstprivate, shared */
  for (int rep = 0; rep < REPS; rep++) {
    int bad_snapshot = 0, shared_count = 0, bad_implicit_fp = 0;
    long shared_sum = 0;
    memset(fp_result, 0, sizeof fp_result);
#pragma omp parallel shared(bad_snapshot, shared_count, shared_sum, bad_implicit_fp)
    {
      /* private to each implicit task: implicitly firstprivate in the tasks */
      int mine = omp_get_thread_num() * 31 + 7;
      int mine_at_creation = mine;
#pragma omp task
      {
        if (mine != mine_at_creation) __atomic_fetch_add(&bad_implicit_fp, 1, __ATOMIC_RELAXED);
        mine = -5; /* the task's own copy */
      }
      mine = -1; /* not seen by the task */
#pragma omp taskwait
      if (mine != -1) __atomic_fetch_add(&bad_implicit_fp, 1, __ATOMIC_RELAXED);

#pragma omp single
      {
        int arr[16];
        struct rec s;
        for (int r = 0; r < NFP; r++) {
          for (int k = 0; k < 16; k++) arr[k] = r * 100 + k;
          for (int k = 0; k < 12; k++) s.a[k] = r * 7 + k;
          s.d = r + 0.5;
          snprintf(s.name, sizeof s.name, "T%d", r % 10);
#pragma omp task firstprivate(arr, s, r) shared(shared_count, shared_sum, bad_snapshot)
          {
            long sum = 0;
            for (int k = 0; k < 16; k++) sum += arr[k];
            for (int k = 0; k < 12; k++) sum += s.a[k];
            sum += (long)(s.d * 2);
            sum += s.name[0] + (s.name[1] - '0');
            if (s.name[2] != 0) __atomic_fetch_add(&bad_snapshot, 1, __ATOMIC_RELAXED);
            fp_result[r] = sum;
            /* modify the private copies: no effect on anyone else */
            for (int k = 0; k < 16; k++) arr[k] = -1;
            s.d = -1;
            __atomic_fetch_add(&shared_count, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&shared_sum, r, __ATOMIC_RELAXED);
          }
          /* the producer overwrites its arrays: the task keeps its snapshot */
          for (int k = 0; k < 16; k++) arr[k] = -7;
          memset(&s, 0x55, sizeof s);
        }
#pragma omp taskwait
        if (shared_count != NFP) __atomic_fetch_add(&bad_snapshot, 1000, __ATOMIC_RELAXED);
      }
    }
    int wrong = 0;
    for (int r = 0; r < NFP; r++) wrong += fp_result[r] != expected_fp(r);
    CHECK_EQ("firstprivate array/struct: wrong task results", wrong, 0);
    CHECK_EQ("firstprivate array/struct: bad snapshot / shared count after taskwait", bad_snapshot, 0);
    CHECK_EQ("shared counter written by tasks", shared_count, NFP);
    CHECK_EQ("shared sum written by tasks", shared_sum, (long)NFP * (NFP - 1) / 2);
    CHECK_EQ("implicit firstprivate of an implicit-task private", bad_implicit_fp, 0);
    if (failures) break;
  }

  if (failures) {
    fprintf(stderr, "task_basic: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_basic\n");
  return 0;
}
