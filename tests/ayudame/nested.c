/* A task whose two children depend on each other, and a sibling after it. */
#include <stdio.h>
#include "gate.h"

static int outer, inner;

int main(void) {
  int a = 0, b = 0, p = 0;
#pragma omp parallel
#pragma omp single
  {
    gate_init(&outer);
    gate_init(&inner);
#pragma omp task depend(out : p) shared(a, b, p)
    {
      gate_wait(&outer);
#pragma omp task depend(out : a) shared(a)
      { gate_wait(&inner); a = 1; }
#pragma omp task depend(in : a) shared(a, b)
      { b = a + 1; }
      gate_release(&inner);
#pragma omp taskwait
      p = b;
    }
#pragma omp task depend(in : p) shared(p)
    { p += 10; }
    gate_release(&outer);
  }
  printf("a=%p p=%p value=%d\n", (void *)&a, (void *)&p, p);
  return p == 12 ? 0 : 1;
}
