/* A chain of 20 tasks on one variable, and a task that checks it after them. */
#include <stdio.h>

int main(void) {
  int x = 0, checked = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int i = 0; i < 20; i++) {
#pragma omp task depend(inout : x) shared(x)
      x++;
    }
#pragma omp task depend(in : x) shared(x, checked)
    checked = x == 20;
  }
  printf("x=%d\n", x);
  return checked ? 0 : 1;
}
