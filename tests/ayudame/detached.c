/* A detached task whose event a later task fulfils (once the detached task's body has run,
 * in a team of more than one), and a task that depends on it. */
#include <stdio.h>
#include "gate.h"

static int gate, ran;

int main(void) {
  int a = 0, b = 0;
#pragma omp parallel
#pragma omp single
  {
    omp_event_handle_t ev;
    gate_init(&gate);
#pragma omp task detach(ev) depend(out : a) shared(a)
    { a = 1; __atomic_store_n(&ran, 1, __ATOMIC_SEQ_CST); }
#pragma omp task depend(in : a) shared(a, b)
    { b = a + 1; }
#pragma omp task firstprivate(ev)
    {
      gate_wait(&gate);
      while (omp_get_num_threads() > 1 && !__atomic_load_n(&ran, __ATOMIC_SEQ_CST))
        sched_yield();
      omp_fulfill_event(ev);
    }
    gate_release(&gate);
  }
  printf("a=%p value=%d\n", (void *)&a, b);
  return b == 2 ? 0 : 1;
}
