// trace_signal.c - run with OMP_OVNI=1 by tests/trace.rs: the primary thread sends itself
// SIGTERM inside a parallel region while the others wait in a barrier; the process ends with
// the signal and the trace must still be readable and valid.
#include <omp.h>
#include <signal.h>
int main(void) {
#pragma omp parallel num_threads(3)
  {
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < 30; i++) {
    }
    if (omp_get_thread_num() == 0) raise(SIGTERM);
#pragma omp barrier
  }
  return 0;
}
