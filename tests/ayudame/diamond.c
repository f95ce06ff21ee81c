/* A diamond: top writes a; left and right read a and write b and c; bottom reads both. */
#include <stdio.h>
#include "gate.h"

static int gate;

int main(void) {
  int a = 0, b = 0, c = 0, d = 0;
#pragma omp parallel
#pragma omp single
  {
    gate_init(&gate);
#pragma omp task depend(out : a) shared(a)
    { gate_wait(&gate); a = 1; }
#pragma omp task depend(in : a) depend(out : b) shared(a, b)
    { gate_wait(&gate); b = a + 1; }
#pragma omp task depend(in : a) depend(out : c) shared(a, c)
    { gate_wait(&gate); c = a + 2; }
#pragma omp task depend(in : b, c) shared(b, c, d)
    { gate_wait(&gate); d = b + c; }
    gate_release(&gate);
  }
  printf("a=%p b=%p c=%p d=%d\n", (void *)&a, (void *)&b, (void *)&c, d);
  return d == 5 ? 0 : 1;
}
