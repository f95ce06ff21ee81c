// trace_nested.c - run with OMP_OVNI=1 by tests/trace.rs: a region of 2 threads, each starting
// a nested region of 2 threads (max-active-levels 2), each thread counting once.
#include <omp.h>
int main(void) {
  int count = 0;
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
  __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
  return count == 4 ? 0 : 1;
}
