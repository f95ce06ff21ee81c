/* A chain of 10 tasks on one variable, each with its own priority. */
#include <stdio.h>
#include "gate.h"

static int gate;

int main(void) {
  int x = 0;
#pragma omp parallel
#pragma omp single
  {
    gate_init(&gate);
    for (int i = 0; i < 10; i++) {
#pragma omp task depend(inout : x) shared(x) priority(i % 3)
      { gate_wait(&gate); x = x * 2 + 1; }
    }
    gate_release(&gate);
  }
  printf("x=%p value=%d\n", (void *)&x, x);
  return x == 1023 ? 0 : 1;
}
