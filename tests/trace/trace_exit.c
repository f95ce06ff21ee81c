// trace_exit.c - run with OMP_OVNI=1 by tests/trace.rs: the primary thread calls exit() inside
// a parallel region while the other threads wait in a barrier; the trace must still be
// readable and valid, with every thread's events up to that point.
#include <omp.h>
#include <stdlib.h>
int main(void) {
#pragma omp parallel num_threads(3)
  {
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < 30; i++) {
    }
    if (omp_get_thread_num() == 0) exit(0);
#pragma omp barrier
  }
  return 1;
}
