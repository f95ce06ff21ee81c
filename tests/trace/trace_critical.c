// trace_critical.c - run with OMP_OVNI=1 by tests/trace.rs: one thread enters a critical
// section three times; the first use of the name installs its lock, the other two take it at
// once, and no release has a waiter to wake.
#include <omp.h>
static volatile long sink;
int main(void) {
#pragma omp parallel num_threads(1)
  for (int k = 0; k < 3; k++) {
#pragma omp critical
    sink += 1;
  }
  return sink == 3 ? 0 : 1;
}
