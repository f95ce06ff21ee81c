// task_detach_release_elsewhere.c - a task made ready on a thread for another task's sake: a
// task P fulfils (itself, or through a child run at once) the event of a detached task D that
// is not its descendant, so D's successor S becomes ready on P's thread, while a child C1 of P
// became ready there just before (its predecessor C0, detached too, completed). P then waits
// in a taskwait, where it may start only its descendants: C1 must still be found (S used to go
// on top of the thread's deque, above C1, and a waiting thread stops at the first task on top
// it may not start: a team of one hung). Three forms, 200 rounds each: P runs at once and
// fulfils the events itself; P runs at once and a child of P fulfils them; P was made ready by
// an event and runs inside its parent's taskwait (S then descends from the waiting task, but
// not from P). Found by task_stress_kinds.c and a review.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: the gcc-built program crashes in omp_fulfill_event on libgomp alike (gcc 12's lowering of the detach events it shares into other tasks)
#include <omp.h>
#include <stdio.h>

#include "check.h"

#define ROUNDS 200

static void round_of(int form, int *s_ran, int *c1_ran) {
  int x = 0, y = 0, z = 0;
  int through_child = form == 1, in_taskwait = form == 2;
#pragma omp parallel shared(x, y, z)
#pragma omp single
  {
    omp_event_handle_t ev_d, ev_c0, ev_e0;
    if (in_taskwait) {
      // E0 holds P back until it is fulfilled below, before the taskwait that runs P.
#pragma omp task detach(ev_e0) depend(out : z)
      {}
    }
#pragma omp task detach(ev_d) depend(out : x)
    {}
#pragma omp task depend(in : x) shared(s_ran)
    __atomic_fetch_add(s_ran, 1, __ATOMIC_SEQ_CST);
#pragma omp task shared(c1_ran, ev_d, ev_c0, y) firstprivate(through_child) depend(in : z)
    {
#pragma omp task detach(ev_c0) depend(out : y)
      {}
#pragma omp task depend(in : y) shared(c1_ran)
      __atomic_fetch_add(c1_ran, 1, __ATOMIC_SEQ_CST);
      if (through_child) {
#pragma omp task shared(ev_d, ev_c0)
        {
          omp_fulfill_event(ev_c0);
          omp_fulfill_event(ev_d);
        }
      } else {
        omp_fulfill_event(ev_c0);
        omp_fulfill_event(ev_d);
      }
#pragma omp taskwait
    }
    if (in_taskwait) {
      omp_fulfill_event(ev_e0);
#pragma omp taskwait
    }
  }
}

int main(void) {
  const char *forms[3][2] = {
      {"fulfilled by P: the successor of D ran", "fulfilled by P: P's child C1 ran"},
      {"fulfilled by a child: the successor of D ran", "fulfilled by a child: P's child C1 ran"},
      {"P run in a taskwait: the successor of D ran", "P run in a taskwait: P's child C1 ran"},
  };
  for (int form = 0; form < 3; form++) {
    int s_ran = 0, c1_ran = 0;
    for (int r = 0; r < ROUNDS; r++) round_of(form, &s_ran, &c1_ran);
    CHECK_EQ(forms[form][0], s_ran, ROUNDS);
    CHECK_EQ(forms[form][1], c1_ran, ROUNDS);
  }
  if (failures) return 1;
  printf("ok task_detach_release_elsewhere\n");
  return 0;
}
