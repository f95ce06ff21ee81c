// archer: race
// Two sibling tasks touch x with no dependence between them (out x, in y). Each waits until
// the other has started (relaxed atomics: no synchronisation ThreadSanitizer sees), so two
// threads run them at once.
#include <stdio.h>
static int f1, f2;
static volatile int x;
int main(void) {
  int y = 0, r = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : x)
    {
      __atomic_store_n(&f1, 1, __ATOMIC_RELAXED);
      while (!__atomic_load_n(&f2, __ATOMIC_RELAXED)) {
      }
      for (int i = 0; i < 100000; i++)
        x = i;
    }
#pragma omp task depend(in : y) shared(y, r)
    {
      __atomic_store_n(&f2, 1, __ATOMIC_RELAXED);
      while (!__atomic_load_n(&f1, __ATOMIC_RELAXED)) {
      }
      for (int i = 0; i < 100000; i++)
        r += x + y;
    }
  }
  printf("%d\n", r);
  return 0;
}
