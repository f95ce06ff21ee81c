/* Groups of tasks on one variable: a writer, a mutexinoutset group, a reader, an inoutset
 * group, a writer. The runtime closes each group behind a node of its own; the edges told are
 * those from the group's members. */
#include <stdio.h>
#include "gate.h"

static int gate;

int main(void) {
  int x = 0, sum = 0;
#pragma omp parallel
#pragma omp single
  {
    gate_init(&gate);
#pragma omp task depend(out : x) shared(x)
    { gate_wait(&gate); x = 1; }
#pragma omp task depend(mutexinoutset : x) shared(x)
    { x += 2; }
#pragma omp task depend(mutexinoutset : x) shared(x)
    { x += 4; }
#pragma omp task depend(in : x) shared(x, sum)
    { sum = x; }
#pragma omp task depend(inoutset : x) shared(x)
    { __atomic_fetch_add(&x, 8, __ATOMIC_SEQ_CST); }
#pragma omp task depend(inoutset : x) shared(x)
    { __atomic_fetch_add(&x, 16, __ATOMIC_SEQ_CST); }
#pragma omp task depend(out : x) shared(x)
    { x += 100; }
    gate_release(&gate);
  }
  printf("x=%p sum=%d value=%d\n", (void *)&x, sum, x);
  return sum == 7 && x == 131 ? 0 : 1;
}
