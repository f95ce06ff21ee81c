// archer: race
// A task and its creator write the same variable before the taskwait. The creator waits until
// another thread runs the task (a relaxed atomic: no synchronisation ThreadSanitizer sees),
// and both write many times.
#include <stdio.h>
static int started;
static volatile int x;
int main(void) {
#pragma omp parallel
#pragma omp single
  {
#pragma omp task
    {
      __atomic_store_n(&started, 1, __ATOMIC_RELAXED);
      for (int i = 0; i < 100000; i++)
        x = i;
    }
    while (!__atomic_load_n(&started, __ATOMIC_RELAXED)) {
    }
    for (int i = 0; i < 100000; i++)
      x = -i;
#pragma omp taskwait
  }
  printf("%d\n", x);
  return 0;
}
