/* Two tasks, then a taskwait depend on what the first writes: the wait waits for it alone. */
#include <stdio.h>

int main(void) {
  int x = 0, y = 0, seen = -1;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : x) shared(x)
    x = 1;
#pragma omp task depend(out : y) shared(y)
    y = 2;
#pragma omp taskwait depend(in : x)
    seen = x;
  }
  printf("x=%p value=%d\n", (void *)&x, seen);
  return seen == 1 ? 0 : 1;
}
