// trace_ws.c - run with OMP_OVNI=1 by tests/trace.rs, which checks the recorded states:
// a static loop (one chunk per thread), a dynamic loop of exactly 10 chunks, a single and two
// critical sections per thread, in a team of 3.
#include <omp.h>
#include <stdio.h>
static volatile long sink;
int main(void) {
  long sum = 0;
#pragma omp parallel num_threads(3)
  {
#pragma omp for schedule(static)
    for (int i = 0; i < 30; i++) sink += i;
#pragma omp for schedule(dynamic, 10)
    for (int i = 0; i < 100; i++) sink += i;
#pragma omp single
    sink = 1;
    for (int k = 0; k < 2; k++) {
#pragma omp critical
      sum += 1;
    }
  }
  return sum == 6 ? 0 : 1;
}
