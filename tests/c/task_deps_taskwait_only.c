// task_deps_taskwait_only.c - `taskwait depend(...)` and `task if(0) depend(...)`
// (__kmpc_omp_taskwait_deps_51) wait only for their own predecessors, not for other child
// tasks: an unrelated sibling (depend(out: y), and a second reader of x) is held back by a
// detached predecessor (detach(ev), __kmpc_task_allow_completion_event) whose event the
// encountering task fulfills only after the taskwait / if(0) task is done; waiting for them
// would never end (the run would time out). Checks also that the held-back tasks have not run
// before the fulfill, and run after it.
// oxiomp-test: threads=1,2,4,16
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

#define REPS 100

static void pause_a_little(void) {
  for (volatile int j = 0; j < 200; j++) {
  }
  sched_yield();
}
static int ld(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void st(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

static void scenario(int rep, int form) {
  int x = 0, y = 0, other_reader = 0, gate = 0, ran = 0;
  omp_event_handle_t ev = (omp_event_handle_t)0; /* set by detach(ev) */
#pragma omp task detach(ev) depend(out : gate)
  {
  }
  /* the predecessor the waits below need */
#pragma omp task depend(out : x) shared(x) firstprivate(rep)
  {
    pause_a_little();
    st(&x, rep + 1);
  }
  /* held back until the event is fulfilled: a writer of y, and a second reader of x (created
     after the writer of x, so it does not hold that writer back) */
#pragma omp task depend(in : gate) depend(out : y) shared(y)
  st(&y, 1);
#pragma omp task depend(in : gate) depend(in : x) shared(x, other_reader) firstprivate(rep)
  {
    CHECK_EQ("second reader of x sees the writer's value", ld(&x), rep + 1);
    st(&other_reader, 1);
  }
  if (form == 0) {
#pragma omp taskwait depend(in : x)
    ran = 1;
  } else {
#pragma omp task if (0) depend(in : x) shared(ran)
    ran = 1;
  }
  CHECK_EQ("taskwait / if(0) task ran", ran, 1);
  CHECK_EQ("taskwait depend(in: x) / task if(0) depend(in: x): writer of x finished", ld(&x), rep + 1);
  CHECK_EQ("task held back by an unfulfilled detached task did not run (out: y)", ld(&y), 0);
  CHECK_EQ("task held back by an unfulfilled detached task did not run (in: x)", ld(&other_reader), 0);
  omp_fulfill_event(ev);
#pragma omp taskwait depend(in : y)
  CHECK_EQ("after the fulfill, taskwait depend(in: y) waits for the writer of y", ld(&y), 1);
#pragma omp taskwait
  CHECK_EQ("after the fulfill, the second reader of x ran", ld(&other_reader), 1);
}

int main(void) {
  for (int rep = 0; rep < REPS; rep++) {
#pragma omp parallel
#pragma omp single
    {
      scenario(rep, rep % 2);
#pragma omp task
      scenario(rep, 1 - rep % 2);
    }
  }
  return failures != 0;
}
