// trace_task_alloc.c - run with OMP_OVNI=1 by tests/trace.rs: one thread creates 10 tasks in a
// team of one, where each runs at once, so every task after the first takes the block its
// predecessor gave back to the thread's own list.
#include <omp.h>
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(1)
  for (int i = 0; i < 10; i++) {
#pragma omp task shared(n)
    n++;
  }
  return n == 10 ? 0 : 1;
}
