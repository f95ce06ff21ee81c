// trace_tasks.c - run with OMP_OVNI=1 by tests/trace.rs: one thread creates 20 tasks in a
// dependence chain and 20 free tasks, then waits for them (taskwait).
#include <omp.h>
int main(void) {
  int x = 0, done = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < 20; i++) {
#pragma omp task depend(inout : x) shared(x)
      x++;
#pragma omp task shared(done)
      __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
    }
#pragma omp taskwait
  }
  return x == 20 && done == 20 ? 0 : 1;
}
