// task_detach_if0_deps.c - an undeferred detachable task with dependences
// (`task if(0) detach(ev) depend(...)`: clang emits __kmpc_task_allow_completion_event, a
// __kmpc_omp_taskwait_deps_51 for the dependences, then __kmpc_omp_task_begin_if0) completes
// only when its event is fulfilled, after its body: a later sibling that depends on it must
// not start before the fulfilment, whichever thread could run it. Checked for depend(out) ->
// depend(in), depend(inout) -> depend(inout) and depend(in) -> depend(out) (and the task's
// own predecessor: the if(0) task waits for it). Also: a plain `taskwait depend` between
// event and submission of a deferred detachable task, and after the if(0) task, leaves the
// dependences alone (no hang, right order).
// libomp 19 fails (reference=skip): its __kmpc_omp_task_begin_if0 never enters the task in the
// dependence map, so the dependant runs as soon as the if(0) task's body has returned.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
// oxiomp-test: gcc-reference=skip
// (libgomp hangs on an undeferred task waiting for a detached one.)
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

static int ld(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void st(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

/* Scheduling points and time for a wrongly released dependant to run (it would see 0). */
static void give_others_a_chance(void) {
  for (int k = 0; k < 200; k++) {
#pragma omp taskyield
    sched_yield();
  }
}

/* The if(0) detachable task with dependence KIND1 on x (it notes whether its own predecessor
 * ran), then a sibling with KIND2 on x (it notes whether the event was fulfilled). */
#define PRAGMA(text) _Pragma(#text)
#define DETACHED_THEN_DEPENDANT(KIND1, KIND2)                                  \
  PRAGMA(omp task if (0) detach(ev) depend(KIND1 : x) shared(saw_pred, pred_done)) \
  saw_pred = ld(&pred_done);                                                   \
  PRAGMA(omp task depend(KIND2 : x) shared(saw, fulfilled))                    \
  saw = ld(&fulfilled);

static void scenario(int kind) {
  int x = 0, fulfilled = 0, saw = -1, pred_done = 0, saw_pred = -1;
  omp_event_handle_t ev = (omp_event_handle_t)0;
  /* A predecessor of the if(0) task itself. */
#pragma omp task depend(inout : x) shared(pred_done)
  st(&pred_done, 1);
  switch (kind) {
  case 0:
    DETACHED_THEN_DEPENDANT(out, in)
    break;
  case 1:
    DETACHED_THEN_DEPENDANT(inout, inout)
    break;
  default:
    DETACHED_THEN_DEPENDANT(in, out)
    break;
  }
  CHECK_EQ("the if(0) task ran after its own predecessor", saw_pred, 1);
  give_others_a_chance();
  CHECK_EQ("the dependant did not start before the fulfilment", ld(&saw), -1);
  st(&fulfilled, 1);
  omp_fulfill_event(ev);
#pragma omp taskwait
  CHECK_EQ("the dependant ran after the fulfilment", saw, 1);
}

/* A deferred detachable task whose event is fulfilled by a later task, with a taskwait
 * depend on another item in between: nothing of that wait sticks to any task. */
static void deferred_then_wait(void) {
  int x = 0, y = 0, order = 0, saw = -1;
  omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task depend(out : y) shared(y)
  y = 1;
#pragma omp task detach(ev) depend(out : x) shared(x)
  x = 1;
#pragma omp taskwait depend(in : y)
  CHECK_EQ("taskwait depend waited for y's writer", ld(&y), 1);
#pragma omp task depend(in : x) shared(x, saw, order)
  saw = ld(&order);
  give_others_a_chance();
  st(&order, 1);
  omp_fulfill_event(ev);
#pragma omp taskwait
  CHECK_EQ("x's reader ran after the fulfilment", saw, 1);
}

int main(void) {
#pragma omp parallel
#pragma omp single
  {
    for (int rep = 0; rep < 20; rep++)
      for (int kind = 0; kind < 3; kind++) scenario(kind);
    for (int rep = 0; rep < 20; rep++) deferred_then_wait();
  }
  if (failures) return 1;
  printf("task_detach_if0_deps: ok\n");
  return 0;
}
