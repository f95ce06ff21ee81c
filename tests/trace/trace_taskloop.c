// trace_taskloop.c - run with OMP_OVNI=1 by tests/trace.rs: in a team of one thread, a
// taskloop of 12 one-iteration chunks (every chunk runs in place on the encountering thread)
// and a taskloop of 3 chunks of 4 iterations whose chunks each create one task.
#include <omp.h>
int main(void) {
  int hits[12] = {0};
  int fp = 5, bad = 0, made = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
#pragma omp taskloop grainsize(1) firstprivate(fp) shared(hits, bad)
    for (int i = 0; i < 12; i++) {
      if (fp != 5) bad++;
      fp++;
      hits[i]++;
    }
#pragma omp taskloop num_tasks(3) shared(made)
    for (int i = 0; i < 12; i++) {
      if (i % 4 == 0) {
#pragma omp task shared(made)
        made++;
      }
    }
  }
  for (int i = 0; i < 12; i++)
    if (hits[i] != 1) bad++;
  return bad == 0 && made == 3 ? 0 : 1;
}
