// trace_task_constructs.c - run with OMP_OVNI=1 by tests/trace.rs in a team of 1 and of 2
// (OMP_NUM_THREADS). Every thread runs a sections construct (3 sections); then thread 0
// alone, in order:
//  1. a task if(0);
//  2. a taskgroup holding one task;
//  3. task D1 (depend out: x, detach) and task B1 (depend inout: x), a taskyield, D1's event
//     fulfilled (B1 becomes ready, queued), then taskwait depend(in: x), which runs B1;
//  4. task D2 (depend out: y, detach) and task T (depend in: y), a taskyield, D2's event
//     fulfilled (T queued), then a barrier, which runs T.
// In a team of 1 a task runs at once unless it waits for a dependence (a detached task's
// body runs at once, its completion waits for the event): the detached tasks are how T and B1
// end up queued. In a team of 2, thread 1 stays out of every task scheduling point until T
// has run (it waits for `t_ran`), so thread 0 runs every task. Waits are bounded (10 s).
#include <omp.h>
#include <sched.h>
#include <time.h>

static int x, y, t_ran, sections_run;

static int wait_for(int *flag) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 10) return 0;
    sched_yield();
  }
  return 1;
}

int main(void) {
  int ok = 1, ran = 0;
#pragma omp parallel shared(ok, ran)
  {
#pragma omp sections
    {
#pragma omp section
      __atomic_fetch_add(&sections_run, 1, __ATOMIC_RELAXED);
#pragma omp section
      __atomic_fetch_add(&sections_run, 1, __ATOMIC_RELAXED);
#pragma omp section
      __atomic_fetch_add(&sections_run, 1, __ATOMIC_RELAXED);
    }
    if (omp_get_thread_num() == 0) {
      omp_event_handle_t ev1, ev2;
      // 1.
#pragma omp task if(0) shared(ran)
      ran++;
      // 2.
#pragma omp taskgroup
      {
#pragma omp task shared(ran)
        ran++;
      }
      if (ran != 2) ok = 0;
      // 3.
#pragma omp task depend(out : x) detach(ev1)
      x = 1;
#pragma omp task depend(inout : x) shared(ok)
      {
        if (x != 1) ok = 0;
        x = 2;
      }
#pragma omp taskyield
      omp_fulfill_event(ev1);
#pragma omp taskwait depend(in : x)
      if (x != 2) ok = 0;
      // 4.
#pragma omp task depend(out : y) detach(ev2)
      y = 1;
#pragma omp task depend(in : y) shared(ok)
      {
        if (y != 1) ok = 0;
        __atomic_store_n(&t_ran, 1, __ATOMIC_RELEASE);
      }
#pragma omp taskyield
      omp_fulfill_event(ev2);
    } else if (!wait_for(&t_ran)) {
      ok = 0;
    }
#pragma omp barrier
  }
  return ok && t_ran && sections_run == 3 ? 0 : 1;
}
